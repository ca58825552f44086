"""casslab-load's options as typed dataclasses, checked by the rules casslab-load describes.

`casslab-load options --json` describes every option of every workload (value kind,
default, valid values, range, conflicts, requirements), read from its clap definitions.
This module builds its checks from that description: a range, a value list or a rule
between options is written once, in crates/load/src/config.rs. The dataclasses below
are only the typed view (attribute names with units, Python types, which options shape
the run only); a test holds their fields to the description's options.

The description is read at BUILD time: src/casslab/load/options.json, written by
`casslab-load options --json` and committed. A cargo test
(describe::tests::the_committed_description_is_the_binarys) fails when config.rs
changes and the file does not, and tests/unit/test_load_options.py compares the file
with the built binary's output. Why not at run time: a spec is checked where no
casslab-load runs (`experiment plan`, `k8s render`, a notebook on a laptop), and a
check that calls a binary would make reading a spec depend on which binary is found.

Not in clap's rules, so still here: the grammars of free text that casslab-load reads
after parsing (`mix` names per family, `compaction` forms; keyed by flag), and one rule
between values (converge-min <= converge-max, exec::RunPlan::validate). Durations go
through casslab.core.units, the grammar casslab-load's units.rs shares.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Self

from casslab.core import units
from casslab.core.errors import UsageError

DESCRIPTION = Path(__file__).with_name("options.json")
# The description's shape this module reads (describe::SCHEMA).
SCHEMA = 1


class OptionError(UsageError):
    """A casslab-load option is unknown or its value is one casslab-load refuses.

    `name` is the option as the user wrote it (`where.key`), `detail` what is wrong and
    what would be valid, so a spec reader can put its own line number in front.
    """

    def __init__(self, name: str, detail: str, key: str = "") -> None:
        super().__init__(f"{name}: {detail}")
        self.name = name
        self.detail = detail
        self.key = key  # the option as written in the mapping


class _Invalid(ValueError):
    """A value check failed; the message says what would be valid."""


class _Stated(_Invalid):
    """A value check failed with a message that quotes the value itself."""


# ---- the description ----------------------------------------------------------------------

@dataclass(frozen=True)
class End:
    """One end of a range: the value, and whether the range holds it."""

    value: float
    closed: bool

    @classmethod
    def of(cls, raw: Any) -> End | None:
        """From the description's {"end": "open"|"closed"|"none", "value": x}."""
        if raw is None or raw.get("end") == "none":
            return None
        return cls(float(raw["value"]), raw["end"] == "closed")


@dataclass(frozen=True)
class Rule:
    """One option as casslab-load describes it."""

    flag: str
    kind: str  # integer, number, duration, choice, flag, text, path, warmup, client, label
    positional: bool = False
    multiple: bool = False
    delimiter: str | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()  # (alias, name)
    ignore_case: bool = False
    low: End | None = None
    high: End | None = None
    conflicts_with: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    default: tuple[str, ...] = ()  # casslab-load's default value(s), as text

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Rule:
        """From one entry of a command's `options` in the description."""
        choices = raw.get("choices") or []
        rng = raw.get("range") or {}
        if rng.get("kind") == "integer":  # integers: closed ends, max null = no bound
            low: End | None = End(float(rng["min"]), True)
            high = None if rng.get("max") is None else End(float(rng["max"]), True)
        else:
            low, high = End.of(rng.get("min")), End.of(rng.get("max"))
        return cls(
            flag=str(raw["flag"]), kind=str(raw["kind"]), positional=bool(raw["positional"]),
            multiple=bool(raw["multiple"]), delimiter=raw.get("delimiter"),
            choices=tuple(c["name"] for c in choices),
            aliases=tuple((a, c["name"]) for c in choices for a in c["aliases"]),
            ignore_case=bool(raw["ignore_case"]), low=low, high=high,
            conflicts_with=tuple(raw["conflicts_with"]), requires=tuple(raw["requires"]),
            default=tuple(str(d) for d in raw.get("default") or ()))


