"""Profile factors and lab.node_profiles in specs: levels, kinds, the resets they need."""

from __future__ import annotations

import pytest

from casslab.experiment.design import plan, reset_needed
from casslab.experiment.profilefactors import cell_node_profiles
from casslab.experiment.spec import SpecError, parse_spec

SPEC = """\
lab: {nodes: 3, profile: rpi2, node_profiles: {node3: rpi3}}
workload: ycsb-a
factors:
  - {name: profile.memory_mib, levels: [1024, 2GiB]}
  - {name: profile.cpu_cores, levels: [0.5, 1]}
design: {trials: 2}
"""


def test_levels_take_the_fields_unit_or_a_unit_of_their_own() -> None:
    spec = parse_spec("""\
workload: ycsb-a
factors:
  - {name: profile.memory_mib, levels: [1024, 2GiB, 1536MiB]}
  - {name: profile.heap_mib, levels: [256, 512MiB]}
  - {name: profile.cpu_cores, levels: [0.6, 2]}
  - {name: profile.disk_read_mb_s, levels: [18, 40MB/s, 80Mbit]}
  - {name: profile.disk_write_mb_s, levels: [10.5]}
""")
    got = {f.name: f.levels for f in spec.factors}
    assert got["profile.memory_mib"] == (1024, 2048, 1536)
    assert got["profile.heap_mib"] == (256, 512)
    assert got["profile.cpu_cores"] == (0.6, 2.0)
    assert got["profile.disk_read_mb_s"] == (18.0, 40.0, 10.0)
    assert got["profile.disk_write_mb_s"] == (10.5,)


@pytest.mark.parametrize(("name", "level", "message"), [
    ("profile.memory_mib", "1.5KiB", "'1.5KiB' is not a whole number of MiB"),
    ("profile.memory_mib", 100, "100 is out of range .at least 512 MiB."),
    ("profile.heap_mib", 128, "128 is out of range .at least 256 MiB."),
    ("profile.memory_mib", "lots", "'lots' is not a size"),
    ("profile.cpu_cores", 0, "0 is not a number > 0"),
    ("profile.cpu_cores", "1core", "'1core' is not a number > 0"),
    ("profile.disk_read_mb_s", "40mbps", "'40mbps' is ambiguous"),
    ("profile.disk_write_mb_s", -1, "-1 is not a number > 0"),
])
def test_a_bad_level_is_one_line_naming_factor_level_and_what_is_valid(
        name: str, level: object, message: str) -> None:
    text = f"workload: ycsb-a\nfactors:\n  - {{name: {name}, levels: [{level}]}}\n"
    with pytest.raises(SpecError, match=message) as info:
        parse_spec(text)
    msg = str(info.value)
    assert "\n" not in msg and f"(factor {name})" in msg and "(valid: " in msg


def test_an_unknown_profile_field_lists_the_profile_factors() -> None:
    with pytest.raises(SpecError, match=r"unknown factor 'profile.memory'.*profile.<memory_mib"):
        parse_spec("workload: ycsb-a\nfactors:\n  - {name: profile.memory, levels: [1]}\n")


def test_memory_and_heap_rebuild_the_lab_cpu_and_disk_do_not() -> None:
    spec = parse_spec(SPEC)
    kinds = {f.name: f.kind for f in spec.factors}
    assert kinds == {"profile.memory_mib": "lab", "profile.cpu_cores": "limits"}
    base = {"profile.memory_mib": 1024, "profile.cpu_cores": 0.5}
    f = spec.factors
    assert reset_needed(base, {**base, "profile.memory_mib": 2048}, f, "none") == "rebuild"
    assert reset_needed(base, {**base, "profile.cpu_cores": 1.0}, f, "none") == "none"
    assert reset_needed(base, {**base, "profile.cpu_cores": 1.0}, f, "truncate") == "truncate"


def test_a_two_level_memory_factor_builds_the_lab_once_per_level() -> None:
    trials = plan(parse_spec(SPEC.replace("trials: 2", "trials: 2, randomize: true")))
    assert sum(t.reset == "rebuild" for t in trials) == 2
    assert len(trials) == 8


def test_a_cells_profile_fields_and_the_live_ones() -> None:
    cell = parse_spec(SPEC).cell({"nodes": 3, "profile.memory_mib": 2048,
                                  "profile.cpu_cores": 0.5, "profile.disk_read_mb_s": 18.0})
    assert cell.lab.fields == {"memory_mib": 2048, "cpu_cores": 0.5, "disk_read_mb_s": 18.0}
    assert cell.limits == {"cpu_cores": 0.5, "disk_read_mb_s": 18.0}


def test_node_profiles_in_the_spec_and_per_cell() -> None:
    spec = parse_spec(SPEC)
    assert spec.lab.node_profiles == {"node3": "rpi3"}
    assert cell_node_profiles({"node3": "rpi3", "node6": "rpi3"}, 3) == {"node3": "rpi3"}


@pytest.mark.parametrize(("lab", "message"), [
    ("{nodes: 3, node_profiles: {node4: rpi3}}", r"lab.node_profiles.node4: 'node4' is not a "
                                                 r"node of the lab \(valid: node1 ... node3\)"),
    ("{nodes: 3, node_profiles: {node2: rpi9}}", r"'rpi9' is not a valid profile"),
    ("{nodes: 3, node_profiles: {sixth: rpi3}}", r"'sixth' is not a node"),
    ("{nodes: 3, node_profiles: [rpi3]}", r"must be a mapping of node names to profiles"),
])
def test_bad_node_profiles_name_the_node_or_profile(lab: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_spec(f"lab: {lab}\nworkload: ycsb-a\n")


def test_node_profiles_may_name_nodes_of_the_largest_node_level() -> None:
    spec = parse_spec("lab: {node_profiles: {node6: rpi3}}\nworkload: ycsb-a\n"
                      "factors:\n  - {name: nodes, levels: [1, 6]}\n")
    assert spec.lab.node_profiles == {"node6": "rpi3"}
