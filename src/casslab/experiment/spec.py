"""Experiment specs: YAML in, a validated `CampaignSpec` out.

Every error names the field (as a path like `factors[1].levels[0]`), the line of
the spec it comes from and what would be valid. Lines come from yaml.compose's
node marks, so they are exact even in flow style.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra.cql import CONSISTENCY_LEVELS
from casslab.core.errors import UsageError
from casslab.load.runner import WORKLOADS
from casslab.profiles import BUILTIN_PROFILES

RESETS = ("none", "truncate", "recreate", "rebuild")
NETWORK_PARAMS = {"delay_ms": (0.0, 10_000.0), "jitter_ms": (0.0, 10_000.0),
                  "loss_pct": (0.0, 100.0), "rate_mbit": (0.001, 100_000.0)}
NETWORK_SCOPES = ("all", "client", "nodes")
COMPACTIONS = ("stcs", "lcs", "ucs", "twcs")
# Workload options that take a concurrency or a rate and may be searched or be relative.
CONCURRENCY = ("in_flight", "workers", "threads")
SEARCHABLE = (*CONCURRENCY, "rate")
RESPONSES = ("runtime_s", "ops_s", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms")
MAX_NODES = 32

TOP_KEYS = ("name", "description", "lab", "workload", "factors", "design", "stop", "search",
            "metrics", "analysis")
LAB_KEYS = ("nodes", "profile", "network", "set", "timeout_s")
WORKLOAD_KEYS = ("name", "records", "prepare", "options")
FACTOR_KEYS = ("name", "levels", "label")
DESIGN_KEYS = ("trials", "warmup_trials", "randomize", "seed", "reset")
STOP_KEYS = ("ops", "duration_s", "timeout_s")
SEARCH_KEYS = ("vary", "start", "multiply", "add", "max_steps", "stop_when", "trials", "ops",
               "duration_s")
STOP_WHEN_KEYS = ("throughput_drop_pct", "p99_ms")
METRICS_KEYS = ("interval_s", "cql")
ANALYSIS_KEYS = ("response", "bootstrap", "seed")
FACTOR_DOC = ("nodes, profile, set.<cassandra.yaml key>, network, network[.all|client|nodes|"
              "nodeA-nodeB].<delay_ms|jitter_ms|loss_pct|rate_mbit>, workload, records, rf, "
              "compaction, cl, cl_read, cl_write, in_flight, workers, threads, rate, "
              "option.<casslab-load option>")


class SpecError(UsageError):
    """The spec is malformed; the message has file, line, field and what is valid."""


@dataclass(frozen=True)
class LabSpec:
    nodes: int = 1
    profile: str = "host"
    network: Any = None  # a link profile name or {param: value} / {scope: {param: value}}
    overrides: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 180.0


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    records: int = 1000
    prepare: bool = True  # load `records` before the first trial and after every data reset
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Factor:
    """One factor: `kind` is lab, network, schema or workload (what it touches)."""

    name: str
    kind: str
    levels: tuple[Any, ...]
    label: str

    @property
    def relative(self) -> bool:
        return any(is_relative(v) for v in self.levels)


@dataclass(frozen=True)
class DesignSpec:
    trials: int = 3
    warmup_trials: int = 0
    randomize: bool = False
    seed: int = 1
    reset: str = "none"  # between two trials of the same cell


@dataclass(frozen=True)
class StopRule:
    ops: int | None = 1000
    duration_s: float | None = None
    timeout_s: float = 600.0


@dataclass(frozen=True)
class SearchSpec:
    """Raise `vary` step by step until throughput falls or p99 passes a bound."""

    vary: str
    start: float
    multiply: float | None
    add: float | None
    max_steps: int
    drop_pct: float
    p99_ms: float | None
    trials: int
    stop: StopRule


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    description: str
    lab: LabSpec
    workload: WorkloadSpec
    factors: tuple[Factor, ...]
    design: DesignSpec
    stop: StopRule
    search: SearchSpec | None
    metrics_interval_s: float
    metrics_cql: bool
    response: str
    bootstrap: int
    analysis_seed: int
    text: str

    @property
    def digest(self) -> str:
        """Hash of the spec's text: a results directory belongs to one spec."""
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]

    def factor(self, name: str) -> Factor:
        return next(f for f in self.factors if f.name == name)


def is_relative(value: Any) -> bool:
    return isinstance(value, str) and bool(re.fullmatch(r"\d+(\.\d+)?%", value.strip()))


def relative_fraction(value: str) -> float:
    return float(value.strip().rstrip("%")) / 100.0


# ---- YAML with line numbers ---------------------------------------------------------------

Path_ = tuple[str | int, ...]


