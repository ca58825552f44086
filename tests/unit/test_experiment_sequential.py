"""until: verdicts: whole rounds, the rule asked between rounds from the minimum on, the
maximum and the budget respected, a resume asks before its first new round."""

from __future__ import annotations

from casslab.experiment.design import PlannedTrial, plan
from casslab.experiment.sequential import BY_BUDGET, BY_MAX, BY_VERDICTS, Sequencer, StopDecision
from casslab.experiment.spec import DesignSpec, parse_spec

SPEC = """\
workload: ycsb-a
factors:
  - {name: network.delay_ms, levels: [0, 2]}
design: {order: interleaved, trials: {min: 3, max: 8}, until: verdicts, budget: BUDGET}
reference:
  findings:
    - {claim: c, response: runtime_s, factor: network.delay_ms, expect: higher}
"""


def setup(budget: str = "1h") -> tuple[DesignSpec, list[PlannedTrial]]:
    s = parse_spec(SPEC.replace("BUDGET", budget))
    return s.design, plan(s)


class Clock:
    """Each trial takes 10 s of fake time."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def drain(seq: Sequencer, trials: list[PlannedTrial], clock: Clock) -> list[PlannedTrial]:
    out = []
    for t in seq.trials(trials):
        clock.t += 10.0
        out.append(t)
    return out


def test_stops_when_the_rule_says_so_after_whole_rounds() -> None:
    design, trials = setup()
    asked: list[int] = []

    def rule(done: int) -> StopDecision:
        asked.append(done)
        return StopDecision(done >= 5, "decisive" if done >= 5 else "")

    clock = Clock()
    seq = Sequencer(design, rule, clock=clock)
    ran = drain(seq, trials, clock)
    assert {t.round for t in ran} == {1, 2, 3, 4, 5} and len(ran) == 10
    assert asked == [3, 4, 5]  # never before the minimum
    assert seq.stopped_by == BY_VERDICTS and "round 5" in seq.summary()


def test_runs_the_maximum_when_never_decisive() -> None:
    design, trials = setup()
    clock = Clock()
    seq = Sequencer(design, lambda _n: StopDecision(False), clock=clock)
    assert len(drain(seq, trials, clock)) == 16
    assert seq.stopped_by == BY_MAX and seq.last_round == 8


def test_budget_stops_before_a_round_that_would_overrun_it() -> None:
    design, trials = setup("65s")  # a round is 2 trials = 20 s
    clock = Clock()
    seq = Sequencer(design, lambda _n: StopDecision(False), clock=clock)
    ran = drain(seq, trials, clock)
    # rounds 1-3 (the minimum) run anyway: 60 s; a 4th would end at 80 s > 65 s
    assert {t.round for t in ran} == {1, 2, 3}
    assert seq.stopped_by == BY_BUDGET


def test_a_resume_asks_the_rule_before_its_first_new_round() -> None:
    design, trials = setup()
    pending = [t for t in trials if t.round > 4]
    asked: list[int] = []

    def rule(done: int) -> StopDecision:
        asked.append(done)
        return StopDecision(True)

    clock = Clock()
    seq = Sequencer(design, rule, clock=clock)
    assert drain(seq, pending, clock) == []
    assert asked == [4] and seq.stopped_by == BY_VERDICTS
