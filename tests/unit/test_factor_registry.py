"""The factor registry (casslab.experiment.factors) is the one reader of factor names:
no other module of src/casslab tests a name's prefix, splits it on its dots, looks a
level up by a literal factor name or compares a factor's name with a literal. The scan
is checked on planted code, so it cannot pass by matching nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from casslab.experiment.factors import registry
from casslab.experiment.factors.cell import Defaults, cell_of
from casslab.net.spec import NetSpec

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "casslab"
REGISTRY = SRC / "experiment" / "factors"
PREFIXES = "network|set|option|profile|table"
# What reading a factor's name as a string looks like, each with what it catches.
PATTERNS = {
    "a literal starting with a factor prefix (startswith, removeprefix, slicing)":
        re.compile(rf"""(?<![\w"'])[fr]?["'](?:{PREFIXES})\.(?!(?:py|yaml|yml|json)\b)"""),
    "a level looked up by a literal factor name":
        re.compile(r"""\w*params\s*(?:\.get\(|\[)\s*["']"""),
    "a factor's name compared with a literal":
        re.compile(r"""\b(?:f|factor)\.name\s*(?:==|!=|in)\s*\(?\s*["']"""),
    "a factor name split on its dots":
        re.compile(r"""\b(?:name|k|key|factor)\.r?split\(\s*["']\.["']"""),
}


# Readings of a dotted name that is no factor's, each with why.
ALLOWED = {
    ("src/casslab/cassandra/compaction.py", "    tail = name.rsplit(\".\", 1)[-1]"):
        "a Java class name (org.apache...LeveledCompactionStrategy), not a factor",
}


def scan(text: str) -> list[tuple[int, str]]:
    """(line number, what) of every reading of a factor name in `text`."""
    hits = []
    for no, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        hits += [(no, what) for what, pattern in PATTERNS.items() if pattern.search(code)]
    return hits


def test_no_module_outside_the_registry_reads_factor_names() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if REGISTRY in path.parents:
            continue
        rel, lines = str(path.relative_to(ROOT)), path.read_text().splitlines()
        found += [f"{rel}:{no}: {what}" for no, what in scan(path.read_text())
                  if (rel, lines[no - 1]) not in ALLOWED]
    assert not found, "factor names read outside the registry:\n" + "\n".join(found)


@pytest.mark.parametrize("planted", [
    'if name.startswith("network."):',
    "overrides = {k[4:]: v for k, v in params.items() if k.startswith('set.')}",
    'flag = name.removeprefix("option.")',
    'fields = {k: v for k, v in params.items() if k in (f"profile.{x}" for x in FIELDS)}',
    'is_table = name[:6] == "table."',
    'nodes = int(params.get("nodes", spec.lab.nodes))',
    'level = t.cell_params["copy"]',
    'if f.name == "rf":',
    "if f.name in ('cl_read', 'cl_write'):",
    'scope, param = k.split(".")[1:]',
    'group = name.rsplit(".", 1)[1]',
])
def test_the_scan_catches_a_planted_reading_of_a_factor_name(planted: str) -> None:
    hits = scan(f"x = 1\n    {planted}\n")
    assert hits and {no for no, _ in hits} == {2}, planted


def test_the_scan_leaves_what_is_no_factor_name_alone() -> None:
    text = ('path = "profile.yaml"\nname = cls.rsplit(".", 1)[-1]\n'
            'msg = f"bad value (valid: set.*, network)"\n# startswith("network.")\n')
    assert scan(text) == []


def defaults(**over: object) -> Defaults:
    base: dict[str, object] = dict(
        nodes=3, profile="host", runtime="process", overrides={"a": 1}, node_profiles={},
        network={"groups": {"edge": {"node1-node2": 5}}}, workload="ycsb-a", records=100,
        options={})
    return Defaults(**{**base, **over})  # type: ignore[arg-type]


def test_a_cells_levels_land_in_its_typed_fields() -> None:
    cell = cell_of({"nodes": 2, "profile.memory_mib": 2048, "profile.cpu_cores": 0.5,
                    "set.concurrent_reads": 8, "network.scale.edge": 50,
                    "network.client.delay_ms": 2, "option.ops-per-s": 10, "cl": "ONE",
                    "table.comment": "x", "tuner": "off", "copy": "A"}, defaults())
    assert cell.lab.nodes == 2 and cell.lab.profile == "host"
    assert cell.lab.fields == {"memory_mib": 2048, "cpu_cores": 0.5}
    assert cell.limits == {"cpu_cores": 0.5}
    assert cell.lab.overrides == {"a": 1, "concurrent_reads": 8}
    assert cell.net == NetSpec.from_mapping({"links": {"client-node1": {"delay_ms": 2},
                                                       "client-node2": {"delay_ms": 2},
                                                       "node1-node2": {"delay_ms": 7.5}}},
                                            "network")
    assert cell.load["cl-read"] == cell.load["cl-write"] == "ONE"
    assert cell.load["ops-per-s"] == 10 and cell.load["records"] == 100
    assert [t.option for t, _ in cell.tables] == ["comment"]
    assert cell.tuner == "off" and cell.relative == {}


def test_a_relative_level_waits_for_its_peak() -> None:
    cell = cell_of({"rate": "50%"}, defaults())
    assert cell.relative == {"rate": "50%"} and "rate" not in cell.load
    resolved = cell.with_levels({"rate": 1200.0})
    assert resolved.load["rate"] == 1200.0 and resolved.relative == {}


@pytest.mark.parametrize(("name", "kind", "change"), [
    ("nodes", "lab", "rebuild"), ("set.num_tokens", "lab", "rebuild"),
    ("profile.memory_mib", "lab", "rebuild"), ("profile.cpu_cores", "limits", "live"),
    ("network.scale.edge", "network", "live"), ("network.node1-node2.loss_pct", "network",
                                                 "live"),
    ("table.compression@t", "schema", "reload"), ("compaction", "schema", "reload"),
    ("option.ops-per-s", "workload", "live"), ("tuner", "tuner", "reload"),
    ("copy", "copy", "none"),
])
def test_each_factor_kind_is_declared_with_its_change(name: str, kind: str,
                                                      change: str) -> None:
    found = registry.lookup(name)
    assert found is not None
    assert (found[0].kind, found[0].change) == (kind, change)


@pytest.mark.parametrize("name", ["profile.foo", "network.scale.Edge", "option.X", "node"])
def test_unknown_names_belong_to_no_kind(name: str) -> None:
    assert registry.factor_kind(name) is None
