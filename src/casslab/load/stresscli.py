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
from casslab.load.options import shipped

COMMANDS = ("write", "read", "mixed", "user")
COMMAND_OPTIONS = ("n=", "duration=", "err<", "n>", "n<", "cl=", "no-warmup", "truncate=never",
                   "ratio(...) (mixed)", "profile= (user)", "ops(...) (user)")
GROUPS: dict[str, tuple[str, ...]] = {
    "-rate": ("threads=N", "threads=N fixed=N/s", "threads=N throttle=N/s", "threads>=N",
              "threads<=N", "auto"),
    "-pop": ("seq=A..B", "dist=uniform(A..B)", "dist=gaussian(A..B[,STDVRNG])"),
    "-col": ("n=DIST", "size=DIST"),
    "-schema": ("replication(factor=N|strategy=S,DC=N,...)", "compaction(strategy=S,K=V,...)",
                "keyspace=NAME"),
    "-mode": ("native", "cql3", "prepared", "user=NAME", "password=SECRET"),
    "-node": ("HOST[,HOST...]",),
    "-port": ("native=N",),
    "-errors": ("ignore", "retries=N", "skip-read-validation"),
    "-log": ("file=FILE", "hdrfile=FILE", "interval=Ns", "no-settings"),
    "-insert": ("batchtype=LOGGED|UNLOGGED (user)",),
    "-graph": ("file=FILE.html", "title=TEXT", "revision=NAME", "op=NAME"),
}
_COUNT_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_DIST_NAMES = {"uniform": "uniform", "gaussian": "gaussian", "gauss": "gaussian",
               "normal": "gaussian", "norm": "gaussian"}
# cassandra-stress's defaults (SettingsRate, SettingsErrors, StressAction.warmup).
WRITE_N_THREADS = 200  # write with n= and no -rate
MAX_COLUMNS = 64  # casslab-load's stress::MAX_COLUMNS (standard1's most columns)
STEP_MIN_THREADS, STEP_MAX_THREADS = 4, 1000  # otherwise: threads>=4 threads<=1000 auto
DEFAULT_RETRIES = 9  # -errors retries=9: each operation is tried 10 times
WARMUP_MAX, WARMUP_SHARE = 50_000, 0.25
_STRATEGIES = {"SimpleStrategy", "NetworkTopologyStrategy"}
_COMPACTIONS = {"SizeTieredCompactionStrategy", "LeveledCompactionStrategy",
                "TimeWindowCompactionStrategy", "UnifiedCompactionStrategy"}


class StressArgError(UsageError):
    """A cassandra-stress argument is malformed or outside the supported subset."""


@dataclass(frozen=True)
class ThreadSteps:
    """`-rate threads>=MIN threads<=MAX [auto]` (c-s's default without -rate, except
    write with n=): the whole command at MIN threads, then doubled below 16 and times 1.5
    from there, up to MAX; with `auto`, it stops once throughput stops improving."""

    min_threads: int = STEP_MIN_THREADS
    max_threads: int = STEP_MAX_THREADS
    auto: bool = True


@dataclass(frozen=True)
class Graph:
    """`-graph file= [title=] [revision=] [op=]`."""

    file: str
    title: str | None = None
    revision: str | None = None
    op: str | None = None


