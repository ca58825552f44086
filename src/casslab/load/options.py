"""casslab-load's options as typed dataclasses: one field per flag, checked by its own rules.

`from_mapping(workload, mapping, where)` reads options spelled as casslab-load flags
(`in-flight` or `in_flight`) and applies the checks casslab-load applies (clap's types and
value lists, config.rs, exec::RunPlan::validate and the workloads' own `new`), so a bad
value fails where it is written instead of in every trial. `to_argv()` is the only place
the flags are spelled on a command line. tests/unit/test_load_options.py compares the
fields with `casslab-load <workload> --help` so the two sides cannot drift.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Self

from casslab.core.errors import UsageError

# casslab-load's `Cl` enum (config.rs): no SERIAL / LOCAL_SERIAL, it cannot use them.
CONSISTENCY_LEVELS = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                      "EACH_QUORUM", "LOCAL_ONE")
PHASES = ("load", "run", "both")
FORMATS = ("json", "ycsb")
# YCSB's measurement.interval: which latency the --format ycsb blocks report.
MEASUREMENT_INTERVALS = ("op", "intended", "both")
KEY_DISTRIBUTIONS = ("zipfian", "latest", "uniform", "hotspot")
YCSB_MAX_FIELDS = 32
IOT_SERIES = 5
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I32 = (-(2**31), 2**31 - 1)
# Cassandra's largest TTL (20 years, s); casslab-load's ranges.rs MAX_TTL_S.
MAX_TTL_S = 630_720_000
# casslab-load's MAX_IO_THREADS and MAX_VALUE_BYTES (config.rs).
MAX_IO_THREADS = 1024
MAX_VALUE_BYTES = 1 << 20
# casslab-load's exec::MAX_THREADS: the requests one CQL connection can have outstanding.
MAX_THREADS = 32_768
_DURATION_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "m": 60.0,
                   "min": 60.0, "h": 3600.0}
_TWCS_UNITS = ("MINUTES", "HOURS", "DAYS")


class OptionError(UsageError):
    """A casslab-load option is unknown or its value is one casslab-load refuses.

    `name` is the option as the user wrote it (`where.key`), `detail` what is wrong and
    what would be valid, so a spec reader can put its own line number in front.
    """

    def __init__(self, name: str, detail: str, key: str = "") -> None:
        super().__init__(f"{name}: {detail}")
        self.name = name
        self.detail = detail
        self.key = key  # the option as written in the mapping (a flag for combinations)


class _Invalid(ValueError):
    """A value check failed; the message says what would be valid."""


@dataclass(frozen=True)
class Warmup:
    """`--warmup`: an op count or a duration (casslab-load's `Warmup`)."""

    ops: int | None = None
    seconds: float | None = None

    def arg(self) -> str:
        return str(self.ops) if self.ops is not None else duration_arg(self.seconds or 0.0)


def duration_arg(seconds: float) -> str:
    """Seconds as a casslab-load duration (microseconds kept, no exponent notation)."""
    text = f"{seconds:.6f}".rstrip("0").rstrip(".")
    return f"{text}s"


def parse_duration_s(value: Any) -> float:
    """casslab-load's parse_duration: `500ms`, `30s`, `2m`, `1h`, bare number = seconds."""
    if isinstance(value, bool):
        raise _Invalid("is not a duration like 500ms, 30s, 2m, 1h")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9.]*)\s*([a-z]*)\s*", str(value))
        unit = m.group(2) if m else ""
        if not m or unit not in _DURATION_UNITS:
            raise _Invalid("is not a duration like 500ms, 30s, 2m, 1h (units ms, s, m, h)")
        try:
            seconds = float(m.group(1)) * _DURATION_UNITS[unit]
        except ValueError:
            raise _Invalid("is not a duration like 500ms, 30s, 2m, 1h") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise _Invalid("is not a non-negative duration")
    return seconds


# ---- value checks: each takes the raw value and returns the typed one ---------------------

Check = Callable[[Any], Any]


def _integer(lo: int = 0, hi: int = U64_MAX) -> Check:
    rule = f"an integer >= {lo}" if hi == U64_MAX else f"an integer in {lo}..={hi}"

    def check(value: Any) -> int:
        # A whole float (a concurrency resolved from '66%' of a peak) is that integer.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise _Invalid(f"must be {rule}")
        try:
            n = int(value)
        except ValueError:
            raise _Invalid(f"must be {rule}") from None
        if not lo <= n <= hi:
            raise _Invalid(f"must be {rule}")
        return n
    return check


