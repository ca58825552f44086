"""cassandra-stress's text output, rendered from casslab-load's JSON lines.

The layout is c-s 4.x/5.x's (tools/stress StressMetrics): a header, one row per
reporting interval (a row per operation type first when more than one type has run,
then `total`), and after the run the `Results:` block; with thread stepping, a table of
every step's totals at the end. Pure: JSON lines in, text out.

How each figure is computed (c-s's definitions, from casslab-load's measurements):
- op/s, pk/s, row/s: the interval's operations, partitions and rows over its length.
  Every stress operation touches one partition; rows are the rows written or found
  (a read of a missing key returns none). casslab-load does not count the rows of a
  user profile's batches: there, partitions and rows count one per operation.
- latency (mean, median, 95th, 99th, 99.9th, max, ms): c-s's service time (send to
  answer), or with `-rate fixed=` the response time from each operation's intended
  start (c-s's isFixed); percentiles are read from the interval's or the run's
  merged HdrHistogram, never averaged.
- time: seconds since the measured run began (the warm-up is not in it).
- stderr: the standard error of the mean of the intervals' row rates, over that mean
  (c-s's Uncertainty, population deviation), from the first interval to this one.
- gc columns and the Total GC lines: c-s reads them from the nodes over JMX; casslab
  reads none, so they are 0 as c-s prints them when JMX is unreachable (its Avg GC
  time is then 0/0, printed NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HEAD_FORMAT = ("%-50s%10s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%7s,%9s,%7s,%7s,%8s,%8s,%8s,"
               "%8s")
ROW_FORMAT = ("%-50s%10d,%8.0f,%8.0f,%8.0f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%8.1f,%7.1f,%9s,"
              "%7d,%7.0f,%8.0f,%8.0f,%8.0f,%8.0f")
HEAD_METRICS = ("type", "total ops", "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99",
                ".999", "max", "time", "stderr", "errors", "gc: #", "max ms", "sum ms",
                "sdv ms", "mb")
HEAD = HEAD_FORMAT % HEAD_METRICS
# casslab-load's predefined operation names -> c-s's (its Command enum names).
PREDEFINED_NAMES = {"write": "WRITE", "read": "READ"}


def header(prefix: str = "") -> str:
    """c-s's column header line."""
    return prefix + HEAD


def op_name(name: str, predefined: bool) -> str:
    """c-s's name of an operation type: WRITE/READ for write/read/mixed, a user
    profile's own names as given."""
    return PREDEFINED_NAMES.get(name, name.upper()) if predefined else name


@dataclass(frozen=True)
class Figures:
    """One operation type (or all of them) over an interval or a run."""

    ops: int
    partitions: int
    rows: int
    errors: int
    seconds: float
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float

    @classmethod
    def of(cls, block: Mapping[str, Any] | None, seconds: float, fixed: bool) -> Figures:
        """From a casslab-load `by_op`/`all` block (None: nothing ran)."""
        if not block:
            return cls(0, 0, 0, 0, seconds, 0, 0, 0, 0, 0, 0)
        hist = block["latency" if fixed else "service"]
        ops = int(block["ops"])
        ok = int(block.get("ok", ops))
        return cls(ops, ops, ok, int(block.get("errors", 0)), seconds,
                   float(hist["mean_us"]) / 1e3, hist["p50_us"] / 1e3, hist["p95_us"] / 1e3,
                   hist["p99_us"] / 1e3, hist["p999_us"] / 1e3, hist["max_us"] / 1e3)

    def rate(self, n: int) -> float:
        return n / self.seconds if self.seconds > 0 else 0.0

    def adjusted_row_rate(self) -> float:
        """c-s's adjustedRowRate: rows over the interval less its longest operation."""
        span = self.seconds - self.max_ms / 1e3
        if span == 0:  # Java's double division: x/0 is infinite, 0/0 NaN
            return math.copysign(math.inf, self.rows) if self.rows else math.nan
        return self.rows / span  # negative when an operation outlasted a short interval


def _java_float(x: float, spec: str) -> str:
    # Java prints NaN as `NaN` (Python: `nan`), right-aligned in the same width.
    width = int(spec.split(".")[0] or 0)
    return f"{'NaN':>{width}}" if math.isnan(x) else f"{x:{spec}f}"