class _Doc:
    """Parsed YAML plus the line of every value, keyed by its path."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.lines: dict[Path_, int] = {}
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark else ""
            raise SpecError(f"{source}{line}: not valid YAML: "
                            f"{getattr(exc, 'problem', None) or exc}") from None
        if node is None:
            raise SpecError(f"{source}: the spec is empty (it needs at least `workload:`)")
        self.root = self._walk(node, ())

    def _walk(self, node: yaml.Node, path: Path_) -> Any:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for k, v in node.value:
                key = str(k.value)
                if key in out:
                    self.lines[(*path, key)] = k.start_mark.line + 1
                    raise self.error((*path, key), "is given twice")
                out[key] = self._walk(v, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self._walk(v, (*path, i)) for i, v in enumerate(node.value)]
        return yaml.SafeLoader("").construct_object(node, deep=True)

    def line(self, path: Path_) -> int:
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)

    def error(self, path: Path_, message: str) -> SpecError:
        return SpecError(f"{self.source}:{self.line(path)}: {fmt_path(path)}: {message}")


def fmt_path(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


# ---- validation helpers -------------------------------------------------------------------

class _V:
    def __init__(self, doc: _Doc) -> None:
        self.doc = doc

    def mapping(self, value: Any, path: Path_, keys: tuple[str, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.doc.error(path, f"must be a mapping with keys {', '.join(keys)}")
        for k in value:
            if k not in keys:
                raise self.doc.error((*path, k), f"unknown key (valid: {', '.join(keys)})")
        return value

    def integer(self, value: Any, path: Path_, lo: int, hi: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.doc.error(path, f"{value!r} is not an integer (valid: "
                                 f"{_range(lo, hi)})")
        if value < lo or (hi is not None and value > hi):
            raise self.doc.error(path, f"{value} is out of range (valid: {_range(lo, hi)})")
        return value

    def number(self, value: Any, path: Path_, lo: float, hi: float | None = None,
               lo_open: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.doc.error(path, f"{value!r} is not a number (valid: "
                                 f"{_range(lo, hi, lo_open)})")
        if value < lo or (lo_open and value == lo) or (hi is not None and value > hi):
            raise self.doc.error(path, f"{value} is out of range (valid: "
                                 f"{_range(lo, hi, lo_open)})")
        return float(value)

    def choice(self, value: Any, path: Path_, valid: tuple[str, ...] | list[str],
               what: str = "value") -> str:
        if not isinstance(value, str) or value not in valid:
            raise self.doc.error(path, f"{value!r} is not a valid {what} "
                                 f"(valid: {', '.join(valid)})")
        return value

    def boolean(self, value: Any, path: Path_) -> bool:
        if not isinstance(value, bool):
            raise self.doc.error(path, f"{value!r} is not a boolean (valid: true, false)")
        return value

    def string(self, value: Any, path: Path_) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.doc.error(path, f"{value!r} must be a non-empty string")
        return value


def _range(lo: float, hi: float | None, lo_open: bool = False) -> str:
    low = f"> {lo:g}" if lo_open else f">= {lo:g}"
    return f"{low} and <= {hi:g}" if hi is not None else low


# ---- the spec -----------------------------------------------------------------------------

def load_spec(path: Path) -> CampaignSpec:
    """Read and validate a spec file; raises SpecError (file:line: field: problem)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise SpecError(f"cannot read spec {path}: {exc.strerror}") from None
    return parse_spec(text, source=str(path), base_dir=path.parent)


def parse_spec(text: str, *, source: str = "spec", base_dir: Path | None = None) -> CampaignSpec:
    """Validate spec text; raises SpecError naming the field, its line and what is valid."""
    doc = _Doc(text, source)
    v = _V(doc)
    top = v.mapping(doc.root, (), TOP_KEYS)
    name = v.string(top.get("name", Path(source).stem if source != "spec" else "campaign"),
                    ("name",))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise doc.error(("name",), f"{name!r}: use letters, digits, '-', '_' or '.' (1-64)")
    if "workload" not in top:
        raise doc.error(("workload",), "is required (e.g. `workload: {name: ycsb-a}`)")
    lab = _lab(v, top.get("lab"))
    workload = _workload(v, top["workload"], base_dir)
    search = _search(v, top.get("search"))
    factors = _factors(v, top.get("factors"), lab, search is not None, base_dir)
    design = _design(v, top.get("design"))
    stop = _stop(v, top.get("stop"), ("stop",))
    metrics = v.mapping(top.get("metrics"), ("metrics",), METRICS_KEYS)
    interval = v.number(metrics.get("interval_s", 1.0), ("metrics", "interval_s"), 0.1, 60.0)
    cql = v.boolean(metrics.get("cql", True), ("metrics", "cql"))
    analysis = v.mapping(top.get("analysis"), ("analysis",), ANALYSIS_KEYS)
    default_response = "runtime_s" if stop.ops and not stop.duration_s else "ops_s"
    response = v.choice(analysis.get("response", default_response), ("analysis", "response"),
                        RESPONSES, "response")
    boot = v.integer(analysis.get("bootstrap", 2000), ("analysis", "bootstrap"), 100, 100_000)
    aseed = v.integer(analysis.get("seed", design.seed), ("analysis", "seed"), 0)
    _cross_checks(v, lab, factors, search)
    return CampaignSpec(name=name, description=str(top.get("description") or ""), lab=lab,
                        workload=workload, factors=tuple(factors), design=design, stop=stop,
                        search=search, metrics_interval_s=interval, metrics_cql=cql,
                        response=response, bootstrap=boot, analysis_seed=aseed, text=text)