def _number(*, positive: bool = False) -> Check:
    rule = "a number > 0" if positive else "a finite number"

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise _Invalid(f"must be {rule}")
        try:
            x = float(value)
        except ValueError:
            raise _Invalid(f"must be {rule}") from None
        if not math.isfinite(x) or (positive and x <= 0):
            raise _Invalid(f"must be {rule}")
        return x
    return check


def _fraction(*, open_ends: bool) -> Check:
    """A number between 0 and 1, the ends excluded or included (casslab-load's num())."""
    rule = "a number > 0 and < 1" if open_ends else "a number >= 0 and <= 1"

    def check(value: Any) -> float:
        try:
            x = float(_number()(value))
        except _Invalid:
            raise _Invalid(f"must be {rule}") from None
        if not (0 < x < 1 if open_ends else 0 <= x <= 1):
            raise _Invalid(f"must be {rule}")
        return x
    return check


def _positive_duration(value: Any) -> float:
    seconds = parse_duration_s(value)
    if not seconds > 0:
        raise _Invalid("must be a duration > 0")
    return seconds


def _duration(lo_s: float = 0.0, hi_s: float = math.inf, rule: str = "") -> Check:
    def check(value: Any) -> float:
        seconds = parse_duration_s(value)
        if not lo_s <= seconds <= hi_s:
            raise _Invalid(f"must be {rule}")
        return seconds
    return check


