"""The factor grammar: which names are factors, what each touches (its kind), and the
parser of each factor's levels."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from casslab.cassandra import compaction
from casslab.core.specio import Path_, V, fmt_path
from casslab.experiment import linkscale, profilefactors, tableopts
from casslab.experiment.beside import TUNER_FACTOR, tuner_level
from casslab.experiment.labels import parse_labels
from casslab.experiment.levels import is_relative, relative_fraction
from casslab.experiment.spec.model import Factor, LabSpec, SpecError
from casslab.hardware import BUILTIN_PROFILES
from casslab.lab.state import MAX_NODES, RUNTIME_NAMES
from casslab.load.options import CONSISTENCY_LEVELS
from casslab.load.runner import WORKLOADS
from casslab.net.linkprofiles import BUILTIN_LINK_PROFILES as NET_PROFILES

NETWORK_PARAMS = {"delay_ms": (0.0, 10_000.0), "jitter_ms": (0.0, 10_000.0),
                  "loss_pct": (0.0, 100.0), "rate_mbit": (0.001, 100_000.0)}
NETWORK_SCOPES = ("all", "client", "nodes")
# Workload options that take a concurrency or a rate and may be searched or be relative.
# `threads` is casslab-load's --threads: N closed-loop clients of one request each (YCSB's
# -threads, cassandra-stress's -rate threads=N), so seed 004's 450 and 150 are levels.
CONCURRENCY = ("in_flight", "workers", "threads")
SEARCHABLE = (*CONCURRENCY, "rate")

FACTOR_KEYS = ("name", "levels", "label", "labels")

FACTOR_DOC = ("nodes, profile, profile.<memory_mib|heap_mib|cpu_cores|disk_read_mb_s|"
              "disk_write_mb_s>, runtime, set.<cassandra.yaml key>, network, "
              "network[.all|client|nodes|nodeA-nodeB].<delay_ms|jitter_ms|loss_pct|rate_mbit>, "
              "network.scale.<group of lab.network.groups>, "
              "workload, records, rf, compaction, cl, cl_read, cl_write, in_flight, workers, "
              "threads, rate, option.<casslab-load option>, tuner, copy (A/A: levels that "
              "change nothing), " + tableopts.FACTOR_DOC)
# An A/A factor: its levels are names of identical copies of every cell (casslab
# calibrate; an A/A pair beside real factors). Nothing is applied for it.
COPY_FACTOR = "copy"


def factor_kind(name: str) -> str | None:
    """lab, limits, network, schema, tuner or workload; None for an unknown factor name."""
    if name in ("nodes", "profile", "runtime") or name.startswith("set."):
        return "lab"
    if name.startswith(profilefactors.PREFIX):
        return profilefactors.factor_kind(name)
    if linkscale.is_factor(name):
        return "network"
    if name == "network" or re.fullmatch(
            r"network(\.(all|client|nodes|node\d+-node\d+))?\.(delay_ms|jitter_ms|loss_pct|"
            r"rate_mbit)", name):
        return "network"
    if name in ("workload", "records", "rf", "compaction") or tableopts.is_table_factor(name):
        return "schema"
    if name in ("cl", "cl_read", "cl_write", *SEARCHABLE):
        return "workload"
    if re.fullmatch(r"option\.[a-z][a-z0-9-]*", name):
        return "workload"
    if name == TUNER_FACTOR:  # runs beside the load; the keyspace it altered is recreated
        return "tuner"
    if name == COPY_FACTOR:
        return "copy"
    return None


def parse_factors(v: V, raw: Any, lab: LabSpec, has_search: bool,
             base_dir: Path | None) -> list[Factor]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise v.doc.error(("factors",), "must be a list of {name, levels} (e.g. "
                          "`- {name: nodes, levels: [1, 3]}`)")
    out: list[Factor] = []
    for i, item in enumerate(raw):
        path: Path_ = ("factors", i)
        m = v.mapping(item, path, FACTOR_KEYS)
        if "name" not in m:
            raise v.doc.error((*path, "name"), f"is required (valid: {FACTOR_DOC})")
        name = m["name"]
        kind = factor_kind(name) if isinstance(name, str) else None
        if kind is None:
            raise v.doc.error((*path, "name"), f"unknown factor {name!r} (valid: {FACTOR_DOC})")
        if kind == "schema" and tableopts.is_table_factor(name):
            try:
                tableopts.parse_name(name)
            except tableopts.TableOptionError as exc:
                raise v.doc.error((*path, "name"), str(exc)) from None
        if any(f.name == name for f in out):
            raise v.doc.error((*path, "name"), f"factor {name!r} is listed twice")
        levels = m.get("levels")
        if not isinstance(levels, list) or not levels:
            raise v.doc.error((*path, "levels"), "must be a non-empty list of levels")
        checked_l = []
        for j, lvl in enumerate(levels):
            lpath = (*path, "levels", j)
            try:
                checked_l.append(_level(v, name, lvl, lpath, has_search, base_dir))
            except SpecError as exc:  # say which factor the level belongs to
                where = fmt_path(lpath)
                raise SpecError(str(exc).replace(f" {where}: ", f" {where} (factor {name}): ",
                                                 1)) from None
        checked = tuple(checked_l)
        if len({repr(x) for x in checked}) != len(checked):
            raise v.doc.error((*path, "levels"), "has a level twice")
        label = str(m.get("label") or name)
        labels = parse_labels(v, m.get("labels"), (*path, "labels"), checked)
        out.append(Factor(name, kind, checked, label, labels))
    return out


def _level(v: V, name: str, value: Any, path: Path_, has_search: bool,
           base_dir: Path | None) -> Any:
    if is_relative(value):
        if name not in SEARCHABLE:
            raise v.doc.error(path, f"{value!r}: levels relative to the peak are only for "
                              f"{', '.join(SEARCHABLE)}")
        if not has_search:
            raise v.doc.error(path, f"{value!r} is relative to the peak, but the spec has no "
                              "`search:` section to find it")
        if relative_fraction(value) <= 0:
            raise v.doc.error(path, f"{value!r} must be > 0%")
        return value.strip()
    if name == "nodes":
        return v.integer(value, path, 1, MAX_NODES)
    if name == "profile":
        return v.choice(value, path, list(BUILTIN_PROFILES), "profile")
    if name == "runtime":
        return v.choice(value, path, list(RUNTIME_NAMES), "runtime")
    if name in profilefactors.NAMES:
        return profilefactors.level(v, name, value, path)
    if name == "network":
        return network_value(v, value, path)
    if linkscale.is_factor(name):
        return linkscale.level(v, value, path)
    if name.startswith("network."):
        param = name.rsplit(".", 1)[1]
        lo, hi = NETWORK_PARAMS[param]
        return v.number(value, path, lo, hi)
    if name == "workload":
        return workload_name(v, value, path, base_dir)
    if name == "records":
        return v.integer(value, path, 1)
    if name == "rf":
        return v.integer(value, path, 1, MAX_NODES)
    if name == "compaction":
        ok = isinstance(value, str) and (value.startswith("{") or compaction.is_level(value))
        if not ok:
            raise v.doc.error(path, f"{value!r} is not a compaction (valid: "
                              f"{compaction.LEVEL_SYNTAX}, or a CQL map '{{...}}')")
        return value
    if tableopts.is_table_factor(name):
        try:
            return tableopts.check_level(name, value)
        except tableopts.TableOptionError as exc:
            raise v.doc.error(path, str(exc)) from None
    if name in ("cl", "cl_read", "cl_write"):
        # casslab-load's levels (no SERIAL: it cannot use them), spelled as it takes them.
        return v.choice(value.upper().replace("-", "_") if isinstance(value, str) else value,
                        path, list(CONSISTENCY_LEVELS), "consistency level")
    if name in CONCURRENCY:
        return v.integer(value, path, 1, 100_000)
    if name == "rate":
        return v.number(value, path, 0.0, lo_open=True)
    if name == COPY_FACTOR:
        if isinstance(value, dict | list | bool) or value is None:
            raise v.doc.error(path, f"{value!r}: a copy's level is a name (e.g. A, B)")
        return str(value)
    if name == TUNER_FACTOR:
        try:
            return tuner_level(value, base_dir)
        except ValueError as exc:
            raise v.doc.error(path, str(exc)) from None
    if isinstance(value, dict | list):
        raise v.doc.error(path, f"{value!r}: a casslab-load option takes a scalar")
    return value


def network_value(v: V, value: Any, path: Path_) -> Any:
    profiles = ("none", *NET_PROFILES)
    if isinstance(value, str):
        return v.choice(value, path, profiles, "network profile")
    m = v.mapping(value, path, (*NETWORK_PARAMS, *NETWORK_SCOPES, "profile", "groups"))
    for key, val in m.items():
        if key == "groups":
            linkscale.check_groups(v, val, (*path, key))
        elif key == "profile":
            v.choice(val, (*path, key), profiles, "network profile")
        elif key in NETWORK_PARAMS:
            lo, hi = NETWORK_PARAMS[key]
            v.number(val, (*path, key), lo, hi)
        else:
            sub = v.mapping(val, (*path, key), tuple(NETWORK_PARAMS))
            for k2, val2 in sub.items():
                lo, hi = NETWORK_PARAMS[k2]
                v.number(val2, (*path, key, k2), lo, hi)
    return m


def workload_name(v: V, value: Any, path: Path_, base_dir: Path | None) -> str:
    if isinstance(value, str) and value.endswith((".yaml", ".yml")):
        p = Path(value) if Path(value).is_absolute() else (base_dir or Path.cwd()) / value
        if not p.exists():
            raise v.doc.error(path, f"user profile {value} does not exist (looked at {p})")
        return str(p.resolve())
    return v.choice(value, path, list(WORKLOADS), "workload (or a user profile .yaml)")
