"""`design.until: verdicts`: run whole rounds until a stopping rule says every finding
is decisive, `trials.max` rounds are done, or `design.budget` is spent.

The rule itself is statistics (casslab.analysis decides whether a verdict is final and
keeps the error rate valid under this optional stopping), which this layer may not
import: the caller passes it in as `should_stop(completed_rounds) -> StopDecision`,
asked only between rounds and only from `trials.min` rounds on.

The budget is checked between rounds too: a round is never cut (a part-round would
leave its cells unpaired), so a new round starts only when the time spent in this run
plus the last round's duration stays within the budget. The minimum rounds run
whatever the budget (fewer could decide nothing).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from casslab.experiment.design import PlannedTrial
from casslab.experiment.spec import DesignSpec


@dataclass(frozen=True)
class StopDecision:
    """The rule's answer after a round: `stop` when every finding is decisive; `lines`
    say where each finding stands (printed as progress)."""

    stop: bool
    reason: str = ""
    lines: tuple[str, ...] = ()


ShouldStop = Callable[[int], StopDecision]

# Why a sequential campaign ended (Outcome.stopped_by).
BY_VERDICTS = "verdicts"
BY_MAX = "max rounds"
BY_BUDGET = "budget"


@dataclass
class Sequencer:
    """Hands the runner an interleaved campaign's pending trials round by round and stops
    between rounds (see the module docstring)."""

    design: DesignSpec
    should_stop: ShouldStop
    clock: Callable[[], float] = time.monotonic
    on_round: Callable[[int, StopDecision | None], None] = lambda _r, _d: None
    stopped_by: str = ""
    decision: StopDecision | None = None
    rounds_run: int = 0  # rounds started in this run
    last_round: int = 0  # the highest round started (or finished before this run)
    _round_s: list[float] = field(default_factory=list)

    def trials(self, pending: list[PlannedTrial]) -> Iterator[PlannedTrial]:
        """`pending` (in plan order) round by round, until the rule, the maximum or the
        budget ends the campaign; sets `stopped_by` and `decision`."""
        t0 = self.clock()
        rounds = sorted({t.round for t in pending})
        finished_before = min(rounds, default=self.design.trials_max + 1) - 1
        self.last_round = finished_before
        for r in rounds:
            completed = r - 1
            if completed >= self.design.trials:
                why = self._why_stop(completed, self.clock() - t0)
                if why:
                    self.stopped_by = why
                    return
            self.on_round(r, self.decision)
            self.last_round = r
            self.rounds_run += 1
            start = self.clock()
            yield from (t for t in pending if t.round == r)
            self._round_s.append(self.clock() - start)
        if self.last_round >= self.design.trials:
            self.decision = self.should_stop(self.last_round)
            self.stopped_by = BY_VERDICTS if self.decision.stop else BY_MAX
        else:
            self.stopped_by = BY_MAX

    def _why_stop(self, completed: int, elapsed_s: float) -> str:
        self.decision = self.should_stop(completed)
        if self.decision.stop:
            return BY_VERDICTS
        budget = self.design.budget_s
        if budget is not None:
            next_round = self._round_s[-1] if self._round_s else 0.0
            if elapsed_s + next_round > budget:
                return BY_BUDGET
        return ""

    def round_s(self) -> float:
        """The median time a round of this run took (s; NaN before one finished)."""
        return statistics.median(self._round_s) if self._round_s else math.nan

    def summary(self) -> str:
        """One line: how many rounds ran and why the campaign stopped."""
        what = {BY_VERDICTS: "every finding decisive",
                BY_MAX: f"the maximum of {self.design.trials_max} rounds",
                BY_BUDGET: f"the budget of {self.design.budget_s or 0:g} s (no room for "
                           "another round)"}.get(self.stopped_by, self.stopped_by)
        return f"stopped after round {self.last_round}: {what}"