@dataclass(frozen=True)
class StressRun:
    """A translated command: casslab's workload name (stress-write, ... or a user
    profile .yaml), casslab-load options as {flag: value}, and -node contact points.

    steps: thread stepping (None: one run at the threads in `options`).
    ignore_errors: -errors ignore; otherwise the run fails at its first failed operation.
    fixed: -rate fixed= (c-s then reports latency from the intended start).
    warmup: c-s's warm-up before the run (off with no-warmup).
    credentials: -mode user= password=, passed as CASSLAB_USER / CASSLAB_PASSWORD.
    """

    workload: str
    options: dict[str, Any]
    nodes: tuple[str, ...] = field(default_factory=tuple)
    command: str = "write"
    steps: ThreadSteps | None = None
    ignore_errors: bool = False
    fixed: bool = False
    warmup: bool = True
    credentials: tuple[str, str] | None = None
    port: int | None = None
    log_file: str | None = None
    graph: Graph | None = None

    def warmup_ops(self, nodes: int) -> int:
        """c-s's warm-up: a quarter of n= (at most 50000; 50000 with duration= or err<)
        per node talked to, for each operation type of the mix."""
        if not self.warmup:
            return 0
        ops = self.options.get("ops")
        each = min(WARMUP_MAX, int(ops * WARMUP_SHARE)) if ops else WARMUP_MAX
        mix = str(self.options.get("mix", ""))
        kinds = max(1, sum(1 for part in mix.split(",") if part and
                           float(part.partition("=")[2] or 0) > 0))
        return each * max(1, nodes) * kinds


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
            if not params and name not in ("-mode", "-errors"):
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
        self.rate: dict[str, str] = {}
        self.replication: dict[str, str] = {}
        self.ignore_errors = False
        self.warmup = True
        self.user: str | None = None
        self.password: str | None = None
        self.port: int | None = None
        self.log_file: str | None = None
        self.graph: dict[str, str] = {}

    def set(self, flag: str, value: Any, source: str) -> None:
        if flag in self.options and self.options[flag] != value:
            raise StressArgError(f"{source}: sets {flag} again (already {self.options[flag]})")
        self.options[flag] = value

    def command_option(self, p: str) -> None:
        key, value = _key_value(p)
        if p == "no-warmup":
            self.warmup = False
            return
        if p == "truncate=never":
            return  # c-s's default: casslab-load never truncates
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
            for flag in ("column-size", "column-size-dist", "columns"):
                if flag in self.options:
                    raise StressArgError(f"-col: the user profile defines its columns "
                                         f"({flag} is for write/read/mixed)")
            if "keyspace" in self.options or self.replication or "compaction" in self.options:
                raise StressArgError("-schema: the user profile defines its keyspace and "
                                     "table (keyspace_definition, table_definition)")
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
        if self.command == "mixed":
            self.options.setdefault("mix", "write=1,read=1")  # c-s: ratio(write=1,read=1)
        self.options.setdefault("error-retries", DEFAULT_RETRIES)
        self._finish_schema()
        steps = self._finish_rate()
        if (self.user is None) != (self.password is None):
            raise StressArgError("-mode user= password=: give both (casslab passes them as "
                                 "CASSLAB_USER and CASSLAB_PASSWORD)")
        graph = None
        if self.graph:
            if "file" not in self.graph:
                raise StressArgError("-graph: file=FILE.html is required")
            graph = Graph(self.graph["file"], self.graph.get("title"),
                          self.graph.get("revision"), self.graph.get("op"))
        creds = (self.user, self.password) if self.user is not None and self.password \
            is not None else None
        return StressRun(workload, dict(self.options), tuple(self.nodes), self.command, steps,
                         self.ignore_errors, self.rate.get("kind") == "fixed", self.warmup,
                         creds, self.port, self.log_file, graph)

    def _finish_rate(self) -> ThreadSteps | None:
        """c-s's -rate: threads= (with fixed=/throttle=), or thread stepping; without
        -rate, 200 threads for write with n=, stepping 4..1000 auto otherwise."""
        stepping = {"min", "max", "auto"} & set(self.rate)
        if "threads" in self.rate and stepping:
            raise StressArgError("-rate threads= and threads>=/threads<=/auto: give one "
                                 "(a thread count, or a range to step through)")
        if "kind" in self.rate and "threads" not in self.rate:
            raise StressArgError(f"-rate {self.rate['kind']}=: needs threads=N as well "
                                 "(cassandra-stress takes a rate only with a thread count)")
        if "threads" in self.rate:
            self.set("threads", int(self.rate["threads"]), "-rate threads=")
            return None
        if not stepping:
            if self.command == "write" and "ops" in self.options:
                self.set("threads", WRITE_N_THREADS, "-rate (default for write n=)")
                return None
            return ThreadSteps()
        lo = int(self.rate.get("min", STEP_MIN_THREADS))
        hi = int(self.rate.get("max", STEP_MAX_THREADS))
        if lo > hi:
            raise StressArgError(f"-rate threads>={lo} threads<={hi}: the least is more "
                                 "than the most")
        return ThreadSteps(lo, hi, "auto" in self.rate)

    def _finish_schema(self) -> None:
        if not self.replication:
            return
        strategy = self.replication.pop("strategy", "SimpleStrategy")
        factor = self.replication.pop("factor", None)
        if strategy == "SimpleStrategy":
            if self.replication:
                raise StressArgError(f"-schema replication({', '.join(self.replication)}=): "
                                     "SimpleStrategy takes factor=N only")
            self.set("rf", _int(factor or "1", "-schema replication(factor=)", 1),
                     "-schema replication")
            return
        if factor is not None:
            raise StressArgError("-schema replication(factor=): NetworkTopologyStrategy "
                                 "takes a factor per datacenter (e.g. dc1=3)")
        if not self.replication:
            raise StressArgError("-schema replication(strategy=NetworkTopologyStrategy): "
                                 "name a datacenter and its factor, e.g. dc1=3")
        dcs = ", ".join(f"'{dc}': {n}" for dc, n in self.replication.items())
        self.set("replication", f"{{'class': '{strategy}', {dcs}}}", "-schema replication")


