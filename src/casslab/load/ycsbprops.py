"""YCSB workload property files (`-P workloads/workloada`) and `-p key=value` overrides,
mapped onto casslab-load's ycsb options.

Pure: text in, (workload name, {casslab-load flag: value}, warnings) out. The mapping
picks the built-in core workload whose mix and request distribution the properties
describe (so workloads/workloada is exactly `ycsb-a`), and otherwise runs `ycsb-a` with
an explicit --mix and --distribution. Options equal to casslab-load's own value for that
workload are left out, so the same workload gives the same casslab-load command line.
Properties YCSB has but casslab-load cannot honour are refused when their value would
change the workload, and warned about when they only concern YCSB's own machinery.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casslab.core.errors import UsageError

CORE_WORKLOAD_CLASSES = ("site.ycsb.workloads.CoreWorkload",
                         "com.yahoo.ycsb.workloads.CoreWorkload")
# casslab-load's ycsb operation names, in the order of YCSB's proportion properties.
PROPORTIONS = {"readproportion": "read", "updateproportion": "update",
               "insertproportion": "insert", "scanproportion": "scan",
               "readmodifywriteproportion": "rmw"}
# CoreWorkload's defaults for properties a file leaves out.
YCSB_DEFAULTS: dict[str, str] = {
    "readproportion": "0.95", "updateproportion": "0.05", "insertproportion": "0",
    "scanproportion": "0", "readmodifywriteproportion": "0",
    "requestdistribution": "uniform", "zipfianconstant": "0.99",
    "fieldcount": "10", "fieldlength": "100", "maxscanlength": "1000",
    "hotspotdatafraction": "0.2", "hotspotopnfraction": "0.8",
}
# The built-in workloads as casslab-load runs them (crates/load/src/workload/ycsb.rs
# mix_for / distribution_for; test_ycsbprops checks them against `casslab-load --help`).
BUILTIN_MIXES: dict[str, dict[str, float]] = {
    "a": {"read": 0.5, "update": 0.5},
    "b": {"read": 0.95, "update": 0.05},
    "c": {"read": 1.0},
    "d": {"read": 0.95, "insert": 0.05},
    "e": {"scan": 0.95, "insert": 0.05},
    "f": {"read": 0.5, "rmw": 0.5},
    "i": {"read": 0.01, "insert": 0.99},
}
BUILTIN_DISTRIBUTION = {"d": "latest"}  # the others: zipfian
# casslab-load ycsb's defaults (config.rs YcsbCommand / RunArgs).
CASSLAB_DEFAULTS: dict[str, Any] = {
    "records": 1000, "ops": 1000, "field-count": 10, "field-length": 100,
    "max-scan-length": 100, "zipfian-constant": 0.99, "hotspot-data-fraction": 0.2,
    "hotspot-opn-fraction": 0.8,
}
# Properties whose value must be this one: casslab-load does only this.
FIXED_VALUES = {
    "readallfields": ("true", "reads return every field"),
    "writeallfields": ("false", "updates write one random field"),
    "fieldlengthdistribution": ("constant", "every field is fieldlength bytes"),
    "insertorder": ("hashed", "keys are user + FNV hash of the key number"),
    "scanlengthdistribution": ("uniform", "scans are uniform in 1..maxscanlength"),
    "minscanlength": ("1", "scans are uniform in 1..maxscanlength"),
    "table": ("usertable", "the table is ycsb.usertable (keyspace: --keyspace)"),
    "dotransactions": ("true", "the phase is casslab's --phase"),
}
DISTRIBUTIONS = ("uniform", "zipfian", "latest", "hotspot")
# YCSB properties about its own client, bindings and exporters: no effect on the workload
# casslab-load runs, so only a warning (YCSB, too, ignores what its binding doesn't read).
IGNORED = ("db", "exporter", "exportfile", "hosts", "port", "measurement.trackjvm",
           "measurement.histogram.verbose", "histogram.buckets", "timeseries.granularity",
           "core_workload_insertion_retry_limit", "core_workload_insertion_retry_interval",
           "dataintegrity", "fieldnameprefix", "debug", "jvm-args", "measurementtype",
           "requestdistribution.bucket", "zeropadding")
# The Cassandra binding's consistency levels, which casslab-load honours.
CONSISTENCY = {"cassandra.readconsistencylevel": "cl-read",
               "cassandra.writeconsistencylevel": "cl-write"}
# The Cassandra binding's keyspace (YCSB's default ycsb), casslab-load's --keyspace.
KEYSPACE = "cassandra.keyspace"
IGNORED_PREFIXES = ("cassandra.", "cassandra-cql.", "scylla.")
MAPPED = (*PROPORTIONS, "workload", "recordcount", "operationcount", "requestdistribution",
          "zipfianconstant", "fieldcount", "fieldlength", "maxscanlength",
          "hotspotdatafraction", "hotspotopnfraction", "threadcount", "target",
          "status.interval", "maxexecutiontime", "hdrhistogram.fileoutput",
          "hdrhistogram.output.path", *CONSISTENCY, KEYSPACE, "insertstart",
          "insertcount", "hdrhistogram.percentiles", "measurement.interval")
KNOWN = (*MAPPED, *FIXED_VALUES, *IGNORED)
# Default values of ignored properties that need no warning.
QUIET_DEFAULTS = {"measurementtype": "hdrhistogram"}


class PropertyError(UsageError):
    """A YCSB property is unknown, malformed or has a value casslab-load can't honour."""


