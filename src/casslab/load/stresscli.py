"""cassandra-stress command lines (`write n=1000000 cl=ONE -rate threads=50 -pop
seq=1..1000000 -node 10.0.0.5`) translated to casslab-load's stress and user workloads.

Pure: arguments in, (workload, {casslab-load flag: value}, contact points) out. The
documented subset is taken; anything else is refused by name with what is supported,
never dropped silently, since a dropped option would measure another workload.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from casslab.core.errors import UsageError

COMMANDS = ("write", "read", "mixed", "user")
COMMAND_OPTIONS = ("n=", "duration=", "err<", "n>", "n<", "cl=", "no-warmup", "truncate=never",
                   "ratio(...) (mixed)", "profile= (user)", "ops(...) (user)")
GROUPS: dict[str, tuple[str, ...]] = {
    "-rate": ("threads=N", "fixed=N/s", "throttle=N/s"),
    "-pop": ("seq=A..B", "dist=uniform(A..B)", "dist=gaussian(A..B[,STDVRNG])"),
    "-col": ("n=FIXED(5)", "size=FIXED(N)"),
    "-schema": ("replication(factor=N[,strategy=SimpleStrategy])", "keyspace=NAME"),
    "-mode": ("native", "cql3", "prepared"),
    "-node": ("HOST[,HOST...]",),
    "-log": ("hdrfile=FILE", "interval=Ns"),
}
_COUNT_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_DIST_NAMES = {"uniform": "uniform", "gaussian": "gaussian", "gauss": "gaussian",
               "normal": "gaussian", "norm": "gaussian"}


class StressArgError(UsageError):
    """A cassandra-stress argument is malformed or outside the supported subset."""


@dataclass(frozen=True)
class StressRun:
    """A translated command: casslab's workload name (stress-write, ... or a user
    profile .yaml), casslab-load options as {flag: value}, and -node contact points."""

    workload: str
    options: dict[str, Any]
    nodes: tuple[str, ...] = field(default_factory=tuple)


def split_words(args: Sequence[str]) -> list[str]:
    """The arguments as words: a quoted `'size=FIXED(34) n=FIXED(5)'` is two, while
    `ops(insert=1, q=2)` stays one (spaces inside parentheses are kept)."""
    words: list[str] = []
    for arg in args:
        depth, cur = 0, ""
        for ch in arg:
            depth += (ch == "(") - (ch == ")")
            if ch.isspace() and depth == 0:
                if cur:
                    words.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            words.append(cur)
    return words


def translate(args: Sequence[str]) -> StressRun:
    """casslab-load's workload and options for a cassandra-stress command line (without
    the program name). Raises StressArgError naming the first unsupported argument."""
    words = split_words(args)
    if not words or words[0] not in COMMANDS:
        got = f"'{words[0]}'" if words else "nothing"
        raise StressArgError(f"cassandra-stress command: got {got}; supported: "
                             f"{', '.join(COMMANDS)}")
    command, rest = words[0], words[1:]
    groups: list[tuple[str, list[str]]] = [("", [])]
    for w in rest:
        if w.startswith("-") and not re.fullmatch(r"-[0-9.]+", w):
            if w not in GROUPS:
                raise StressArgError(f"cassandra-stress option {w}: not supported "
                                     f"(supported: {', '.join(GROUPS)})")
            groups.append((w, []))
        else:
            groups[-1][1].append(w)
    t = _Translation(command)
    for name, params in groups:
        if not name:
            for p in params:
                t.command_option(p)
        else:
            if not params and name != "-mode":
                raise StressArgError(f"{name}: needs a value ({', '.join(GROUPS[name])})")
            for p in params:
                _GROUP_HANDLERS[name](t, p)
    return t.finish()


class _Translation:
    def __init__(self, command: str) -> None:
        self.command = command
        self.options: dict[str, Any] = {}
        self.nodes: list[str] = []
        self.profile: str | None = None

    def set(self, flag: str, value: Any, source: str) -> None:
        if flag in self.options and self.options[flag] != value:
            raise StressArgError(f"{source}: sets {flag} again (already {self.options[flag]})")
        self.options[flag] = value

    def command_option(self, p: str) -> None:
        key, value = _key_value(p)
        if p == "no-warmup" or p == "truncate=never":
            return  # casslab-load does no warm-up unless asked and never truncates
        if key == "n":
            self.set("ops", count(value, p), p)
        elif key == "duration":
            self.set("duration", duration(value, p), p)
        elif key == "cl":
            cl = value.upper()
            self.set("cl-read", cl, p)
            self.set("cl-write", cl, p)
        elif p.startswith("ratio(") and self.command == "mixed":
            self.set("mix", _weights(p, "ratio"), p)
        elif p.startswith("ops(") and self.command == "user":
            self.set("mix", _weights(p, "ops"), p)
        elif key == "profile" and self.command == "user":
            self.profile = value
        elif p.startswith("err<"):
            self.set("converge", _fraction(p[4:], p), p)
        elif p.startswith(("n>", "n<")):
            self.set("converge-min" if p[1] == ">" else "converge-max", _int(p[2:], p, 2), p)
        else:
            raise StressArgError(f"cassandra-stress {self.command} option {p}: not "
                                 f"supported (supported: {', '.join(COMMAND_OPTIONS)})")

    def finish(self) -> StressRun:
        if self.command == "user":
            if not self.profile:
                raise StressArgError("cassandra-stress user: profile=FILE.yaml is required")
            if not self.profile.endswith((".yaml", ".yml")):
                raise StressArgError(f"profile={self.profile}: expected a .yaml profile")
            for flag in ("column-size",):
                if flag in self.options:
                    raise StressArgError(f"-col: the user profile defines its columns "
                                         f"({flag} is for write/read/mixed)")
            if "keyspace" in self.options:
                raise StressArgError("-schema keyspace=: the user profile names its keyspace")
            workload = self.profile
        else:
            workload = f"stress-{self.command}"
        if "ops" in self.options and "duration" in self.options:
            raise StressArgError("n= and duration=: give one (cassandra-stress takes one)")
        fixed = [k for k in ("ops", "duration") if k in self.options]
        converging = [k for k in ("converge", "converge-min", "converge-max")
                      if k in self.options]
        if fixed and converging:
            raise StressArgError(f"{'n=' if fixed[0] == 'ops' else 'duration='} and "
                                 "err</n>/n<: give one (a fixed length or a stop on "
                                 "convergence)")
        if not fixed:
            # cassandra-stress's default length: until the error of the mean is under 2 %,
            # after at least 30 and at most 200 intervals.
            self.options.setdefault("converge", 0.02)
            self.options.setdefault("converge-min", 30)
            self.options.setdefault("converge-max", 200)
        return StressRun(workload, dict(self.options), tuple(self.nodes))


def _rate(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "threads":
        t.set("threads", _int(value, p, 1), p)
    elif key in ("fixed", "throttle"):
        # throttle: cassandra-stress measures from the send; casslab-load reports both
        # that (service time) and latency from the intended start.
        m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(?:/s)?", value)
        if not m or float(m.group(1)) <= 0:
            raise StressArgError(f"-rate {p}: expected {key}=N/s with N > 0")
        t.set("rate", float(m.group(1)), p)
    else:
        raise StressArgError(f"-rate {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-rate'])})")


def _pop(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "seq":
        lo, hi = _range(value, f"-pop {p}")
        t.set("pop", f"seq({lo}..{hi})", p)
        return
    m = re.fullmatch(r"([A-Za-z]+)\((.*)\)", value) if key == "dist" else None
    name = _DIST_NAMES.get(m.group(1).lower()) if m else None
    if not m or name is None:
        raise StressArgError(f"-pop {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-pop'])})")
    lo_hi, _, extra = m.group(2).partition(",")
    lo, hi = _range(lo_hi, f"-pop {p}")
    if extra and name == "uniform":
        raise StressArgError(f"-pop {p}: uniform takes only a range (A..B)")
    if extra and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", extra.strip()):
        raise StressArgError(f"-pop {p}: the gaussian's stdvrng must be a number")
    t.set("pop", f"{name}({lo}..{hi}{',' + extra.strip() if extra else ''})", p)


def _col(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    fixed = re.fullmatch(r"(?i)fixed\(([0-9]+)\)", value)
    if key == "n" and fixed and int(fixed.group(1)) == 5:
        return  # standard1 has its five columns C0..C4
    if key == "size" and fixed:
        t.set("column-size", _int(fixed.group(1), p, 1), p)
        return
    raise StressArgError(f"-col {p}: not supported (supported: {', '.join(GROUPS['-col'])}; "
                         "casslab-load's table has 5 fixed-size columns)")


def _schema(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "keyspace":
        t.set("keyspace", value, p)
        return
    m = re.fullmatch(r"replication\((.*)\)", p)
    if not m:
        raise StressArgError(f"-schema {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-schema'])})")
    for part in filter(None, (s.strip() for s in m.group(1).split(","))):
        k, v = _key_value(part)
        if k == "factor":
            t.set("rf", _int(v, f"-schema {p}", 1), p)
        elif k == "strategy" and v.rsplit(".", 1)[-1] == "SimpleStrategy":
            continue
        else:
            raise StressArgError(f"-schema {p}: {part} not supported (casslab-load creates "
                                 "a SimpleStrategy keyspace; give factor=N)")


def _mode(t: _Translation, p: str) -> None:
    if p.lower() not in GROUPS["-mode"]:
        raise StressArgError(f"-mode {p}: not supported (casslab-load speaks native CQL3 with "
                             f"prepared statements: {' '.join(GROUPS['-mode'])})")


def _node(t: _Translation, p: str) -> None:
    if p.startswith("file="):
        raise StressArgError(f"-node {p}: not supported (give the hosts, comma separated)")
    hosts = [h.strip() for h in p.split(",") if h.strip()]
    if not hosts:
        raise StressArgError(f"-node {p}: expected HOST[,HOST...]")
    t.nodes += hosts


def _log(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "hdrfile" and value:
        t.set("hdr-log", value, p)
    elif key == "interval":
        m = re.fullmatch(r"([0-9]+)(s?)", value)
        if not m or int(m.group(1)) == 0:
            raise StressArgError(f"-log {p}: expected interval=N (seconds, N >= 1)")
        t.set("interval", f"{m.group(1)}s", p)
    else:
        raise StressArgError(f"-log {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-log'])})")


_GROUP_HANDLERS: dict[str, Callable[[_Translation, str], None]] = {
    "-rate": _rate, "-pop": _pop, "-col": _col, "-schema": _schema, "-mode": _mode,
    "-node": _node, "-log": _log}


def count(text: str, source: str) -> int:
    """cassandra-stress's counts: 1000000, 1000k, 1m, 2b."""
    m = re.fullmatch(r"([0-9]+)([kmbKMB]?)", text)
    if not m:
        raise StressArgError(f"{source}: expected a count like 1000000 or 1m")
    return int(m.group(1)) * _COUNT_SUFFIX[m.group(2).lower()]