def _lab(v: _V, raw: Any) -> LabSpec:
    m = v.mapping(raw, ("lab",), LAB_KEYS)
    nodes = v.integer(m.get("nodes", 1), ("lab", "nodes"), 1, MAX_NODES)
    profile = v.choice(m.get("profile", "host"), ("lab", "profile"), list(BUILTIN_PROFILES),
                       "profile")
    network = m.get("network")
    if network is not None:
        network = _network_value(v, network, ("lab", "network"))
    overrides = m.get("set") or {}
    if not isinstance(overrides, dict):
        raise v.doc.error(("lab", "set"), "must be a mapping of cassandra.yaml keys to values "
                          "(e.g. {concurrent_writes: 16})")
    timeout = v.number(m.get("timeout_s", 180.0), ("lab", "timeout_s"), 10.0, 3600.0)
    return LabSpec(nodes, profile, network, dict(overrides), timeout)


def _network_profiles() -> tuple[str, ...]:
    from casslab.experiment import network

    return ("none", *network.profile_names())


def _network_value(v: _V, value: Any, path: Path_) -> Any:
    profiles = _network_profiles()
    if isinstance(value, str):
        return v.choice(value, path, profiles, "network profile")
    m = v.mapping(value, path, (*NETWORK_PARAMS, *NETWORK_SCOPES, "profile"))
    for key, val in m.items():
        if key == "profile":
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


def _workload(v: _V, raw: Any, base_dir: Path | None) -> WorkloadSpec:
    if isinstance(raw, str):
        raw = {"name": raw}
    m = v.mapping(raw, ("workload",), WORKLOAD_KEYS)
    if "name" not in m:
        raise v.doc.error(("workload", "name"), f"is required (valid: {', '.join(WORKLOADS)}, "
                          "or a cassandra-stress user profile .yaml)")
    name = _workload_name(v, m["name"], ("workload", "name"), base_dir)
    records = v.integer(m.get("records", 1000), ("workload", "records"), 1)
    prepare = v.boolean(m.get("prepare", name != "stress-write"), ("workload", "prepare"))
    options = m.get("options") or {}
    if not isinstance(options, dict):
        raise v.doc.error(("workload", "options"), "must be a mapping of casslab-load options "
                          "(e.g. {in-flight: 8, field-length: 100})")
    for key in options:
        if key in ("hosts", "format", "phase", "drop"):
            raise v.doc.error(("workload", "options", key), "is set by the runner; remove it")
        if key in ("ops", "duration"):
            raise v.doc.error(("workload", "options", key), "belongs in `stop:` (ops, "
                              "duration_s) so every trial stops the same way")
    return WorkloadSpec(name, records, prepare, dict(options))


def _workload_name(v: _V, value: Any, path: Path_, base_dir: Path | None) -> str:
    if isinstance(value, str) and value.endswith((".yaml", ".yml")):
        p = Path(value) if Path(value).is_absolute() else (base_dir or Path.cwd()) / value
        if not p.exists():
            raise v.doc.error(path, f"user profile {value} does not exist (looked at {p})")
        return str(p.resolve())
    return v.choice(value, path, list(WORKLOADS), "workload (or a user profile .yaml)")


def _design(v: _V, raw: Any) -> DesignSpec:
    m = v.mapping(raw, ("design",), DESIGN_KEYS)
    trials = v.integer(m.get("trials", 3), ("design", "trials"), 1, 1000)
    warm = v.integer(m.get("warmup_trials", 0), ("design", "warmup_trials"), 0, 1000)
    rnd = v.boolean(m.get("randomize", False), ("design", "randomize"))
    seed = v.integer(m.get("seed", 1), ("design", "seed"), 0)
    reset = v.choice(m.get("reset", "none"), ("design", "reset"), RESETS, "reset")
    return DesignSpec(trials, warm, rnd, seed, reset)