@dataclass(frozen=True)
class Prop:
    """One property as written: `where` is file:line or `-p`."""

    key: str
    value: str
    where: str


@dataclass(frozen=True)
class YcsbWorkload:
    """What the properties ask casslab-load for."""

    workload: str  # a built-in name, ycsb-a..ycsb-i
    options: dict[str, Any]  # casslab-load flags
    warnings: tuple[str, ...] = field(default_factory=tuple)


def parse_properties(text: str, source: str) -> list[Prop]:
    """Java .properties lines: `key=value`, `key: value` or `key value`; `#`/`!` comments;
    a trailing backslash continues a line. Raises PropertyError for a line with no key."""
    props: list[Prop] = []
    pending = ""
    start = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip() if not pending else raw.lstrip()
        if not pending:
            start = n
            if not line or line[0] in "#!":
                continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        m = re.match(r"([^=:\s]+)\s*(?:[=:]\s*|\s+|$)(.*)$", line)
        if not m:
            raise PropertyError(f"{source}:{start}: {line!r} is not key=value")
        props.append(Prop(m.group(1), m.group(2).strip(), f"{source}:{start}"))
    return props


def read_property_file(path: Path) -> list[Prop]:
    """The properties of a workload file; raises PropertyError naming an unreadable one."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise PropertyError(f"{path}: cannot read this YCSB workload file "
                            f"({exc.strerror or exc})") from None
    return parse_properties(text, str(path))


def parse_override(text: str) -> Prop:
    """`-p key=value`; raises PropertyError for text without `=`."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise PropertyError(f"-p {text}: expected key=value (e.g. -p recordcount=1000000)")
    return Prop(key.strip(), value.strip(), "-p")


def builtin_properties(letter: str) -> list[Prop]:
    """The properties of a built-in core workload (`ycsb-a` run with `-p` overrides)."""
    mix = BUILTIN_MIXES[letter]
    props = [Prop(p, str(mix.get(op, 0)), f"ycsb-{letter}") for p, op in PROPORTIONS.items()]
    dist = BUILTIN_DISTRIBUTION.get(letter, "zipfian")
    # casslab-load's scans are shorter than YCSB's default (1000), as workloads/workloade.
    return [*props, Prop("requestdistribution", dist, f"ycsb-{letter}"),
            Prop("maxscanlength", str(CASSLAB_DEFAULTS["max-scan-length"]), f"ycsb-{letter}")]


def to_workload(props: Iterable[Prop]) -> YcsbWorkload:
    """casslab-load's workload and options for YCSB properties (later ones win, as in
    YCSB where -p overrides -P). Raises PropertyError naming the first bad property."""
    last: dict[str, Prop] = {}
    warnings: list[str] = []
    for p in props:
        _check_known(p, warnings)
        last[p.key] = p
    values = {k: p.value for k, p in last.items()}

    def get(key: str) -> str:
        return values.get(key, YCSB_DEFAULTS.get(key, ""))

    cls = last.get("workload")
    if cls is not None and cls.value not in CORE_WORKLOAD_CLASSES:
        raise PropertyError(f"{cls.where}: workload={cls.value}: casslab-load runs YCSB's "
                            f"core workload only ({CORE_WORKLOAD_CLASSES[0]})")
    mix = {op: _number(last.get(k) or Prop(k, get(k), "default"), 0.0, 1e9)
           for k, op in PROPORTIONS.items()}
    mix = {op: w for op, w in mix.items() if w > 0}
    if not mix:
        raise PropertyError("no operations: every *proportion property is 0 (e.g. "
                            "readproportion=0.5, updateproportion=0.5)")
    dist_prop = last.get("requestdistribution") or Prop("requestdistribution",
                                                        get("requestdistribution"), "default")
    if dist_prop.value not in DISTRIBUTIONS:
        raise PropertyError(f"{dist_prop.where}: requestdistribution={dist_prop.value}: "
                            f"casslab-load offers {', '.join(DISTRIBUTIONS)}")
    letter = _builtin_for(mix, dist_prop.value)
    options: dict[str, Any] = {}
    if letter is None:
        letter = "a"
        total = sum(mix.values())
        options["mix"] = ",".join(f"{op}={_g(w / total)}" for op, w in mix.items())
        options["distribution"] = dist_prop.value
    options |= _sizes(last, get, mix, dist_prop.value)
    options |= _run_options(last)
    return YcsbWorkload(f"ycsb-{letter}", options, tuple(warnings))