@dataclass(frozen=True)
class Description:
    """Every casslab-load command's options by flag (`casslab-load options --json`)."""

    commands: Mapping[str, Mapping[str, Rule]]

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Description:
        if raw.get("schema") != SCHEMA:
            raise UsageError(f"casslab-load options description: schema {raw.get('schema')!r} "
                             f"is not {SCHEMA} (regenerate {DESCRIPTION.name})")
        return cls({name: {str(o["flag"]): Rule.of(o) for o in command["options"]}
                    for name, command in raw["commands"].items()})

    @classmethod
    def read(cls, path: Path) -> Description:
        return cls.of(json.loads(path.read_text()))

    def rules(self, family: str) -> Mapping[str, Rule]:
        """The options of workload family `family` (its casslab-load subcommand)."""
        return self.commands[family]


@cache
def shipped() -> Description:
    """The description committed beside this module (read once per process)."""
    return Description.read(DESCRIPTION)


# ---- value checks: each takes the raw value and returns the typed one ---------------------

Check = Callable[[Any], Any]


def duration_arg(seconds: float) -> str:
    """Seconds as a casslab-load duration (microseconds kept, no exponent notation)."""
    text = f"{seconds:.6f}".rstrip("0").rstrip(".")
    return f"{text}s"


def _seconds(value: Any) -> float:
    """casslab.core.units' duration grammar, the one casslab-load's units.rs shares."""
    try:
        return units.parse_duration_s(value, "value")
    except UsageError as exc:
        raise _Stated(str(exc).removeprefix("value: ")) from None


def _show_s(seconds: float) -> str:
    """A duration as units.rs' show_dur writes it (0, 1ms, 10s, 250us)."""
    if seconds == 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        n = seconds / scale
        if abs(n - round(n)) < 1e-9:
            return f"{round(n)}{unit}"
    return f"{seconds}s"


def _range_text(what: str, rule: Rule, show: Callable[[float], str]) -> str:
    """ranges.rs' rule(): `must be a number > 0 and < 1`."""
    ends = [f"{'>=' if e.closed else '>'} {show(e.value)}" for e in (rule.low,) if e] + \
        [f"{'<=' if e.closed else '<'} {show(e.value)}" for e in (rule.high,) if e]
    return f"must be {what} {' and '.join(ends)}".rstrip()


def _within(rule: Rule, x: float) -> bool:
    lo, hi = rule.low, rule.high
    return ((lo is None or (lo.value <= x if lo.closed else lo.value < x))
            and (hi is None or (x <= hi.value if hi.closed else x < hi.value)))


def _integer(rule: Rule) -> Check:
    lo = int(rule.low.value) if rule.low else 0
    text = (f"must be an integer >= {lo}" if rule.high is None
            else f"must be an integer in {lo}..={int(rule.high.value)}")

    def check(value: Any) -> int:
        # A whole float (a concurrency resolved from '66%' of a peak) is that integer.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise _Invalid(text)
        try:
            n = int(value)
        except ValueError:
            raise _Invalid(text) from None
        if not _within(rule, n):
            raise _Invalid(text)
        return n
    return check


def _number(rule: Rule) -> Check:
    text = _range_text("a number", rule, lambda v: f"{v:g}")

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise _Invalid(text)
        try:
            x = float(value)
        except ValueError:
            raise _Invalid(text) from None
        if not math.isfinite(x) or not _within(rule, x):
            raise _Invalid(text)
        return x
    return check


def _duration(rule: Rule) -> Check:
    def check(value: Any) -> float:
        seconds = _seconds(value)
        if not _within(rule, seconds):
            raise _Invalid(_range_text("a duration", rule, _show_s))
        return seconds
    return check


