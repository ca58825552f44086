"""`workload.warmup: until-steady`: a trial's recorded window starts where its
per-interval series has settled.

Post-hoc, on casslab-load's interval log: the trial runs its stop rule as always, then
its per-interval throughput and p50 (the full-length intervals: the last, cut-short one
is left out) are classified, and the intervals that end before the steady state began
are stored with `recorded = 0`, as casslab-load's own warm-up stages are. Why post-hoc
and not live: the classifier (a change-point method, casslab.analysis.steady) needs the
series after the cut to tell "settled" from "still warming", which a live decision
cannot have yet; the whole series stays in the store, so the cut can be audited; and no
change to casslab-load is needed. The cost: a trial that settles late has a shorter
window (its ops or duration include the warm-up), so the stop rule should leave room.

The classifier is statistics, which this layer may not import: the caller passes it
(`SteadyCut`: series -> (index of the first steady interval, class)). The window starts
at the steady start or at `max_s`, whichever is earlier; a trial that has not settled
by `max_s` keeps its class ("still warming", "no steady state") and its window starts
at max_s.

What the window changes: every response read from the intervals (per-second
throughput and its batch means, series figures, stage metrics, drift within a trial),
and the all-operations summary responses (ops_s, runtime_s, the latency percentiles:
casslab.analysis.responses merges the window's interval histograms). One operation's
summary responses (read.p99_ms) and the stored summary row still cover the whole run:
intervals keep a histogram of all operations only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

SteadyCut = Callable[[Sequence[Sequence[float]]], tuple[int, str]]


@dataclass(frozen=True)
class Window:
    start_s: float  # seconds into the run where the recorded window starts
    klass: str  # the classifier's class
    intervals: list[dict[str, Any]]  # the run's intervals, those before start_s unrecorded


def _p50_ms(iv: dict[str, Any]) -> float:
    block = iv.get("all") or next(iter((iv.get("by_op") or {}).values()), None)
    if not block:
        return float("nan")
    return float(block["latency"]["p50_us"]) / 1000


def steady_window(intervals: list[dict[str, Any]], cut: SteadyCut, max_s: float) -> Window:
    """The recorded window of one trial's intervals (see the module docstring)."""
    recorded = [iv for iv in intervals if iv.get("recorded", True)]
    longest = max((float(iv.get("interval_s", 0.0)) for iv in recorded), default=0.0)
    full = [iv for iv in recorded if float(iv.get("interval_s", 0.0)) >= 0.5 * longest]
    start_idx, klass = cut([[float(iv["ops_s"]) for iv in full],
                            [_p50_ms(iv) for iv in full]])
    if start_idx < len(full):
        iv = full[start_idx]
        start_s = float(iv["t_s"]) - float(iv.get("interval_s", 0.0))
    else:
        start_s = max_s
    start_s = max(0.0, min(start_s, max_s))
    out = [{**iv, "recorded": False} if iv.get("recorded", True) and
           float(iv["t_s"]) <= start_s + 1e-9 else iv for iv in intervals]
    return Window(start_s, klass, out)