def row(prefix: str, kind: str, interval: Figures, total_ops: int, total_s: float,
        stderr: float) -> str:
    """One c-s row: the interval's figures, the run's op count and time so far."""
    return prefix + ROW_FORMAT % (
        kind + ",", total_ops, interval.rate(interval.ops), interval.rate(interval.partitions),
        interval.rate(interval.rows), interval.mean_ms, interval.p50_ms, interval.p95_ms,
        interval.p99_ms, interval.p999_ms, interval.max_ms, total_s,
        _java_float(stderr, "9.5"), interval.errors, 0, 0, 0, 0, 0)


@dataclass
class Uncertainty:
    """c-s's Uncertainty: the standard error of the mean of the values seen (population
    deviation over the square root of their count) as a fraction of their mean."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def update(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def value(self) -> float:
        if self.n == 0:
            return math.nan
        mean = self.total / self.n
        var = max(self.squares / self.n - mean * mean, 0.0)
        return math.sqrt(var) / math.sqrt(self.n) / mean if mean else math.nan


@dataclass
class IntervalPrinter:
    """Turns casslab-load's interval lines into c-s rows as they arrive. Warm-up
    intervals print nothing (c-s runs its warm-up silently)."""

    predefined: bool
    fixed: bool
    seen: set[str] = field(default_factory=set)
    totals: dict[str, int] = field(default_factory=dict)
    all_ops: int = 0
    start_s: float | None = None
    uncertainty: Uncertainty = field(default_factory=Uncertainty)

    def lines(self, interval: Mapping[str, Any]) -> list[str]:
        if not interval.get("recorded", True):
            return []
        length = float(interval["interval_s"])
        if self.start_s is None:
            self.start_s = float(interval["t_s"]) - length
        by_op = interval.get("by_op", {})
        self.seen |= {op_name(n, self.predefined) for n in by_op}
        total = Figures.of(interval.get("all"), length, self.fixed)
        self.uncertainty.update(total.adjusted_row_rate())
        if total.ops == 0:
            return []
        elapsed = float(interval["t_s"]) - self.start_s
        named = {op_name(n, self.predefined): b for n, b in by_op.items()}
        out = []
        for name in sorted(self.seen):
            fig = Figures.of(named.get(name), length, self.fixed)
            self.totals[name] = self.totals.get(name, 0) + fig.ops
            if len(self.seen) > 1:
                out.append(row("", name, fig, self.totals[name], elapsed,
                               self.uncertainty.value()))
        self.all_ops += total.ops
        out.append(row("", "total", total, self.all_ops, elapsed, self.uncertainty.value()))
        return out


def _bracket(values: Sequence[tuple[str, str]], unit: str) -> str:
    if not values:
        return "[]"
    tail = f" {unit}" if unit else ""
    return "[" + ", ".join(f"{n}: {v}{tail}" for n, v in values) + "]"


def _hms(seconds: float) -> str:
    s = int(seconds)  # c-s: DurationFormatUtils HH:mm:ss of whole milliseconds, truncated
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def results_block(summary: Mapping[str, Any], predefined: bool, fixed: bool) -> list[str]:
    """c-s's `Results:` block for a run summary (two blank lines before it, one after,
    as c-s prints them)."""
    seconds = float(summary["elapsed_s"])
    total = Figures.of(summary.get("all"), seconds, fixed)
    per_op = sorted((op_name(n, predefined), Figures.of(b, seconds, fixed))
                    for n, b in summary.get("by_op", {}).items() if int(b["ops"]) > 0)

    def each(fmt: str, get: Callable[[Figures], float]) -> list[tuple[str, str]]:
        return [(n, format(get(f), fmt)) for n, f in per_op]

    lat: tuple[tuple[str, Callable[[Figures], float]], ...] = (
           ("Latency mean              ", lambda f: f.mean_ms),
           ("Latency median            ", lambda f: f.p50_ms),
           ("Latency 95th percentile   ", lambda f: f.p95_ms),
           ("Latency 99th percentile   ", lambda f: f.p99_ms),
           ("Latency 99.9th percentile ", lambda f: f.p999_ms),
           ("Latency max               ", lambda f: f.max_ms))
    out = ["", "", "Results:",
           f"Op rate                   : {total.rate(total.ops):8,.0f} op/s  "
           f"{_bracket(each(',.0f', lambda f: f.rate(f.ops)), 'op/s')}",
           f"Partition rate            : {total.rate(total.partitions):8,.0f} pk/s  "
           f"{_bracket(each(',.0f', lambda f: f.rate(f.partitions)), 'pk/s')}",
           f"Row rate                  : {total.rate(total.rows):8,.0f} row/s "
           f"{_bracket(each(',.0f', lambda f: f.rate(f.rows)), 'row/s')}"]
    out += [f"{label}: {get(total):6.1f} ms {_bracket(each(',.1f', get), 'ms')}"
            for label, get in lat]
    out += [f"Total partitions          : {total.partitions:10,d} "
            f"{_bracket(each(',d', lambda f: f.partitions), '')}",
            f"Total errors              : {total.errors:10,d} "
            f"{_bracket(each(',d', lambda f: f.errors), '')}",
            "Total GC count            : 0",
            "Total GC memory           : 0 B",
            "Total GC time             :    0.0 seconds",
            "Avg GC time               :    NaN ms",
            "StdDev GC time            :    0.0 ms",
            f"Total operation time      : {_hms(seconds)}",
            ""]
    return out


@dataclass(frozen=True)
class Step:
    """One thread-count step's summary and its row-rate uncertainty."""

    threads: int
    summary: Mapping[str, Any]
    stderr: float

    def op_rate(self) -> float:
        s = float(self.summary["elapsed_s"])
        return int(self.summary["ops"]) / s if s > 0 else 0.0