def _rate(t: _Translation, p: str) -> None:
    m = re.fullmatch(r"threads([<>]=|=)(.*)", p)
    if m:
        slot = {"=": "threads", ">=": "min", "<=": "max"}[m.group(1)]
        t.rate[slot] = str(_int(m.group(2), f"-rate {p}", 1))
        return
    if p == "auto":
        t.rate["auto"] = "1"
        return
    key, value = _key_value(p)
    if key in ("fixed", "throttle"):
        # c-s schedules both the same way; fixed= reports latency from the intended
        # start, throttle= the service time. casslab-load records both.
        m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(?:/s)?", value)
        if not m or float(m.group(1)) <= 0:
            raise StressArgError(f"-rate {p}: expected {key}=N/s with N > 0")
        if "kind" in t.rate:
            raise StressArgError("-rate fixed= and throttle=: give one")
        t.rate["kind"] = key
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


def _max_column_bytes() -> int:
    """The largest --column-size casslab-load takes (from its options description)."""
    high = shipped().rules("stress")["column-size"].high
    assert high is not None, "casslab-load's --column-size has an upper bound"
    return int(high.value)


def _col(t: _Translation, p: str) -> None:
    """`-col size=DIST n=DIST`: sizes and counts drawn per key by casslab-load, from c-s's
    FIXED(N), UNIFORM(A..B) and GAUSSIAN(A..B[,STDVRNG]) (EXP, EXTREME and the other
    c-s distributions are refused: casslab-load cannot draw them)."""
    key, value = _key_value(p)
    if key not in ("n", "size"):
        raise StressArgError(f"-col {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-col'])})")
    dist = _col_dist(value, f"-col {p}")
    largest = int(re.split(r"[(.,)]+", dist)[-2])
    most = MAX_COLUMNS if key == "n" else _max_column_bytes()
    if largest > most:
        raise StressArgError(f"-col {p}: at most {most} "
                             f"{'columns' if key == 'n' else 'bytes per column'}")
    fixed = re.fullmatch(r"fixed\(([0-9]+)\)", dist)
    if key == "size" and fixed:
        t.set("column-size", _int(fixed.group(1), p, 1), p)
    elif key == "size":
        t.set("column-size-dist", dist, p)
    elif not (fixed and int(fixed.group(1)) == 5):  # standard1's five columns: the default
        t.set("columns", dist, p)


def _col_dist(value: str, source: str) -> str:
    """c-s's FIXED(N), UNIFORM(A..B), GAUSSIAN(A..B[,STDVRNG]) as casslab-load writes them."""
    m = re.fullmatch(r"([A-Za-z]+)\((.*)\)", value.strip())
    name = m.group(1).lower() if m else ""
    if m and name == "fixed":
        return f"fixed({_int(m.group(2).strip(), source, 1)})"
    kind = _DIST_NAMES.get(name)
    if not m or kind is None:
        raise StressArgError(f"{source}: expected FIXED(N), UNIFORM(A..B) or "
                             "GAUSSIAN(A..B[,STDVRNG]) (casslab-load cannot draw "
                             f"{name.upper() or value})")
    lo_hi, _, extra = m.group(2).partition(",")
    lo, hi = _range(lo_hi, source)
    if extra and (kind == "uniform" or not re.fullmatch(r"[0-9]+(\.[0-9]+)?", extra.strip())):
        raise StressArgError(f"{source}: only GAUSSIAN takes a STDVRNG after the range, "
                             "as a number")
    return f"{kind}({lo}..{hi}{',' + extra.strip() if extra else ''})"


