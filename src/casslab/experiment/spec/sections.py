"""The spec's lab, workload (with its warm-up), stop and search sections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casslab.core.specio import Path_, V
from casslab.experiment import profilefactors
from casslab.experiment.factors.parsers import network_value, workload_name
from casslab.experiment.factors.registry import SEARCHABLE
from casslab.experiment.spec.model import (
    DEFAULT_MAX_RESTARTS,
    LabSpec,
    SearchSpec,
    SteadyWarmup,
    StopRule,
    WorkloadSpec,
)
from casslab.hardware import BUILTIN_PROFILES
from casslab.lab.state import DEFAULT_RUNTIME, DEFAULT_TIMEOUT_S, MAX_NODES, RUNTIME_NAMES
from casslab.load.multi import MAX_CLIENTS
from casslab.load.runner import WORKLOADS

# A trial's stop rule: beyond these a value is a typo, not an experiment.
MAX_OPS = 10**12
MAX_TRIAL_S = 7 * 86_400.0

LAB_KEYS = ("nodes", "profile", "node_profiles", "runtime", "network", "set", "timeout_s",
            "backend", "inventory", "max_restarts")
BACKENDS = ("local", "hosts")

WORKLOAD_KEYS = ("name", "records", "prepare", "options", "load_options", "ycsb", "clients",
                 "warmup")
# casslab-load options the runner sets for every trial and load phase (contact points,
# output format, phase, --drop, a client's place and start): refused in a spec's options.
RUNNER_KEYS = ("hosts", "format", "phase", "drop", "client", "start-at")
WARMUP_KEYS = ("until", "max_s")
WARMUP_MODES = ("until-steady",)
# workload.warmup's maximum when the spec gives none: half the trial's duration_s, at
# most this (a trial that has not settled by then is marked, not run longer).
DEFAULT_STEADY_MAX_S = 30.0
YCSB_KEYS = ("file", "props")

STOP_KEYS = ("ops", "duration_s", "timeout_s")
SEARCH_KEYS = ("vary", "start", "multiply", "add", "max_steps", "stop_when", "trials", "ops",
               "duration_s")
STOP_WHEN_KEYS = ("throughput_drop_pct", "p99_ms")


def parse_lab(v: V, raw: Any, base_dir: Path | None) -> LabSpec:
    m = v.mapping(raw, ("lab",), LAB_KEYS)
    backend = v.choice(m.get("backend", "local"), ("lab", "backend"), list(BACKENDS), "backend")
    inventory, inventory_nodes = _inventory(v, m, backend, base_dir)
    nodes = v.integer(m.get("nodes", inventory_nodes or 1), ("lab", "nodes"), 1, MAX_NODES)
    if inventory_nodes is not None and nodes != inventory_nodes:
        raise v.doc.error(("lab", "nodes"), f"{nodes}: the inventory has {inventory_nodes} "
                          "nodes (with backend hosts, leave nodes out or give that count)")
    profile = v.choice(m.get("profile", "host"), ("lab", "profile"), list(BUILTIN_PROFILES),
                       "profile")
    network = m.get("network")
    if network is not None:
        network = network_value(v, network, ("lab", "network"))
    overrides = m.get("set") or {}
    if not isinstance(overrides, dict):
        raise v.doc.error(("lab", "set"), "must be a mapping of cassandra.yaml keys to values "
                          "(e.g. {concurrent_writes: 16})")
    timeout = v.number(m.get("timeout_s", DEFAULT_TIMEOUT_S), ("lab", "timeout_s"), 10.0, 3600.0)
    runtime = v.choice(m.get("runtime", DEFAULT_RUNTIME), ("lab", "runtime"), list(RUNTIME_NAMES),
                       "runtime")
    per_node = profilefactors.node_profiles(v, m.get("node_profiles"), ("lab", "node_profiles"),
                                            MAX_NODES)
    if backend == "hosts":
        for key in ("profile", "runtime", "node_profiles"):
            if key in m:
                raise v.doc.error(("lab", key), "not with backend hosts: each node's profile "
                                  "is the inventory's casslab_profile and nodes run as "
                                  "processes (remove it)")
    max_restarts = v.integer(m.get("max_restarts", DEFAULT_MAX_RESTARTS),
                             ("lab", "max_restarts"), 0, 100)
    return LabSpec(nodes, profile, network, dict(overrides), timeout, runtime, per_node,
                   backend, inventory, max_restarts)


def _inventory(v: V, m: dict[str, Any], backend: str,
               base_dir: Path | None) -> tuple[str | None, int | None]:
    """The inventory's absolute path and its node count (backend hosts), else Nones."""
    if backend != "hosts":
        if "inventory" in m:
            raise v.doc.error(("lab", "inventory"), "only with `backend: hosts`")
        return None, None
    if "inventory" not in m:
        raise v.doc.error(("lab", "inventory"), "is required with backend hosts (an Ansible "
                          "inventory, YAML or INI, e.g. inventory: hosts.yaml)")
    raw = Path(v.string(m["inventory"], ("lab", "inventory")))
    path = raw if raw.is_absolute() else (base_dir or Path.cwd()) / raw
    if not path.is_file():
        raise v.doc.error(("lab", "inventory"), f"{raw}: no such file")
    # Here only: reading an inventory imports ansible (its own parser), not cheap.
    from casslab.testbed.hosts import inventory as inv

    return str(path.resolve()), len(inv.load(path).nodes)