def steps_table(steps: Sequence[Step], predefined: bool, fixed: bool) -> list[str]:
    """c-s's table after thread stepping: per step, a row per operation type and total,
    each over the whole step (id `N threadCount`)."""
    ids = [f"{s.threads} threadCount" for s in steps]
    width = max((len(i) for i in ids), default=2)
    out = [header(f"{'id':>{width}}, ")]
    for ident, step in zip(ids, steps, strict=True):
        prefix = f"{ident:>{width}}, "
        seconds = float(step.summary["elapsed_s"])
        for name, block in sorted((op_name(n, predefined), b)
                                  for n, b in step.summary.get("by_op", {}).items()
                                  if int(b["ops"]) > 0):
            fig = Figures.of(block, seconds, fixed)
            out.append(row(prefix, name, fig, fig.ops, seconds, step.stderr))
        fig = Figures.of(step.summary.get("all"), seconds, fixed)
        out.append(row(prefix, "total", fig, fig.ops, seconds, step.stderr))
    return out


def average_improvement(rates: Sequence[float], count: int) -> float:
    """c-s's averageImprovement: the mean relative gain of the last `count` steps over
    the step before each."""
    gains = [(rates[i] - rates[i - 1]) / rates[i - 1]
             for i in range(len(rates) - count, len(rates))]
    return sum(gains) / count


def next_threads(threads: int) -> int:
    """c-s's next thread count: doubled below 16, then times 1.5 (truncated)."""
    return threads * 2 if threads < 16 else int(threads * 1.5)


def keep_stepping(rates: Sequence[float], auto: bool, uncertainty: float) -> bool:
    """c-s's loop condition after a step: always without `auto`; with it, while the last
    3 steps improved on average (>= 0) and the last 5 by at least `uncertainty`
    (c-s's err< target; -1 when the length is n= or duration=)."""
    if not auto:
        return True

    def improving(count: int, least: float) -> bool:
        return len(rates) < count + 1 or average_improvement(rates, count) >= least
    return improving(3, 0.0) and improving(5, uncertainty)


def thread_steps(lo: int, hi: int) -> Iterable[int]:
    """The thread counts c-s would try from `lo` up to `hi` (before `auto` stops it)."""
    t = lo
    while True:
        yield t
        t = next_threads(t)
        if t > hi:
            return