def _choice(valid: tuple[str, ...], *, consistency: bool = False) -> Check:
    def check(value: Any) -> str:
        text = str(value)
        if consistency:  # Cl::from_str: case-insensitive, `-` or `_`
            text = text.strip().upper().replace("-", "_")
        if not isinstance(value, str) or text not in valid:
            raise _Invalid(f"must be one of {', '.join(valid)}")
        return text
    return check


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid("is a flag: true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("must be a non-empty string")
    return value


def _percentiles(value: Any) -> str:
    """`95,99,99.9`: percentiles in (0, 100], as casslab-load's --percentiles takes them."""
    parts = str(value).split(",") if isinstance(value, str | int | float) else []
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if not numbers or not all(0 < x <= 100 for x in numbers):
        raise _Invalid("must be percentiles above 0 and at most 100, comma-separated "
                       "(e.g. 95,99,99.9)")
    return ",".join(_float_arg(x) for x in numbers)


def _path(value: Any) -> Path:
    if not isinstance(value, str | Path) or not str(value).strip():
        raise _Invalid("must be a file path")
    return Path(value)


def _client_slice(value: Any) -> str:
    text = str(value).strip()
    i, _, k = text.partition("/")
    if not (i.isdigit() and k.isdigit() and int(i) < int(k)):
        raise _Invalid("is not I/K with 0 <= I < K (e.g. 0/2, the first of two clients)")
    return text


_LABEL = re.compile(r"^(?!__)[A-Za-z_][A-Za-z0-9_]*=")
# Labels casslab-load sets on its series itself.
_OWN_LABELS = ("workload", "client", "stage", "op", "le", "quantile")


def _prom_label(value: Any) -> str:
    text = str(value)
    if not _LABEL.match(text):
        raise _Invalid("is not KEY=VALUE with a Prometheus label name (letters, digits, _), "
                       "e.g. lab=edge")
    if text.split("=", 1)[0] in _OWN_LABELS:
        raise _Invalid(f"names a label casslab-load sets itself ({', '.join(_OWN_LABELS)})")
    return text


def _hosts(value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items or not all(
            isinstance(h, str) and h.strip() for h in items):
        raise _Invalid("must be host[:port] contact points, comma separated")
    return tuple(h.strip() for h in items)


def _warmup(value: Any) -> Warmup:
    # Warmup::from_str: all digits = an op count, anything else a duration.
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return Warmup(ops=value)
    if isinstance(value, str) and value.strip().isdigit():
        return Warmup(ops=int(value.strip()))
    try:
        return Warmup(seconds=parse_duration_s(value))
    except _Invalid:
        raise _Invalid("must be an op count (5000) or a duration (10s)") from None


def _mix(op_names: tuple[str, ...] | None) -> Check:
    """OpMix::parse: NAME=WEIGHT,... with known names, weights >= 0, one of them > 0."""
    valid = f"; operations: {', '.join(op_names)}" if op_names else ""

    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise _Invalid(f"must be NAME=WEIGHT,... (e.g. read=0.95,update=0.05){valid}")
        total = 0.0
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            name, eq, weight = part.partition("=")
            if not eq:
                raise _Invalid(f"{part!r} is not NAME=WEIGHT{valid}")
            if op_names is not None and name.strip() not in op_names:
                raise _Invalid(f"unknown operation {name.strip()!r}{valid}")
            try:
                w = float(weight)
            except ValueError:
                raise _Invalid(f"weight {weight.strip()!r} is not a number") from None
            if not math.isfinite(w) or w < 0:
                raise _Invalid("weights must be non-negative numbers")
            total += w
        if total <= 0:
            raise _Invalid(f"at least one weight must be positive{valid}")
        return value
    return check


def _compaction(value: Any) -> str:
    """iot's compaction_options: stcs, lcs, ucs, twcs[:SIZE:UNIT] or a CQL map."""
    rule = "use stcs, lcs, ucs, twcs[:SIZE:MINUTES|HOURS|DAYS] or a CQL map '{...}'"
    if not isinstance(value, str):
        raise _Invalid(rule)
    text = value.strip()
    if text.startswith("{"):
        return value
    parts = text.split(":")
    kind = parts[0].lower()
    if kind in ("stcs", "lcs", "ucs") and len(parts) == 1:
        return value
    if kind == "twcs" and len(parts) in (1, 3):
        if len(parts) == 3 and not (parts[1].isdigit() and int(parts[1]) >= 1):
            raise _Invalid(f"window size {parts[1]!r} must be an integer >= 1")
        if len(parts) == 3 and parts[2].upper() not in _TWCS_UNITS:
            raise _Invalid(f"window unit {parts[2]!r} must be MINUTES, HOURS or DAYS")
        return value
    raise _Invalid(rule)


def _opt(flag: str, check: Check, *, run_only: bool = False,
         argv: Callable[[Any], str] = str) -> Any:
    """A field for casslab-load's `--flag`; None = casslab-load's default."""
    return field(default=None, metadata={"flag": flag, "check": check, "run_only": run_only,
                                         "argv": argv})


def _float_arg(x: float) -> str:
    # Whole numbers as integers (`--rate 100`), others exactly (repr round-trips).
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


# ---- the options --------------------------------------------------------------------------

@dataclass(frozen=True)
class LoadOptions:
    """Options every workload takes (casslab-load's ConnArgs and RunArgs).

    Durations are seconds (`*_s`) and go out as `<n>s`; None means casslab-load's default.
    `run_only` fields shape the measured run, not the data, and are left out of a load phase.
    """

    family: ClassVar[str] = ""
    op_names: ClassVar[tuple[str, ...] | None] = None

    # ConnArgs
    hosts: tuple[str, ...] | None = _opt("hosts", _hosts, argv=",".join)
    dc: str | None = _opt("dc", _text)
    cl_read: str | None = _opt("cl-read", _choice(CONSISTENCY_LEVELS, consistency=True))
    cl_write: str | None = _opt("cl-write", _choice(CONSISTENCY_LEVELS, consistency=True))
    timeout_s: float | None = _opt("timeout", _positive_duration, argv=duration_arg)
    no_retry: bool | None = _opt("no-retry", _flag)
    # Re-issues of a request that failed on a busy cluster (cassandra-stress's
    # `-errors retries=N`); a campaign's load phase uses LOAD_PHASE_ERROR_RETRIES.
    error_retries: int | None = _opt("error-retries", _integer(0, 2**32 - 1))
    # The Tokio runtime's threads (casslab-load's --io-threads), not the client count.
    io_threads: int | None = _opt("io-threads", _integer(1, MAX_IO_THREADS))
    tls: bool | None = _opt("tls", _flag)
    tls_ca: Path | None = _opt("tls-ca", _path)
    tls_cert: Path | None = _opt("tls-cert", _path)
    tls_key: Path | None = _opt("tls-key", _path)
    tls_insecure: bool | None = _opt("tls-insecure", _flag)
    # RunArgs
    phase: str | None = _opt("phase", _choice(PHASES))
    ops: int | None = _opt("ops", _integer(), run_only=True)
    duration_s: float | None = _opt("duration", _positive_duration, run_only=True,
                                       argv=duration_arg)
    warmup: Warmup | None = _opt("warmup", _warmup, run_only=True, argv=Warmup.arg)
    workers: int | None = _opt("workers", _integer(1))
    in_flight: int | None = _opt("in-flight", _integer(1))
    # Closed-loop clients of one request each (YCSB -threads), instead of workers x in-flight.
    # Run only: the data loaded does not depend on them, and a load phase at the run's
    # hundreds of clients timed out writes on a busy machine (seed 004's 450).
    threads: int | None = _opt("threads", _integer(1, MAX_THREADS), run_only=True)
    think_time_s: float | None = _opt("think-time", _duration(), run_only=True,
                                      argv=duration_arg)
    rate_ops_s: float | None = _opt("rate", _number(positive=True), run_only=True,
                                    argv=_float_arg)
    tick_s: float | None = _opt("tick", _duration(0.001, 1.0, "between 1ms and 1s"),
                                argv=duration_arg)
    # Stop once the standard error of the mean interval throughput is below this fraction
    # of the mean (cassandra-stress err<), after converge-min and before converge-max
    # intervals (n> and n<).
    converge: float | None = _opt("converge", _fraction(open_ends=True), run_only=True,
                                  argv=_float_arg)
    converge_min: int | None = _opt("converge-min", _integer(2), run_only=True)
    converge_max: int | None = _opt("converge-max", _integer(2), run_only=True)
    stages: Path | None = _opt("stages", _path, run_only=True)
    # Each family narrows the check to its operation names.
    mix: str | None = _opt("mix", _mix(None), run_only=True)
    ttl_s: int | None = _opt("ttl-s", _integer(0, MAX_TTL_S), run_only=True)
    interval_s: float | None = _opt("interval", _duration(0.01, rule="at least 10ms"),
                                    run_only=True, argv=duration_arg)
    format: str | None = _opt("format", _choice(FORMATS))
    hdr_log: Path | None = _opt("hdr-log", _path, run_only=True)
    # The --format ycsb text: its percentile lines (YCSB's hdrhistogram.percentiles) and
    # which latency its blocks report (YCSB's measurement.interval).
    percentiles: str | None = _opt("percentiles", _percentiles, run_only=True)
    measurement_interval: str | None = _opt("measurement-interval",
                                            _choice(MEASUREMENT_INTERVALS), run_only=True)
    # Live metrics for Prometheus on HOST:PORT during the run (casslab-load's /metrics).
    prometheus: str | None = _opt("prometheus", _text, run_only=True)
    prometheus_linger_s: float | None = _opt("prometheus-linger", _duration(), run_only=True,
                                             argv=duration_arg)
    # One KEY=VALUE label on every series (more: repeat the flag among the extra arguments).
    prometheus_label: str | None = _opt("prometheus-label", _prom_label, run_only=True)
    seed: int | None = _opt("seed", _integer())
    # Client I of K of one run, and the shared start (seconds since the epoch): set by
    # casslab.load.multi for each of the K processes.
    client: str | None = _opt("client", _client_slice, run_only=True)
    start_at_s: float | None = _opt("start-at", _number(positive=True), run_only=True,
                                    argv=_float_arg)
    unreachable_after_s: float | None = _opt("unreachable-after", _positive_duration, run_only=True,
                                             argv=duration_arg)

    def to_argv(self) -> list[str]:
        """The options as casslab-load arguments (unset options and false flags left out)."""
        argv: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value is False:
                continue
            flag = f"--{f.metadata['flag']}"
            argv += [flag] if value is True else [flag, f.metadata["argv"](value)]
        return argv

    def to_mapping(self) -> dict[str, Any]:
        """The set options as {flag: value}, what from_mapping reads back."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            plain = isinstance(value, bool | int | float | str)
            out[f.metadata["flag"]] = value if plain else f.metadata["argv"](value)
        return out

    def for_load_phase(self) -> Self:
        """These options without those that only shape the measured run."""
        return replace(self, **{f.name: None for f in fields(self) if f.metadata["run_only"]})

    @classmethod
    def flags(cls) -> tuple[str, ...]:
        """Every flag this family takes, without dashes."""
        return tuple(f.metadata["flag"] for f in fields(cls))

    @classmethod
    def flag(cls, name: str) -> str:
        """The flag of field `name` (e.g. table_ttl_s -> table-ttl-s)."""
        return str(next(f.metadata["flag"] for f in fields(cls) if f.name == name))

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], where: str = "options") -> Self:
        """Options from {flag: value}; None values are left unset.

        Raises OptionError naming `where.flag`, the value and what would be valid.
        """
        by_flag = {f.metadata["flag"]: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in mapping.items():
            flag = canonical(str(key))
            name = f"{where}.{key}" if where else f"--{flag}"
            f = by_flag.get(flag)
            if f is None:
                raise OptionError(name, _unknown(cls, flag), str(key))
            if raw is None:
                continue
            try:
                values[f.name] = f.metadata["check"](raw)
            except _Invalid as exc:
                detail = (f"{raw!r} {exc}" if str(exc).startswith(("must", "is "))
                          else f"{raw!r}: {exc}")
                raise OptionError(name, detail, str(key)) from None
        options = cls(**values)
        options._check_together(where)
        return options

    def _check_together(self, where: str) -> None:
        """Rules between options (clap's requires / conflicts_with, app.rs)."""
        def name(flag: str) -> str:
            return f"{where}.{flag}" if where else f"--{flag}"

        if (self.tls_cert is None) != (self.tls_key is None):
            missing = "tls-key" if self.tls_key is None else "tls-cert"
            raise OptionError(name(missing), "is required with "
                              f"{'tls-cert' if missing == 'tls-key' else 'tls-key'} "
                              "(mutual TLS needs both)", missing)
        if self.tls_insecure and self.tls_ca is not None:
            raise OptionError(name("tls-insecure"), "cannot be used with tls-ca (give one)",
                              "tls-insecure")
        if self.threads is not None and (self.workers is not None or
                                         self.in_flight is not None):
            other = "workers" if self.workers is not None else "in-flight"
            raise OptionError(name("threads"), f"cannot be used with {other}: threads N is N "
                              "closed-loop clients, workers x in-flight the other way to "
                              "give concurrency (give one)", "threads")
        if self.think_time_s is not None and self.threads is None:
            raise OptionError(name("think-time"), "needs threads (it is the pause of each "
                              "closed-loop client)", "think-time")
        if self.think_time_s is not None and self.rate_ops_s is not None:
            raise OptionError(name("think-time"), "cannot be used with rate (give one)",
                              "think-time")
        if self.converge is not None and self.converge >= 1:
            raise OptionError(name("converge"), f"{self.converge:g} is not a fraction of the "
                              "mean (valid: > 0 and < 1, e.g. 0.02)", "converge")
        for bound in ("converge-min", "converge-max"):
            if getattr(self, bound.replace("-", "_")) is not None and self.converge is None:
                raise OptionError(name(bound), "needs converge (it bounds the intervals of "
                                  "the stop on convergence)", bound)
        if (self.converge_min is not None and self.converge_max is not None
                and self.converge_min > self.converge_max):
            raise OptionError(name("converge-min"), f"{self.converge_min} is more than "
                              f"converge-max {self.converge_max}", "converge-min")
        if self.stages is not None and (self.ops is not None or self.duration_s is not None):
            raise OptionError(name("stages"), "give ops/duration inside the stages file, "
                              "not as options", "stages")


def _unknown(cls: type[LoadOptions], flag: str) -> str:
    valid = cls.flags()
    close = difflib.get_close_matches(flag, valid, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return (f"unknown casslab-load option for {cls.family} workloads ({hint}valid: "
            f"{', '.join(valid)})")


@dataclass(frozen=True)
class SchemaOptions(LoadOptions):
    """Built-in workloads' keyspace and SchemaArgs."""

    keyspace: str | None = _opt("keyspace", _text)
    # A keyspace with no replica holds nothing: casslab refuses rf 0 before a run.
    rf: int | None = _opt("rf", _integer(1, U32_MAX))
    drop: bool | None = _opt("drop", _flag)


@dataclass(frozen=True)
class YcsbOptions(SchemaOptions):
    family: ClassVar[str] = "ycsb"
    op_names: ClassVar[tuple[str, ...] | None] = ("read", "update", "insert", "scan", "rmw")

    mix: str | None = _opt("mix", _mix(op_names), run_only=True)
    records: int | None = _opt("records", _integer(1))
    distribution: str | None = _opt("distribution", _choice(KEY_DISTRIBUTIONS), run_only=True)
    field_count: int | None = _opt("field-count", _integer(1, YCSB_MAX_FIELDS))
    field_length: int | None = _opt("field-length", _integer(0, MAX_VALUE_BYTES))
    max_scan_length: int | None = _opt("max-scan-length", _integer(1))
    zipfian_constant: float | None = _opt("zipfian-constant", _fraction(open_ends=True),
                                              argv=_float_arg)
    hotspot_data_fraction: float | None = _opt("hotspot-data-fraction", _fraction(open_ends=False),
                                               argv=_float_arg)
    hotspot_opn_fraction: float | None = _opt("hotspot-opn-fraction", _fraction(open_ends=False),
                                              argv=_float_arg)


@dataclass(frozen=True)
class StressOptions(SchemaOptions):
    family: ClassVar[str] = "stress"
    op_names: ClassVar[tuple[str, ...] | None] = ("write", "read")

    mix: str | None = _opt("mix", _mix(op_names), run_only=True)
    records: int | None = _opt("records", _integer(1))
    pop: str | None = _opt("pop", _text)
    column_size: int | None = _opt("column-size", _integer(1, MAX_VALUE_BYTES))
    # Drawn column sizes and counts (cassandra-stress -col size=DIST n=DIST), checked by
    # casslab-load's distribution parser.
    column_size_dist: str | None = _opt("column-size-dist", _text)
    columns: str | None = _opt("columns", _text)
    # The keyspace's replication as a CQL map, instead of rf (cassandra-stress
    # -schema replication(strategy=NetworkTopologyStrategy,dc1=3)).
    replication: str | None = _opt("replication", _text)
    compaction: str | None = _opt("compaction", _compaction)


@dataclass(frozen=True)
class IotOptions(SchemaOptions):
    family: ClassVar[str] = "iot"
    op_names: ClassVar[tuple[str, ...] | None] = ("insert", "devdat", "lesrow", "avgdat")

    mix: str | None = _opt("mix", _mix(op_names), run_only=True)
    devices: int | None = _opt("devices", _integer(1))
    series: int | None = _opt("series", _integer(1, IOT_SERIES))
    values_per_insert: int | None = _opt("values-per-insert", _integer(1, 10_000))
    table_ttl_s: int | None = _opt("table-ttl-s", _integer(0, MAX_TTL_S))
    compaction: str | None = _opt("compaction", _compaction)


@dataclass(frozen=True)
class UserOptions(LoadOptions):
    family: ClassVar[str] = "user"

    # The operation names come from the profile, read by casslab-load itself.
    mix: str | None = _opt("mix", _mix(None), run_only=True)
    records: int | None = _opt("records", _integer(1))
    pop: str | None = _opt("pop", _text)
    # A keyspace with no replica holds nothing: casslab refuses rf 0 before a run.
    rf: int | None = _opt("rf", _integer(1, U32_MAX))
    # The profile's insert.batchtype overridden (cassandra-stress -insert batchtype=).
    batchtype: str | None = _opt("batchtype", _choice(("LOGGED", "UNLOGGED"), consistency=True))


# Flags the workload name sets (`ycsb-a` -> --workload a, `iot-full-latest` -> --reads
# full-latest, a .yaml -> --profile), not options.
SELECTOR_FLAGS = {"ycsb": ("workload",), "stress": (), "iot": ("reads",), "user": ("profile",)}
FAMILIES: dict[str, type[LoadOptions]] = {
    c.family: c for c in (YcsbOptions, StressOptions, IotOptions, UserOptions)}


def family_of(workload: str) -> str:
    """ycsb, stress, iot or user (a cassandra-stress profile .yaml) for a workload name."""
    if workload.startswith("ycsb-"):
        return "ycsb"
    if workload.startswith("stress-"):
        return "stress"
    iot = workload == "iot" or workload.startswith("iot-")
    return "iot" if iot and not workload.endswith((".yaml", ".yml")) else "user"


def options_class(workload: str) -> type[LoadOptions]:
    return FAMILIES[family_of(workload)]


def canonical(key: str) -> str:
    """An option name as its flag (`in_flight` -> `in-flight`)."""
    return key.replace("_", "-")


def from_mapping(workload: str, mapping: Mapping[str, Any],
                 where: str = "options") -> LoadOptions:
    """The typed options of `workload` from {flag: value} (see LoadOptions.from_mapping)."""
    return options_class(workload).from_mapping(mapping, where)
