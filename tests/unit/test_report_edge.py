"""The across-sweep findings of seed 002 (casslab.report.edge): how an open one says
what it spent and what would decide it."""

from __future__ import annotations

from casslab.analysis.across import round_ratio_effect
from casslab.analysis.findings import INCONCLUSIVE, Verdict
from casslab.analysis.sequential import tune_c
from casslab.experiment.reference import Finding
from casslab.report.edge import SWEEPS_SPENT, Design

FINDING = Finding("reads take slightly longer than writes", "read.mean_ms", "operation",
                  "write", "read", "higher")


def _rounds(n: int, mean: float, spread: float) -> dict[int, float]:
    """n per-round log-ratios alternating mean +- spread (sd about `spread`)."""
    return {r: mean + (spread if r % 2 else -spread) for r in range(1, n + 1)}


def _verdict(design: Design, per_round: dict[int, float]) -> Verdict:
    effect, p = round_ratio_effect(per_round, 0.95, sequential=design.sequential,
                                   c=design.c)
    return design.verdict(FINDING, effect, p, 1, "one finding")


def test_an_open_across_finding_in_the_sequence_projects_the_rounds_that_would_decide_it(
) -> None:
    design = Design(True, True, tune_c(20, 0.05), 20)
    v = _verdict(design, _rounds(10, 0.03, 0.06))
    assert v.verdict == INCONCLUSIVE
    assert v.spent == SWEEPS_SPENT
    assert 10 < v.decide_rounds < 1000
    assert v.label.startswith(f"inconclusive ({SWEEPS_SPENT} spent; an estimate within +-")
    assert f"from no effect; about {int(v.decide_rounds)} rounds in all" in v.label


def test_the_projection_is_the_first_round_count_that_decides_at_the_same_noise() -> None:
    """Rounds of the same mean and spread, as many as projected (or one more, to keep
    the alternation's mean), decide it; the 10 measured do not."""
    design = Design(True, True, tune_c(20, 0.05), 20)
    n = int(_verdict(design, _rounds(10, 0.03, 0.06)).decide_rounds)
    # an even count keeps the alternating rounds' mean and sd as the 10 measured
    even = n if n % 2 == 0 else n + 1
    assert _verdict(design, _rounds(even, 0.03, 0.06)).verdict != INCONCLUSIVE
    assert _verdict(design, _rounds(10, 0.03, 0.06)).verdict == INCONCLUSIVE


def test_a_decided_or_fixed_design_across_finding_gets_no_projection() -> None:
    decided = _verdict(Design(True, True, tune_c(20, 0.05), 20), _rounds(10, 0.3, 0.02))
    assert decided.verdict != INCONCLUSIVE and decided.spent == ""
    paired = _verdict(Design(True, False, None, None), _rounds(4, 0.4, 0.3))
    assert paired.verdict == INCONCLUSIVE and paired.spent == ""
