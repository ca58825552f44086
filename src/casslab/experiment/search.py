"""Peak search: raise concurrency or rate step by step until throughput falls or p99
latency passes a bound (seed 001 raised YCSB threads until throughput stopped rising);
levels relative to the peak (`100%`, `66%`) then run at a share of it. Seed 004's
"100 %" and "66 %" were fixed thread counts (450, 150): a `threads` factor, no search.

`PeakSearch` is a pure state machine: the runner asks `next_level()`, runs trials at
that level and `record()`s what it measured; recorded steps can be replayed from the
results database so a resumed campaign does not search again.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from casslab.experiment.factors.registry import CONCURRENCY, RATE
from casslab.experiment.spec import SearchSpec, relative_fraction


@dataclass(frozen=True)
class Step:
    level: float
    ops_s: float
    p99_ms: float


@dataclass(frozen=True)
class PeakResult:
    """peak_*: the step with the highest throughput; knee_*: where adding load stopped
    paying (Kneedle: farthest point above the chord of the rising part)."""

    vary: str
    peak_level: float
    peak_ops_s: float
    knee_level: float
    knee_ops_s: float
    stopped_by: str
    steps: tuple[Step, ...]


@dataclass
class PeakSearch:
    spec: SearchSpec
    steps: list[Step] = field(default_factory=list)
    stopped_by: str | None = None

    def level_at(self, i: int) -> float:
        s = self.spec
        level = s.start * s.multiply ** i if s.multiply else s.start + (s.add or 0.0) * i
        return float(round(level)) if s.vary in CONCURRENCY else float(level)

    def next_level(self) -> float | None:
        """The next level to measure, or None when the search is over."""
        if self.stopped_by:
            return None
        i = len(self.steps)
        level = self.level_at(i)
        # Rounding concurrency can repeat a level (1 x 1.3 = 1): skip ahead.
        while self.steps and level <= self.steps[-1].level:
            i += 1
            level = self.level_at(i)
        return level

    def record(self, level: float, ops_s_trials: list[float], p99_ms_trials: list[float]) -> None:
        """Add a step (medians over its trials) and decide whether to stop."""
        step = Step(level, statistics.median(ops_s_trials), statistics.median(p99_ms_trials))
        self.steps.append(step)
        best = max(s.ops_s for s in self.steps)
        if self.spec.p99_ms is not None and step.p99_ms > self.spec.p99_ms:
            self.stopped_by = f"p99 {step.p99_ms:.1f} ms > {self.spec.p99_ms:g} ms"
        elif len(self.steps) > 1 and step.ops_s < best * (1 - self.spec.drop_pct / 100):
            self.stopped_by = (f"throughput fell {100 * (1 - step.ops_s / best):.1f} % below "
                               f"the best ({best:,.0f} ops/s)")
        elif len(self.steps) >= self.spec.max_steps:
            self.stopped_by = f"max_steps {self.spec.max_steps} reached"

    def result(self) -> PeakResult:
        if not self.steps:
            raise ValueError("no step recorded")
        return summarize(self.spec.vary, self.steps, self.stopped_by or "not finished")


def summarize(vary: str, steps: list[Step], stopped_by: str) -> PeakResult:
    """Peak and knee of a list of steps (pure)."""
    peak = max(steps, key=lambda s: s.ops_s)
    knee = find_knee(steps[: steps.index(peak) + 1])
    return PeakResult(vary, peak.level, peak.ops_s, knee.level, knee.ops_s, stopped_by,
                      tuple(steps))


def find_knee(steps: list[Step]) -> Step:
    """Kneedle on a rising curve: the step farthest above the straight line from the
    first step to the last, both axes normalised to [0, 1]. Fewer than 3 steps: the last."""
    if len(steps) < 3:
        return steps[-1]
    x0, x1 = steps[0].level, steps[-1].level
    y0, y1 = steps[0].ops_s, steps[-1].ops_s
    if x1 == x0 or y1 == y0:
        return steps[-1]

    def gap(s: Step) -> float:
        return (s.ops_s - y0) / (y1 - y0) - (s.level - x0) / (x1 - x0)

    best = max(steps, key=gap)
    return best if gap(best) > 0 else steps[-1]


def resolve_relative(name: str, value: str, peak: PeakResult) -> float:
    """A level like '66%' as a number: of the peak throughput for `rate`, else of the
    peak level of the searched parameter (rounded, at least 1, for concurrency)."""
    frac = relative_fraction(value)
    if name == RATE:
        return round(peak.peak_ops_s * frac, 1)
    return float(max(1, round(peak.peak_level * frac)))