def parse_workload(v: V, raw: Any, base_dir: Path | None) -> WorkloadSpec:
    if isinstance(raw, str):
        raw = {"name": raw}
    m = v.mapping(raw, ("workload",), WORKLOAD_KEYS)
    if "ycsb" in m:
        m = _ycsb_workload(v, m, base_dir)
    if "name" not in m:
        raise v.doc.error(("workload", "name"), f"is required (valid: {', '.join(WORKLOADS)}, "
                          "or a cassandra-stress user profile .yaml)")
    name = workload_name(v, m["name"], ("workload", "name"), base_dir)
    records = v.integer(m.get("records", 1000), ("workload", "records"), 1)
    prepare = v.boolean(m.get("prepare", name != "stress-write"), ("workload", "prepare"))
    options = _option_mapping(v, m.get("options") or {}, "options",
                              "(e.g. {in-flight: 8, field-length: 100})")
    for key in options:
        if key in ("ops", "duration"):
            raise v.doc.error(("workload", "options", key), "belongs in `stop:` (ops, "
                              "duration_s) so every trial stops the same way")
    load_options = _option_mapping(v, m.get("load_options"), "load_options",
                                   "for the load phase only (e.g. {in-flight: 16})")
    clients = v.integer(m.get("clients", 1), ("workload", "clients"), 1, MAX_CLIENTS)
    return WorkloadSpec(name, records, prepare, options, load_options, clients)


