"""`design.warmup_rounds`: whole rounds of warm-ups before an interleaved campaign's
round 1 (every cell once, in round 1's order, nothing kept), and the spec's checks."""

from __future__ import annotations

import pytest

from casslab.experiment.design import plan
from casslab.experiment.spec import SpecError, parse_spec
from casslab.experiment.spec.size import estimate_size

SPEC = """\
workload: ycsb-a
factors:
  - {{name: profile, levels: [t2.micro, t2.small, t2.medium]}}
  - {{name: threads, levels: [8, 16]}}
design: {{order: interleaved, trials: 3, warmup_trials: 1, lab_warmup_trials: 2, seed: 4,
         labs: keep{extra}}}
"""


def _plan(extra: str) -> list:
    return plan(parse_spec(SPEC.format(extra=extra)))


def test_a_warmup_round_runs_every_cell_once_before_the_first_kept_trial() -> None:
    base, warm = _plan(""), _plan(", warmup_rounds: 1")
    first_kept = next(i for i, t in enumerate(warm) if not t.warmup)
    before = warm[:first_kept]
    assert all(t.round == 1 for t in before)
    # one more trial of each of the 6 cells, all of them before the first kept trial
    assert len(warm) == len(base) + 6
    assert {t.cell.index for t in before} == set(range(6))
    # the kept trials, their rounds and their order are the base plan's
    assert [(t.cell.index, t.round) for t in warm if not t.warmup] == \
        [(t.cell.index, t.round) for t in base if not t.warmup]


def test_the_warmup_round_follows_round_ones_order() -> None:
    warm = _plan(", warmup_rounds: 1")
    first_kept = next(i for i, t in enumerate(warm) if not t.warmup)
    kept_r1 = [t.cell.index for t in warm if not t.warmup and t.round == 1]
    # lab warm-ups repeat the first cell of each lab; first appearances give the order
    assert list(dict.fromkeys(t.cell.index for t in warm[:first_kept])) == kept_r1


def test_every_lab_is_built_once_with_its_lab_warmups_in_the_warmup_round() -> None:
    warm = _plan(", warmup_rounds: 2")
    first_builds = [t for t in warm if t.reset == "rebuild" and not t.resume]
    assert len(first_builds) == 3
    first_kept = next(i for i, t in enumerate(warm) if not t.warmup)
    assert all(warm.index(t) < first_kept for t in first_builds)


def test_the_size_estimate_counts_a_trial_of_every_cell_per_warmup_round() -> None:
    sizes = [estimate_size(parse_spec(SPEC.format(extra=f", warmup_rounds: {n}"))).trials
             for n in (0, 1, 3)]
    assert [s - sizes[0] for s in sizes] == [0, 6, 18]


def test_warmup_rounds_need_an_interleaved_order() -> None:
    with pytest.raises(SpecError, match=r"design\.warmup_rounds: needs `order: interleaved`"):
        parse_spec("workload: ycsb-a\ndesign: {trials: 3, warmup_rounds: 1}\n")


def test_warmup_rounds_outside_0_to_10_is_one_line() -> None:
    with pytest.raises(SpecError, match=r"design\.warmup_rounds: 11 is out of range"):
        parse_spec(SPEC.format(extra=", warmup_rounds: 11"))