def _stop(v: _V, raw: Any, path: Path_) -> StopRule:
    m = v.mapping(raw, path, STOP_KEYS)
    ops = m.get("ops", None if "duration_s" in m else 1000)
    ops_v = None if ops is None else v.integer(ops, (*path, "ops"), 1)
    dur = m.get("duration_s")
    dur_v = None if dur is None else v.number(dur, (*path, "duration_s"), 0.0, lo_open=True)
    timeout = v.number(m.get("timeout_s", 600.0), (*path, "timeout_s"), 1.0)
    if dur_v is not None and timeout <= dur_v:
        raise v.doc.error((*path, "timeout_s"), f"{timeout:g} must exceed duration_s "
                          f"{dur_v:g} (it is the wall-time guard of a trial)")
    return StopRule(ops_v, dur_v, timeout)


def _search(v: _V, raw: Any) -> SearchSpec | None:
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
    stop = _stop(v, {k: m[k] for k in ("ops", "duration_s") if k in m} or None, path)
    return SearchSpec(vary, start, mult, add, steps, drop, p99_v, trials, stop)


def factor_kind(name: str) -> str | None:
    """lab, network, schema or workload; None for an unknown factor name."""
    if name in ("nodes", "profile") or name.startswith("set."):
        return "lab"
    if name == "network" or re.fullmatch(
            r"network(\.(all|client|nodes|node\d+-node\d+))?\.(delay_ms|jitter_ms|loss_pct|"
            r"rate_mbit)", name):
        return "network"
    if name in ("workload", "records", "rf", "compaction"):
        return "schema"
    if name in ("cl", "cl_read", "cl_write", *SEARCHABLE):
        return "workload"
    if re.fullmatch(r"option\.[a-z][a-z0-9-]*", name):
        return "workload"
    return None


def _factors(v: _V, raw: Any, lab: LabSpec, has_search: bool,
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
        out.append(Factor(name, kind, checked, label))
    return out


def _level(v: _V, name: str, value: Any, path: Path_, has_search: bool,
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
    if name == "network":
        return _network_value(v, value, path)
    if name.startswith("network."):
        param = name.rsplit(".", 1)[1]
        lo, hi = NETWORK_PARAMS[param]
        return v.number(value, path, lo, hi)
    if name == "workload":
        return _workload_name(v, value, path, base_dir)
    if name == "records":
        return v.integer(value, path, 1)
    if name == "rf":
        return v.integer(value, path, 1, MAX_NODES)
    if name == "compaction":
        ok = isinstance(value, str) and (value.startswith("{") or value in COMPACTIONS or
                                         re.fullmatch(r"twcs:\d+:(MINUTES|HOURS|DAYS)", value))
        if not ok:
            raise v.doc.error(path, f"{value!r} is not a compaction (valid: stcs, lcs, ucs, "
                              "twcs, twcs:SIZE:MINUTES|HOURS|DAYS, or a CQL map '{...}')")
        return value
    if name in ("cl", "cl_read", "cl_write"):
        return v.choice(str(value).upper() if isinstance(value, str) else value, path,
                        list(CONSISTENCY_LEVELS), "consistency level")
    if name in CONCURRENCY:
        return v.integer(value, path, 1, 100_000)
    if name == "rate":
        return v.number(value, path, 0.0, lo_open=True)
    if isinstance(value, dict | list):
        raise v.doc.error(path, f"{value!r}: a casslab-load option takes a scalar")
    return value


def _cross_checks(v: _V, lab: LabSpec, factors: list[Factor], search: SearchSpec | None) -> None:
    names = [f.name for f in factors]
    node_levels = next((f.levels for f in factors if f.name == "nodes"), (lab.nodes,))
    for i, f in enumerate(factors):
        if f.name == "rf":
            for j, rf in enumerate(f.levels):
                if rf > min(node_levels):
                    raise v.doc.error(("factors", i, "levels", j), f"rf {rf} exceeds the "
                                      f"smallest node count {min(node_levels)}")
        if f.name in ("cl_read", "cl_write") and "cl" in names:
            raise v.doc.error(("factors", i, "name"), f"{f.name} conflicts with factor cl "
                              "(which sets both)")
        if search and f.name == search.vary and not f.relative:
            raise v.doc.error(("factors", i, "name"), f"{f.name} is varied by `search:`; "
                              "as a factor its levels must be relative to the peak (e.g. "
                              "'100%', '66%')")
        if f.relative and search and f.name not in ("rate", search.vary):
            raise v.doc.error(("factors", i, "name"), f"relative levels of {f.name} need "
                              f"`search.vary: {f.name}` (or a rate factor)")
