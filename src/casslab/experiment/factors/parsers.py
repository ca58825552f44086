"""The level parsers of the factor registry: one per kind of level, each returning the
level as the cell keeps it or raising the spec's one-line error (file, line, field, what
is valid). They know values, not factor names: the registry hands each the part of the
name it needs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from casslab.cassandra import compaction
from casslab.core.specio import Path_, V
from casslab.experiment import linkscale
from casslab.lab.state import MAX_NODES
from casslab.load.options import consistency_levels
from casslab.load.runner import WORKLOADS
from casslab.net.linkprofiles import BUILTIN_LINK_PROFILES as NET_PROFILES

NETWORK_PARAMS = {"delay_ms": (0.0, 10_000.0), "jitter_ms": (0.0, 10_000.0),
                  "loss_pct": (0.0, 100.0), "rate_mbit": (0.001, 100_000.0)}
NETWORK_SCOPES = ("all", "client", "nodes")

TUNER_OFF = "off"
TUNER_BUILTIN = ("seed003",)  # casslab.tune.rules.seed003_rules
# seed003x<N>: the same rules with TTLs and windows N times shorter (tune rules
# --time-scale 1/N; N up to 60, TWCS's 1-minute window), for scenarios run in
# compressed time whose table TTLs are compressed alike.
SEED003_SCALED = re.compile(r"^seed003x([1-9][0-9]?)$")
MAX_TIME_DIVISOR = 60
RULES_SUFFIXES = (".yaml", ".yml", ".json")
TUNER_VALID = ("off, seed003, seed003x<N> (its TTLs and windows N times shorter, N 2-60) or "
               "a rules file (.yaml, .yml, .json) as `casslab tune --rules` takes")


def time_divisor(level: str) -> int | None:
    """N of a built-in `seed003x<N>` level (2..60), else None."""
    m = SEED003_SCALED.match(level)
    n = int(m.group(1)) if m else 0
    return n if 2 <= n <= MAX_TIME_DIVISOR else None


def node_count(v: V, value: Any, path: Path_) -> int:
    return v.integer(value, path, 1, MAX_NODES)


def link_param(v: V, param: str, value: Any, path: Path_) -> float:
    lo, hi = NETWORK_PARAMS[param]
    return v.number(value, path, lo, hi)


def network_value(v: V, value: Any, path: Path_) -> Any:
    """A level of factor `network` (or `lab.network`): a link profile name, or a mapping
    of fields, scopes, a profile and link groups."""
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
            link_param(v, key, val, (*path, key))
        else:
            sub = v.mapping(val, (*path, key), tuple(NETWORK_PARAMS))
            for k2, val2 in sub.items():
                link_param(v, k2, val2, (*path, key, k2))
    return m


def workload_name(v: V, value: Any, path: Path_, base_dir: Path | None) -> str:
    """A built-in workload, or a cassandra-stress user profile (its absolute path)."""
    if isinstance(value, str) and value.endswith((".yaml", ".yml")):
        p = Path(value) if Path(value).is_absolute() else (base_dir or Path.cwd()) / value
        if not p.exists():
            raise v.doc.error(path, f"user profile {value} does not exist (looked at {p})")
        return str(p.resolve())
    return v.choice(value, path, list(WORKLOADS), "workload (or a user profile .yaml)")


def compaction_level(v: V, value: Any, path: Path_) -> str:
    ok = isinstance(value, str) and (value.startswith("{") or compaction.is_level(value))
    if not ok:
        raise v.doc.error(path, f"{value!r} is not a compaction (valid: "
                          f"{compaction.LEVEL_SYNTAX}, or a CQL map '{{...}}')")
    return str(value)


def consistency(v: V, value: Any, path: Path_) -> str:
    # casslab-load's levels (no SERIAL: it cannot use them), spelled as it takes them.
    return v.choice(value.upper().replace("-", "_") if isinstance(value, str) else value,
                    path, list(consistency_levels()), "consistency level")


def copy_name(v: V, value: Any, path: Path_) -> str:
    if isinstance(value, dict | list | bool) or value is None:
        raise v.doc.error(path, f"{value!r}: a copy's level is a name (e.g. A, B)")
    return str(value)


def scalar(v: V, value: Any, path: Path_) -> Any:
    """A level passed on as written (a casslab-load option, a cassandra.yaml value)."""
    if isinstance(value, dict | list):
        raise v.doc.error(path, f"{value!r}: a casslab-load option takes a scalar")
    return value


def tuner_level(value: Any, base_dir: Path | None) -> str:
    """A `tuner` level as the runner keeps it: off, a built-in rules name, or a rules
    file's absolute path (relative ones are read from the spec's directory). Raises
    ValueError naming the level and the valid ones."""
    if value is False:  # YAML 1.1 reads a bare `off` as false
        return TUNER_OFF
    if value == TUNER_OFF or value in TUNER_BUILTIN or (
            isinstance(value, str) and time_divisor(value) is not None):
        return str(value)
    if isinstance(value, str) and value.endswith(RULES_SUFFIXES):
        p = Path(value) if Path(value).is_absolute() else (base_dir or Path.cwd()) / value
        if not p.is_file():
            raise ValueError(f"rules file {value} does not exist (looked at {p}; valid: "
                             f"{TUNER_VALID})")
        return str(p.resolve())
    raise ValueError(f"{value!r} is not a tuner level (valid: {TUNER_VALID})")