def from_sources(files: Iterable[Path], overrides: Iterable[str],
                 inline: Mapping[str, Any] | None = None, base: str | None = None,
                 inline_where: str = "props") -> YcsbWorkload:
    """Properties of a built-in (`base`, e.g. ycsb-a), then files, then `inline`
    ({key: value}, a spec's props), then `-p` overrides, as one workload."""
    props: list[Prop] = []
    if base is not None:
        props += builtin_properties(base.removeprefix("ycsb-"))
    for f in files:
        props += read_property_file(f)
    for k, v in (inline or {}).items():
        text = str(v).lower() if isinstance(v, bool) else str(v)
        props.append(Prop(str(k), text, f"{inline_where}.{k}"))
    props += [parse_override(o) for o in overrides]
    return to_workload(props)


def _check_known(p: Prop, warnings: list[str]) -> None:
    if p.key in MAPPED:
        return
    if p.key in FIXED_VALUES:
        want, why = FIXED_VALUES[p.key]
        if p.value.lower() != want:
            raise PropertyError(f"{p.where}: {p.key}={p.value}: casslab-load supports only "
                                f"{p.key}={want} ({why})")
        return
    if p.key in IGNORED or p.key.startswith(IGNORED_PREFIXES):
        if QUIET_DEFAULTS.get(p.key) != p.value.lower():
            warnings.append(f"{p.where}: {p.key} ignored (YCSB client/binding setting; "
                            "casslab-load has no equivalent)")
        return
    if p.key not in MAPPED:
        close = difflib.get_close_matches(p.key, KNOWN, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise PropertyError(f"{p.where}: unknown YCSB property '{p.key}' ({hint}casslab reads: "
                            f"{', '.join(MAPPED)})")


def _builtin_for(mix: Mapping[str, float], dist: str) -> str | None:
    total = sum(mix.values())
    for letter, want in BUILTIN_MIXES.items():
        if BUILTIN_DISTRIBUTION.get(letter, "zipfian") != dist or set(want) != set(mix):
            continue
        if all(abs(mix[op] / total - w) < 1e-9 for op, w in want.items()):
            return letter
    return None


def _sizes(last: Mapping[str, Prop], get: Any, mix: Mapping[str, float],
           dist: str) -> dict[str, Any]:
    """Data and key-choice options that differ from casslab-load's (only those that matter
    for the operations and distribution in use)."""
    def prop(key: str) -> Prop:
        return last.get(key) or Prop(key, get(key), "default")

    wanted: dict[str, Any] = {
        "field-count": _integer(prop("fieldcount"), 1),
        "field-length": _integer(prop("fieldlength"), 0),
    }
    if "recordcount" in last:
        wanted["records"] = _integer(last["recordcount"], 1)
    if "scan" in mix:
        wanted["max-scan-length"] = _integer(prop("maxscanlength"), 1)
    if dist in ("zipfian", "latest"):
        wanted["zipfian-constant"] = _number(prop("zipfianconstant"), 0.0, 1e9)
    if dist == "hotspot":
        wanted["hotspot-data-fraction"] = _number(prop("hotspotdatafraction"), 0.0, 1.0)
        wanted["hotspot-opn-fraction"] = _number(prop("hotspotopnfraction"), 0.0, 1.0)
    return {k: v for k, v in wanted.items() if CASSLAB_DEFAULTS.get(k) != v}


def _run_options(last: Mapping[str, Prop]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "maxexecutiontime" in last:
        out["duration"] = f"{_integer(last['maxexecutiontime'], 1)}s"
    if "operationcount" in last:
        ops = _integer(last["operationcount"], 0)
        if ops == 0 and "duration" not in out:
            raise PropertyError(f"{last['operationcount'].where}: operationcount=0 (run "
                                "until stopped) isn't offered: give a count or --duration")
        # 0 is YCSB's "no count": with maxexecutiontime the run stops at that time alone
        # (passed on, casslab-load's --ops 0 would stop at once). casslab-load's default
        # count applies only without a duration, so with one an equal count is kept.
        if ops != 0 and (ops != CASSLAB_DEFAULTS["ops"] or "duration" in out):
            out["ops"] = ops
    if "threadcount" in last:
        out["threads"] = _integer(last["threadcount"], 1)
    if "target" in last and (target := _number(last["target"], 0.0, 1e12)) > 0:
        out["rate"] = target  # YCSB's target 0 = unthrottled
    for key, flag in CONSISTENCY.items():
        if key in last:
            out[flag] = last[key].value
    if KEYSPACE in last:
        out["keyspace"] = last[KEYSPACE].value
    out |= _measurement_options(last)
    out |= _insert_range(last)
    if "status.interval" in last:
        out["interval"] = f"{_integer(last['status.interval'], 1)}s"
    if "hdrhistogram.fileoutput" in last:
        p = last["hdrhistogram.fileoutput"]
        if p.value.lower() not in ("true", "false"):
            raise PropertyError(f"{p.where}: hdrhistogram.fileoutput={p.value}: expected "
                                "true or false")
        if p.value.lower() == "true":
            # YCSB writes <output.path><operation>.hdr per operation; casslab-load writes
            # one interval log with a tag per operation, named after the same prefix.
            prefix = last["hdrhistogram.output.path"].value if (
                "hdrhistogram.output.path" in last) else ""
            out["hdr-log"] = f"{prefix}ycsb.hdr"
    return out


def _insert_range(last: Mapping[str, Prop]) -> dict[str, Any]:
    """insertstart / insertcount (how YCSB users split a load across client machines) as
    --insert-start / --insert-count: the load inserts key numbers insertstart ..
    insertstart+insertcount-1 of the recordcount keys, and the run phase's uniform,
    zipfian and hotspot choices draw from them (CoreWorkload.init). Without insertcount,
    CoreWorkload's default, recordcount - insertstart (YCSB's Client would insert
    recordcount keys from insertstart, past the key space). An empty value is YCSB's
    unset. Checked against recordcount when the properties give it; casslab's own
    --records is checked with the options (YcsbOptions)."""
    start_p = last.get("insertstart") or Prop("insertstart", "", "default")
    count_p = last.get("insertcount") or Prop("insertcount", "", "default")
    start = _integer(start_p, 0) if start_p.value else 0
    count = _integer(count_p, 1) if count_p.value else None
    out: dict[str, Any] = {"insert-start": start} if start else {}
    if "recordcount" not in last:
        return out | ({"insert-count": count} if count is not None else {})
    records = _integer(last["recordcount"], 1)
    if count is None and start >= records:
        raise PropertyError(f"{start_p.where}: insertstart={start} is not below "
                            f"recordcount={records} (the load inserts key numbers "
                            "insertstart..recordcount-1)")
    if count is not None and start + count > records:
        raise PropertyError(f"{count_p.where}: insertstart={start} + insertcount={count} is "
                            f"more than recordcount={records} (the load inserts key numbers "
                            "insertstart..insertstart+insertcount-1 of the recordcount keys)")
    # The whole key range needs no option; a part is kept even where it is casslab-load's
    # default (the rest of the records), which casslab's own --records would move.
    whole = count is None or (start == 0 and count == records)
    return out if whole else out | {"insert-count": count}


def _integer(p: Prop, lo: int) -> int:
    try:
        n = int(p.value)
    except ValueError:
        n = lo - 1
    if n < lo:
        raise PropertyError(f"{p.where}: {p.key}={p.value}: must be an integer >= {lo}")
    return n


def _number(p: Prop, lo: float, hi: float) -> float:
    try:
        x = float(p.value)
    except ValueError:
        x = lo - 1
    if not lo <= x <= hi:
        raise PropertyError(f"{p.where}: {p.key}={p.value}: must be a number in {_g(lo)}.."
                            f"{_g(hi)}")
    return x


def _g(x: float) -> str:
    return f"{x:.10g}"


def _measurement_options(last: Mapping[str, Prop]) -> dict[str, Any]:
    """YCSB's hdrhistogram.percentiles and measurement.interval as the casslab-load
    options that print the --format ycsb text the same way. Intended latency is
    casslab-load's own measure under a target rate (from each operation's intended start);
    without a target, as in YCSB, the intended start is the send."""
    out: dict[str, Any] = {}
    if "hdrhistogram.percentiles" in last:
        p = last["hdrhistogram.percentiles"]
        try:
            numbers = [float(x) for x in p.value.split(",")]
        except ValueError:
            numbers = []
        if not numbers or not all(0 < x <= 100 for x in numbers):
            raise PropertyError(f"{p.where}: hdrhistogram.percentiles={p.value}: expected "
                                "percentiles above 0 and at most 100, comma-separated "
                                "(e.g. 95,99,99.9)")
        out["percentiles"] = p.value.replace(" ", "")
    if "measurement.interval" in last:
        m = last["measurement.interval"]
        if m.value not in ("op", "intended", "both"):
            raise PropertyError(f"{m.where}: measurement.interval={m.value}: expected op, "
                                "intended or both")
        out["measurement-interval"] = m.value
    return out