def _fraction(text: str, source: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise StressArgError(f"{source}: expected a fraction of the mean like err<0.02 "
                             "(> 0 and < 1)")
    return value


def duration(text: str, source: str) -> str:
    """cassandra-stress's durations (30s, 10m, 2h) as casslab-load's."""
    m = re.fullmatch(r"([0-9]+)([smh])", text.lower())
    if not m or int(m.group(1)) == 0:
        raise StressArgError(f"{source}: expected a duration like 30s, 10m or 2h")
    return f"{m.group(1)}{m.group(2)}"


def _key_value(p: str) -> tuple[str, str]:
    key, _, value = p.partition("=")
    return key, value


def _int(text: str, source: str, lo: int) -> int:
    if not text.isdigit() or int(text) < lo:
        raise StressArgError(f"{source}: expected a whole number >= {lo}")
    return int(text)


def _range(text: str, source: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*([0-9]+)\.\.([0-9]+)\s*", text)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise StressArgError(f"{source}: expected a range A..B with A <= B")
    return int(m.group(1)), int(m.group(2))


def _weights(p: str, name: str) -> str:
    m = re.fullmatch(name + r"\((.*)\)", p)
    parts = [s.strip() for s in (m.group(1) if m else "").split(",") if s.strip()]
    out = []
    for part in parts:
        op, eq, w = part.partition("=")
        if not eq or not op or not re.fullmatch(r"[0-9]+(\.[0-9]+)?", w):
            raise StressArgError(f"{p}: expected {name}(OP=WEIGHT,...), e.g. "
                                 f"{name}(write=1,read=3)")
        out.append(f"{op}={w}")
    if not out:
        raise StressArgError(f"{p}: expected {name}(OP=WEIGHT,...)")
    return ",".join(out)