def _option_mapping(v: V, raw: Any, key: str, example: str) -> dict[str, Any]:
    """workload.<key> (None: empty) as a mapping of casslab-load options without the keys
    the runner sets; names and values are checked by check_load_options, which knows the
    workload family (and, for load_options, refuses the run-only ones)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise v.doc.error(("workload", key), f"must be a mapping of casslab-load options "
                          f"{example}")
    for name in raw:
        if name in RUNNER_KEYS:
            raise v.doc.error(("workload", key, name), "is set by the runner; remove it")
    return dict(raw)


def _ycsb_workload(v: V, m: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """`workload: {ycsb: {file: workloads/workloada, props: {recordcount: 5000}}}` as the
    built-in name, records and options it maps to (casslab.load.ycsbprops); `name` may
    give the built-in the properties start from (ycsb-a..), `options` win over props."""
    from casslab.load.ycsbprops import PropertyError, from_sources

    y = v.mapping(m["ycsb"], ("workload", "ycsb"), YCSB_KEYS)
    base = m.get("name")
    if base is not None and (not isinstance(base, str) or not base.startswith("ycsb-")
                             or base not in WORKLOADS):
        raise v.doc.error(("workload", "name"), "with `ycsb:` must be a built-in YCSB "
                          "workload the properties start from (ycsb-a..ycsb-f, ycsb-i), or "
                          "left out")
    files: list[Path] = []
    if "file" in y:
        if not isinstance(y["file"], str):
            raise v.doc.error(("workload", "ycsb", "file"), "must be a YCSB workload file path")
        p = Path(y["file"])
        files.append(p if p.is_absolute() else (base_dir or Path.cwd()) / p)
    props = y.get("props") or {}
    if not isinstance(props, dict):
        raise v.doc.error(("workload", "ycsb", "props"), "must be a mapping of YCSB "
                          "properties (e.g. {recordcount: 100000, threadcount: 8})")
    try:
        resolved = from_sources(files, [], props, base=base, inline_where="props")
    except PropertyError as exc:
        key = next((k for k in props if str(exc).startswith(f"props.{k}: ")), None)
        if key is not None:
            raise v.doc.error(("workload", "ycsb", "props", key),
                              str(exc).removeprefix(f"props.{key}: ")) from None
        raise v.doc.error(("workload", "ycsb", "file" if files else "props"),
                          str(exc)) from None
    options = dict(resolved.options)
    for key in ("ops", "duration"):
        if key in options:
            raise v.doc.error(("workload", "ycsb"), f"operationcount/maxexecutiontime set "
                              f"{key}: a campaign stops trials with `stop:` (ops, duration_s)")
    records = options.pop("records", None)
    if records is not None and "records" in m:
        raise v.doc.error(("workload", "records"), "is set by the YCSB recordcount too; "
                          "give one")
    user_options = m.get("options") or {}
    merged = {**options, **user_options} if isinstance(user_options, dict) else user_options
    return {**m, "name": resolved.workload, "options": merged,
            **({"records": records} if records is not None else {})}


def parse_warmup(v: V, raw: Any, stop: StopRule) -> SteadyWarmup | None:
    """workload.warmup: `until-steady` or {until: until-steady, max_s: S}."""
    if raw is None:
        return None
    path: Path_ = ("workload", "warmup")
    m = {"until": raw} if isinstance(raw, str) else v.mapping(raw, path, WARMUP_KEYS)
    if "until" not in m:
        raise v.doc.error((*path, "until"), "is required (valid: until-steady)")
    v.choice(m["until"], (*path, "until") if not isinstance(raw, str) else path,
             WARMUP_MODES, "warm-up")
    default = DEFAULT_STEADY_MAX_S
    if stop.duration_s is not None:
        default = min(default, stop.duration_s / 2)
    max_s = (v.number(m["max_s"], (*path, "max_s"), 0.0, MAX_TRIAL_S, lo_open=True)
             if "max_s" in m else default)
    if stop.duration_s is not None and max_s >= stop.duration_s:
        raise v.doc.error((*path, "max_s") if "max_s" in m else path,
                          f"{max_s:g} s must be shorter than stop.duration_s "
                          f"{stop.duration_s:g} (the window must keep some of the trial)")
    if stop.duration_s is None and stop.ops is None:
        raise v.doc.error(path, "until-steady needs a stop rule with duration_s or ops")
    return SteadyWarmup(max_s)


def parse_stop(v: V, raw: Any, path: Path_, *, staged: bool = False) -> StopRule:
    m = v.mapping(raw, path, STOP_KEYS)
    if staged:  # casslab-load refuses --ops and --duration beside --stages
        for key in ("ops", "duration_s"):
            if key in m:
                raise v.doc.error((*path, key), "a staged workload (workload.options.stages) "
                                  "ends with its stages file; give only timeout_s")
        return StopRule(None, None, v.number(m.get("timeout_s", 600.0), (*path, "timeout_s"),
                                             1.0, MAX_TRIAL_S))
    # The default of 1000 ops is for a spec without `stop:`; a written stop rule names
    # its own end, so `stop: {timeout_s: 60}` alone is an error, not 1000 ops.
    ops = m.get("ops", None if "duration_s" in m or raw is not None else 1000)
    ops_v = None if ops is None else v.integer(ops, (*path, "ops"), 1, MAX_OPS)
    dur = m.get("duration_s")
    dur_v = None if dur is None else v.number(dur, (*path, "duration_s"), 0.0, MAX_TRIAL_S,
                                              lo_open=True)
    if ops_v is None and dur_v is None:
        raise v.doc.error(path, "a stop rule needs ops or duration_s (or both); with "
                          "neither a trial never ends")
    timeout = v.number(m.get("timeout_s", 600.0), (*path, "timeout_s"), 1.0, MAX_TRIAL_S)
    if dur_v is not None and timeout <= dur_v:
        raise v.doc.error((*path, "timeout_s"), f"{timeout:g} must exceed duration_s "
                          f"{dur_v:g} (it is the wall-time guard of a trial)")
    return StopRule(ops_v, dur_v, timeout)


def parse_search(v: V, raw: Any) -> SearchSpec | None:
    if raw is None:
        return None
    path: Path_ = ("search",)
    m = v.mapping(raw, path, SEARCH_KEYS)
    if "vary" not in m:
        raise v.doc.error((*path, "vary"), f"is required (valid: {', '.join(SEARCHABLE)})")
    vary = v.choice(m["vary"], (*path, "vary"), SEARCHABLE, "search parameter")
    start = v.number(m.get("start", 1), (*path, "start"), 0.0, lo_open=True)
    if "multiply" in m and "add" in m:
        raise v.doc.error((*path, "add"), "give either multiply or add, not both")
    mult = add = None
    if "add" in m:
        add = v.number(m["add"], (*path, "add"), 0.0, lo_open=True)
    else:
        mult = v.number(m.get("multiply", 2.0), (*path, "multiply"), 1.0, lo_open=True)
    steps = v.integer(m.get("max_steps", 8), (*path, "max_steps"), 2, 100)
    sw = v.mapping(m.get("stop_when"), (*path, "stop_when"), STOP_WHEN_KEYS)
    drop = v.number(sw.get("throughput_drop_pct", 5.0), (*path, "stop_when",
                                                         "throughput_drop_pct"), 0.0, 100.0)
    p99 = sw.get("p99_ms")
    p99_v = None if p99 is None else v.number(p99, (*path, "stop_when", "p99_ms"), 0.0,
                                              lo_open=True)
    trials = v.integer(m.get("trials", 1), (*path, "trials"), 1, 100)
    stop = parse_stop(v, {k: m[k] for k in ("ops", "duration_s") if k in m} or None, path)
    return SearchSpec(vary, start, mult, add, steps, drop, p99_v, trials, stop)
