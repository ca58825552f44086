"""Profile factors of a campaign and the lab's per-node profiles.

`profile.<field>` factors set one field of the lab's hardware profile over every node
(seed 000 swept VM memory 1024 -> 2048 MB); `lab.node_profiles` gives single nodes a
profile of their own (its sixth node was a Pi 3 among Pi 2s).

What a change of a level costs: memory and heap only take effect when the JVM starts
again with new cgroup limits and -Xmx, so they are `lab` factors (a rebuild); the CPU
quota and disk bandwidth are written on the running nodes' cgroups, so they are
`limits` factors, applied live between trials (the runner rebuilds instead when the
lab cannot; see `casslab.lab.Lab.update_limits`).
"""

from __future__ import annotations

from typing import Any

from casslab.core.errors import UsageError
from casslab.core.specio import Path_, fmt_path
from casslab.core.specio import V as _V
from casslab.core.units import parse_rate_bit_s, parse_size_bytes
from casslab.hardware import BUILTIN_PROFILES, LIVE_FIELDS

# Field -> what its levels are, for the error messages (the registry,
# casslab.experiment.factors, names the factors `profile.<field>` after these).
FIELDS = {
    "memory_mib": "MiB (a number) or a size, e.g. 2048 or 2GiB",
    "heap_mib": "MiB (a number) or a size, e.g. 512 or 512MiB",
    "cpu_cores": "cores of this machine, a number > 0, e.g. 0.6",
    "disk_read_mb_s": "MB/s (a number) or a rate, e.g. 18 or 18MB/s",
    "disk_write_mb_s": "MB/s (a number) or a rate, e.g. 10 or 10MB/s",
}
# Cassandra does not start with less heap; a node needs its heap and ~256 MiB besides.
MIN_HEAP_MIB = 256
MIN_MEMORY_MIB = 512
MAX_MIB = 2**30
MAX_CORES = 4096.0
MAX_MB_S = 1e6


def level(v: _V, field: str, value: Any, path: Path_) -> float | int:
    """One level of the factor of profile field `field` in the field's unit (MiB, cores,
    MB/s); raises the spec's error naming the level and what is valid."""
    try:
        if field in ("memory_mib", "heap_mib"):
            lo = MIN_MEMORY_MIB if field == "memory_mib" else MIN_HEAP_MIB
            return _mib(value, fmt_path(path), lo)
        if field == "cpu_cores":
            return _number(value, fmt_path(path), MAX_CORES)
        return _mb_s(value, fmt_path(path))
    except UsageError as exc:
        detail = str(exc).split(": ", 1)[-1]
        raise v.doc.error(path, f"{detail} (valid: {FIELDS[field]})") from None


def _mib(value: Any, where: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"{where}: {value!r} is not a whole number of MiB")
    mib = value if isinstance(value, int) else parse_size_bytes(value, where, bare="MiB") / 2**20
    if mib != int(mib):
        raise UsageError(f"{where}: {value!r} is not a whole number of MiB")
    if not lo <= mib <= MAX_MIB:
        raise UsageError(f"{where}: {value!r} is out of range (at least {lo} MiB)")
    return int(mib)


def _number(value: Any, where: str, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= hi:
        raise UsageError(f"{where}: {value!r} is not a number > 0 and <= {hi:g}")
    return float(value)


def _mb_s(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise UsageError(f"{where}: {value!r} is not a rate")
    if isinstance(value, int | float):
        return _number(value, where, MAX_MB_S)
    return _number(parse_rate_bit_s(value, where) / 8e6, where, MAX_MB_S)


def node_profiles(v: _V, raw: Any, path: Path_, max_nodes: int) -> dict[str, str]:
    """`lab.node_profiles: {node6: rpi3}`: node names (node1 ... node<max_nodes>) to
    built-in profiles. A cell with fewer nodes leaves out the nodes it lacks."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise v.doc.error(path, "must be a mapping of node names to profiles (e.g. "
                          "{node6: rpi3})")
    valid = [f"node{i}" for i in range(1, max_nodes + 1)]
    out: dict[str, str] = {}
    for node, profile in raw.items():
        if node not in valid:
            shown = valid[0] if len(valid) == 1 else f"{valid[0]} ... {valid[-1]}"
            raise v.doc.error((*path, str(node)), f"{node!r} is not a node of the lab "
                              f"(valid: {shown})")
        out[node] = v.choice(profile, (*path, node), list(BUILTIN_PROFILES), "profile")
    return out


def cell_node_profiles(node_profiles_: dict[str, str], nodes: int) -> dict[str, str]:
    """The entries of `lab.node_profiles` for nodes a lab of `nodes` nodes has."""
    return {k: p for k, p in node_profiles_.items() if int(k.removeprefix("node")) <= nodes}


def live_fields(fields: dict[str, float | int]) -> dict[str, float | int]:
    """The profile fields of a cell a running lab takes without a restart."""
    return {k: v for k, v in fields.items() if k in LIVE_FIELDS}