def _schema(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "keyspace":
        t.set("keyspace", value, p)
        return
    m = re.fullmatch(r"(replication|compaction)\((.*)\)", p)
    if not m:
        raise StressArgError(f"-schema {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-schema'])})")
    pairs: dict[str, str] = {}
    for part in filter(None, (x.strip() for x in m.group(2).split(","))):
        k, eq, v = part.partition("=")
        if not eq or not k.strip() or not v.strip():
            raise StressArgError(f"-schema {p}: {part!r} is not KEY=VALUE")
        pairs[k.strip()] = v.strip()
    if m.group(1) == "replication":
        _replication(t, p, pairs)
    else:
        _compaction(t, p, pairs)


def _replication(t: _Translation, p: str, pairs: dict[str, str]) -> None:
    strategy = pairs.get("strategy", "SimpleStrategy").rsplit(".", 1)[-1]
    if strategy not in _STRATEGIES:
        raise StressArgError(f"-schema {p}: strategy {strategy} not supported (valid: "
                             f"{', '.join(sorted(_STRATEGIES))})")
    for k, v in pairs.items():
        if k not in ("strategy",) and not (v.isdigit() and int(v) >= 1):
            raise StressArgError(f"-schema {p}: {k}={v}: a replication factor is a whole "
                                 "number >= 1")
        if k not in ("strategy", "factor") and not re.fullmatch(r"[A-Za-z0-9_.-]+", k):
            raise StressArgError(f"-schema {p}: {k!r} is not a datacenter name")
    t.replication = {**pairs, "strategy": strategy}


def _compaction(t: _Translation, p: str, pairs: dict[str, str]) -> None:
    strategy = pairs.pop("strategy", "")
    name = strategy.rsplit(".", 1)[-1]
    if name not in _COMPACTIONS:
        raise StressArgError(f"-schema {p}: strategy={strategy or '?'}: give one of "
                             f"{', '.join(sorted(_COMPACTIONS))}")
    for k, v in pairs.items():
        if not re.fullmatch(r"[A-Za-z0-9_]+", k) or not re.fullmatch(r"[A-Za-z0-9_.]+", v):
            raise StressArgError(f"-schema {p}: {k}={v}: expected a compaction option like "
                                 "min_threshold=4")
    opts = "".join(f", '{k}': '{v}'" for k, v in pairs.items())
    t.set("compaction", f"{{'class': '{name}'{opts}}}", p)


def _mode(t: _Translation, p: str) -> None:
    key, eq, value = p.partition("=")
    if eq and key in ("user", "password"):
        if not value:
            raise StressArgError(f"-mode {key}=: empty")
        setattr(t, key, value)
        return
    if p.lower() in ("native", "cql3", "prepared"):
        return
    why = {"unprepared": "casslab-load always prepares its statements",
           "simplenative": "casslab-load speaks through the Rust driver only",
           "protocolversion": "casslab-load lets the driver negotiate the protocol",
           "compression": "casslab-load sends uncompressed frames",
           "maxpending": "casslab-load's in-flight requests are its threads",
           "connectionsperhost": "casslab-load opens the driver's default connections",
           "auth-provider": "casslab-load authenticates with user= password= only"}
    reason = why.get(key.lower())
    if reason:
        raise StressArgError(f"-mode {p}: not supported ({reason})")
    raise StressArgError(f"-mode {p}: not supported (supported: {' '.join(GROUPS['-mode'])})")


def _node(t: _Translation, p: str) -> None:
    if p.startswith("file="):
        raise StressArgError(f"-node {p}: not supported (give the hosts, comma separated)")
    hosts = [h.strip() for h in p.split(",") if h.strip()]
    if not hosts:
        raise StressArgError(f"-node {p}: expected HOST[,HOST...]")
    t.nodes += hosts


def _port(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "native":
        t.port = _int(value, f"-port {p}", 1)
        if t.port > 65535:
            raise StressArgError(f"-port {p}: a port is 1..65535")
        return
    raise StressArgError(f"-port {p}: not supported (supported: native=N; casslab reads no "
                         "JMX and speaks no Thrift)")


def _errors(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if p == "ignore":
        t.ignore_errors = True
    elif key == "retries":
        t.set("error-retries", _int(value, f"-errors {p}", 0), p)
    elif p == "skip-read-validation":
        return  # casslab-load does not validate what reads return
    else:
        raise StressArgError(f"-errors {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-errors'])})")


def _log(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if key == "hdrfile" and value:
        t.set("hdr-log", value, p)
    elif key == "file" and value:
        t.log_file = value
    elif p == "no-settings":
        return  # casslab prints no settings block
    elif key == "interval":
        m = re.fullmatch(r"([0-9]+)(s?)", value)
        if not m or int(m.group(1)) == 0:
            raise StressArgError(f"-log {p}: expected interval=N (seconds, N >= 1)")
        t.set("interval", f"{m.group(1)}s", p)
    else:
        raise StressArgError(f"-log {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-log'])})")


def _insert(t: _Translation, p: str) -> None:
    key, value = _key_value(p)
    if t.command != "user":
        raise StressArgError(f"-insert {p}: cassandra-stress applies -insert to user "
                             "profiles only (write/read/mixed write one row per statement)")
    if key == "batchtype" and value.upper() in ("LOGGED", "UNLOGGED"):
        t.set("batchtype", value.upper(), p)
        return
    if key == "batchtype":
        raise StressArgError(f"-insert {p}: LOGGED or UNLOGGED (casslab-load writes no "
                             "counter batches)")
    raise StressArgError(f"-insert {p}: not supported (supported: batchtype=; partitions= "
                         "and select= come from the profile's insert section)")


def _graph(t: _Translation, p: str) -> None:
    key, eq, value = p.partition("=")
    if not eq or key not in ("file", "title", "revision", "op") or not value:
        raise StressArgError(f"-graph {p}: not supported (supported: "
                             f"{', '.join(GROUPS['-graph'])})")
    t.graph[key] = value


_GROUP_HANDLERS: dict[str, Callable[[_Translation, str], None]] = {
    "-rate": _rate, "-pop": _pop, "-col": _col, "-schema": _schema, "-mode": _mode,
    "-node": _node, "-log": _log, "-port": _port, "-errors": _errors, "-insert": _insert,
    "-graph": _graph}


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