def _choice(rule: Rule) -> Check:
    """clap's value list: a name or alias, in any case with ignore_case."""
    table = {**{c: c for c in rule.choices}, **dict(rule.aliases)}

    def key(text: str) -> str:
        return text.upper() if rule.ignore_case else text

    by_key = {key(k): v for k, v in table.items()}

    def check(value: Any) -> str:
        name = by_key.get(key(value.strip())) if isinstance(value, str) else None
        if name is None:
            raise _Invalid(f"must be one of {', '.join(rule.choices)}")
        return name
    return check


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid("is a flag: true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid("must be a non-empty string")
    return value


def _texts(rule: Rule) -> Check:
    """A repeated option given as a list, or as one string split at its delimiter."""
    def check(value: Any) -> tuple[str, ...]:
        items = value.split(rule.delimiter) if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not items or not all(
                isinstance(h, str) and h.strip() for h in items):
            raise _Invalid(f"must be one or more non-empty values, '{rule.delimiter}' "
                           "separated")
        return tuple(h.strip() for h in items)
    return check


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


def _warmup(value: Any) -> Warmup:
    # Warmup::from_str: all digits = an op count, anything else a duration.
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return Warmup(ops=value)
    if isinstance(value, str) and value.strip().isdigit():
        return Warmup(ops=int(value.strip()))
    try:
        return Warmup(seconds=_seconds(value))
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


_TWCS_UNITS = ("MINUTES", "HOURS", "DAYS")


def _compaction(value: Any) -> str:
    """iot's compaction_map: stcs, lcs, ucs, twcs[:SIZE:UNIT] or a CQL map."""
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


def check_of(rule: Rule, op_names: tuple[str, ...] | None = None) -> Check:
    """The check of one described option: its kind's grammar within its range and values.

    Free text casslab-load reads after parsing has its grammar by flag (mix, compaction).
    """
    if rule.flag == "mix":
        return _mix(op_names)
    if rule.flag == "compaction":
        return _compaction
    kinds: dict[str, Callable[[], Check]] = {
        "integer": lambda: _integer(rule), "number": lambda: _number(rule),
        "duration": lambda: _duration(rule), "choice": lambda: _choice(rule),
        "flag": lambda: _flag, "path": lambda: _path, "warmup": lambda: _warmup,
        "client": lambda: _client_slice, "label": lambda: _prom_label,
        "text": lambda: _texts(rule) if rule.multiple and rule.delimiter else _text,
    }
    if rule.kind not in kinds:
        raise UsageError(f"casslab-load option --{rule.flag}: kind {rule.kind!r} is not one "
                         f"casslab knows ({', '.join(kinds)}); casslab is older than the binary")
    if rule.multiple and rule.delimiter and rule.kind != "text":
        return _each(rule, kinds[rule.kind]())
    return kinds[rule.kind]()


def _each(rule: Rule, item: Check) -> Check:
    """A delimited list (`95,99,99.9`) whose every item passes the kind's check; kept as
    the text casslab-load reads."""
    delimiter = rule.delimiter or ","

    def check(value: Any) -> str:
        items = value.split(delimiter) if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not items:
            raise _Invalid(f"must be one or more values, '{delimiter}' separated")
        for it in items:
            item(it.strip() if isinstance(it, str) else it)
        return delimiter.join(str(it).strip() for it in items)
    return check


@dataclass(frozen=True)
class Warmup:
    """`--warmup`: an op count or a duration (casslab-load's `Warmup`)."""

    ops: int | None = None
    seconds: float | None = None

    def arg(self) -> str:
        return str(self.ops) if self.ops is not None else duration_arg(self.seconds or 0.0)


def _opt(flag: str, *, run_only: bool = False, argv: Callable[[Any], str] = str) -> Any:
    """A field for casslab-load's `--flag`; None = casslab-load's default."""
    return field(default=None, metadata={"flag": flag, "run_only": run_only, "argv": argv})


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
    hosts: tuple[str, ...] | None = _opt("hosts", argv=",".join)
    dc: str | None = _opt("dc")
    cl_read: str | None = _opt("cl-read")
    cl_write: str | None = _opt("cl-write")
    timeout_s: float | None = _opt("timeout", argv=duration_arg)
    no_retry: bool | None = _opt("no-retry")
    # Re-issues of a request that failed on a busy cluster (cassandra-stress's
    # `-errors retries=N`); a campaign's load phase, local or a k8s prepare Job, uses
    # LOAD_PHASE_ERROR_RETRIES (casslab.experiment.loadphase).
    error_retries: int | None = _opt("error-retries")
    # The Tokio runtime's threads (casslab-load's --io-threads), not the client count.
    io_threads: int | None = _opt("io-threads")
    tls: bool | None = _opt("tls")
    tls_ca: Path | None = _opt("tls-ca")
    tls_cert: Path | None = _opt("tls-cert")
    tls_key: Path | None = _opt("tls-key")
    tls_insecure: bool | None = _opt("tls-insecure")
    # RunArgs
    phase: str | None = _opt("phase")
    ops: int | None = _opt("ops", run_only=True)
    duration_s: float | None = _opt("duration", run_only=True, argv=duration_arg)
    warmup: Warmup | None = _opt("warmup", run_only=True, argv=Warmup.arg)
    workers: int | None = _opt("workers")
    in_flight: int | None = _opt("in-flight")
    # Closed-loop clients of one request each (YCSB -threads), instead of workers x in-flight.
    # Run only: the data loaded does not depend on them, and a load phase at the run's
    # hundreds of clients timed out writes on a busy machine (seed 004's 450).
    threads: int | None = _opt("threads", run_only=True)
    think_time_s: float | None = _opt("think-time", run_only=True, argv=duration_arg)
    rate_ops_s: float | None = _opt("rate", run_only=True, argv=_float_arg)
    tick_s: float | None = _opt("tick", argv=duration_arg)
    # Stop once the standard error of the mean interval throughput is below this fraction
    # of the mean (cassandra-stress err<), after converge-min and before converge-max
    # intervals (n> and n<).
    converge: float | None = _opt("converge", run_only=True, argv=_float_arg)
    converge_min: int | None = _opt("converge-min", run_only=True)
    converge_max: int | None = _opt("converge-max", run_only=True)
    stages: Path | None = _opt("stages", run_only=True)
    # Checked against the family's op_names (user profiles: by casslab-load).
    mix: str | None = _opt("mix", run_only=True)
    ttl_s: int | None = _opt("ttl-s", run_only=True)
    interval_s: float | None = _opt("interval", run_only=True, argv=duration_arg)
    format: str | None = _opt("format")
    hdr_log: Path | None = _opt("hdr-log", run_only=True)
    # The --format ycsb text: its percentile lines (YCSB's hdrhistogram.percentiles) and
    # which latency its blocks report (YCSB's measurement.interval).
    percentiles: str | None = _opt("percentiles", run_only=True)
    measurement_interval: str | None = _opt("measurement-interval", run_only=True)
    # Live metrics for Prometheus on HOST:PORT during the run (casslab-load's /metrics).
    prometheus: str | None = _opt("prometheus", run_only=True)
    prometheus_linger_s: float | None = _opt("prometheus-linger", run_only=True, argv=duration_arg)
    # One KEY=VALUE label on every series (more: repeat the flag among the extra arguments).
    prometheus_label: str | None = _opt("prometheus-label", run_only=True)
    seed: int | None = _opt("seed")
    # Client I of K of one run, and the shared start (seconds since the epoch): set by
    # casslab.load.multi for each of the K processes.
    client: str | None = _opt("client", run_only=True)
    start_at_s: float | None = _opt("start-at", run_only=True, argv=_float_arg)
    unreachable_after_s: float | None = _opt("unreachable-after", run_only=True, argv=duration_arg)

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
            # Values with their own spelling (durations in seconds, hosts) as casslab-load's.
            plain = isinstance(value, bool | int | float | str) and f.metadata["argv"] is str
            out[f.metadata["flag"]] = value if plain else f.metadata["argv"](value)
        return out

    def for_load_phase(self, overrides: Mapping[str, Any] | None = None,
                       where: str = "workload.load_options") -> Self:
        """These options without those that only shape the measured run, then
        `overrides` ({flag: value}, a spec's workload.load_options) on top: the load phase
        may run at its own concurrency, since the data it writes does not depend on it."""
        base = replace(self, **{f.name: None for f in fields(self) if f.metadata["run_only"]})
        if not overrides:
            return base
        bad = sorted(canonical(str(k)) for k in overrides if canonical(str(k)) in
                     self.run_only_flags())
        if bad:
            raise OptionError(f"{where}.{bad[0]}", "shapes only the measured run, not the "
                              "load phase; set it in workload.options or stop:", bad[0])
        return type(self).from_mapping({**base.to_mapping(), **overrides}, where)

    @classmethod
    def run_only_flags(cls) -> tuple[str, ...]:
        """The flags a load phase leaves out (they shape the measured run only)."""
        return tuple(f.metadata["flag"] for f in fields(cls) if f.metadata["run_only"])

    @classmethod
    def flags(cls) -> tuple[str, ...]:
        """Every flag this family takes, without dashes."""
        return tuple(f.metadata["flag"] for f in fields(cls))

    @classmethod
    def flag(cls, name: str) -> str:
        """The flag of field `name` (e.g. table_ttl_s -> table-ttl-s)."""
        return str(next(f.metadata["flag"] for f in fields(cls) if f.name == name))

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], where: str = "options",
                     description: Description | None = None) -> Self:
        """Options from {flag: value}; None values are left unset.

        Checked by `description` (default: the one shipped with casslab, see the module
        docstring). Raises OptionError naming `where.flag`, the value and what would be
        valid.
        """
        rules = (description or shipped()).rules(cls.family)
        by_flag = {f.metadata["flag"]: f for f in fields(cls)}
        values: dict[str, Any] = {}
        given: dict[str, str] = {}  # flag -> the key as written
        for key, raw in mapping.items():
            flag = canonical(str(key))
            name = _name(where, str(key), flag)
            rule, f = rules.get(flag), by_flag.get(flag)
            if rule is None or f is None or rule.positional:
                raise OptionError(name, cls._unknown(flag, rules, rule), str(key))
            if raw is None:
                continue
            try:
                values[f.name] = check_of(rule, cls.op_names)(raw)
            except _Stated as exc:
                raise OptionError(name, str(exc), str(key)) from None
            except _Invalid as exc:
                detail = (f"{raw!r} {exc}" if str(exc).startswith(("must", "is "))
                          else f"{raw!r}: {exc}")
                raise OptionError(name, detail, str(key)) from None
            given[flag] = str(key)
        _check_together(rules, given, where)
        options = cls(**values)
        options._check_values(where, given, rules)
        return options

    def _check_values(self, where: str, given: Mapping[str, str],
                      rules: Mapping[str, Rule]) -> None:
        """The rules between values that clap cannot state (RunPlan::validate)."""
        lo, hi = self.converge_min, self.converge_max
        if lo is not None and hi is not None and lo > hi:
            key = given.get("converge-min", "converge-min")
            raise OptionError(_name(where, key, "converge-min"), f"{lo} is more than "
                              f"converge-max {hi}", key)

    @classmethod
    def _unknown(cls, flag: str, rules: Mapping[str, Rule], rule: Rule | None) -> str:
        if rule is not None and flag in SELECTOR_FLAGS.get(cls.family, ()):
            return f"is set by the workload's name, not as an option of {cls.family} workloads"
        if rule is not None and not rule.positional:
            return (f"casslab-load {cls.family} takes it, but casslab has no field for it "
                    "(casslab.load.options is older than the description)")
        valid = [f for f, r in rules.items()
                 if not r.positional and f not in SELECTOR_FLAGS.get(cls.family, ())]
        close = difflib.get_close_matches(flag, valid, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return (f"unknown casslab-load option for {cls.family} workloads ({hint}valid: "
                f"{', '.join(valid)})")


def _name(where: str, key: str, flag: str) -> str:
    """An option as an error names it: `where.key`, or the command-line flag."""
    return f"{where}.{key}" if where else f"--{flag}"


def _check_together(rules: Mapping[str, Rule], given: Mapping[str, str], where: str) -> None:
    """clap's conflicts_with and requires between the options given (defaults do not count,
    as in clap)."""
    for flag, key in given.items():
        rule = rules[flag]
        for other in rule.conflicts_with:
            if other in given:
                raise OptionError(_name(where, key, flag), f"cannot be used with {other} "
                                  "(casslab-load takes one of them)", key)
        missing = [other for other in rule.requires if other not in given]
        if missing:
            raise OptionError(_name(where, key, flag), f"needs {' and '.join(missing)}", key)


@dataclass(frozen=True)
class SchemaOptions(LoadOptions):
    """Built-in workloads' keyspace and SchemaArgs."""

    keyspace: str | None = _opt("keyspace")
    # A keyspace with no replica holds nothing: casslab refuses rf 0 before a run.
    rf: int | None = _opt("rf")
    drop: bool | None = _opt("drop")


@dataclass(frozen=True)
class YcsbOptions(SchemaOptions):
    family: ClassVar[str] = "ycsb"
    op_names: ClassVar[tuple[str, ...] | None] = ("read", "update", "insert", "scan", "rmw")

    records: int | None = _opt("records")
    distribution: str | None = _opt("distribution", run_only=True)
    field_count: int | None = _opt("field-count")
    field_length: int | None = _opt("field-length")
    max_scan_length: int | None = _opt("max-scan-length")
    zipfian_constant: float | None = _opt("zipfian-constant", argv=_float_arg)
    hotspot_data_fraction: float | None = _opt("hotspot-data-fraction", argv=_float_arg)
    hotspot_opn_fraction: float | None = _opt("hotspot-opn-fraction", argv=_float_arg)
    # The load inserts key numbers insert-start..insert-start+insert-count-1 of `records`
    # (YCSB insertstart/insertcount: a load split across client machines); the run
    # phase draws from them too, so not run_only.
    insert_start: int | None = _opt("insert-start")
    insert_count: int | None = _opt("insert-count")

    def _check_values(self, where: str, given: Mapping[str, str],
                      rules: Mapping[str, Rule]) -> None:
        """Also ycsb::InsertRange::of: the inserted keys lie within the records."""
        super()._check_values(where, given, rules)
        if self.insert_start is None and self.insert_count is None:
            return
        records = self.records if self.records is not None else int(rules["records"].default[0])
        start = self.insert_start or 0
        if self.insert_count is None:
            if start >= records:
                key = given.get("insert-start", "insert-start")
                raise OptionError(_name(where, key, "insert-start"), f"{start} is not below "
                                  f"records {records} (the load inserts key numbers "
                                  "insert-start..records-1)", key)
            return
        if start + self.insert_count > records:
            key = given.get("insert-count", "insert-count")
            raise OptionError(_name(where, key, "insert-count"), f"insert-start {start} + "
                              f"insert-count {self.insert_count} is more than records "
                              f"{records} (the load inserts key numbers insert-start.."
                              "insert-start+insert-count-1 of the records)", key)


@dataclass(frozen=True)
class StressOptions(SchemaOptions):
    family: ClassVar[str] = "stress"
    op_names: ClassVar[tuple[str, ...] | None] = ("write", "read")

    records: int | None = _opt("records")
    pop: str | None = _opt("pop")
    column_size: int | None = _opt("column-size")
    # Drawn column sizes and counts (cassandra-stress -col size=DIST n=DIST), checked by
    # casslab-load's distribution parser.
    column_size_dist: str | None = _opt("column-size-dist")
    columns: str | None = _opt("columns")
    # The keyspace's replication as a CQL map, instead of rf (cassandra-stress
    # -schema replication(strategy=NetworkTopologyStrategy,dc1=3)).
    replication: str | None = _opt("replication")
    compaction: str | None = _opt("compaction")


@dataclass(frozen=True)
class IotOptions(SchemaOptions):
    family: ClassVar[str] = "iot"
    op_names: ClassVar[tuple[str, ...] | None] = ("insert", "devdat", "lesrow", "avgdat")

    devices: int | None = _opt("devices")
    series: int | None = _opt("series")
    values_per_insert: int | None = _opt("values-per-insert")
    table_ttl_s: int | None = _opt("table-ttl-s")
    compaction: str | None = _opt("compaction")


@dataclass(frozen=True)
class UserOptions(LoadOptions):
    family: ClassVar[str] = "user"

    # The operation names come from the profile, read by casslab-load itself.
    records: int | None = _opt("records")
    pop: str | None = _opt("pop")
    # A keyspace with no replica holds nothing: casslab refuses rf 0 before a run.
    rf: int | None = _opt("rf")
    # The profile's insert.batchtype overridden (cassandra-stress -insert batchtype=).
    batchtype: str | None = _opt("batchtype")


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


def consistency_levels() -> tuple[str, ...]:
    """The consistency levels casslab-load takes (its `Cl` values; no SERIAL)."""
    return shipped().rules("ycsb")["cl-read"].choices


def canonical(key: str) -> str:
    """An option name as its flag (`in_flight` -> `in-flight`)."""
    return key.replace("_", "-")


def from_mapping(workload: str, mapping: Mapping[str, Any],
                 where: str = "options") -> LoadOptions:
    """The typed options of `workload` from {flag: value} (see LoadOptions.from_mapping)."""
    return options_class(workload).from_mapping(mapping, where)
