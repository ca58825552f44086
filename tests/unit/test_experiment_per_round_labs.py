"""`design.labs: per-round`: a fresh lab for every round of an interleaved design, so
the per-round differences carry a lab build's own state (the plan's side; the runner
rebuilds where the plan says "rebuild", as for any lab change)."""

from __future__ import annotations

import pytest

from casslab.experiment.design import plan
from casslab.experiment.spec import SpecError, parse_spec

SPEC = """\
workload: ycsb-a
lab:
  nodes: 3
  network:
    groups:
      edge: {{node1-node2: 5, node2-node3: 10, node1-node3: 15}}
      endpoint: {{client-node1: 10, client-node2: 10, client-node3: 10}}
factors:
  - {{name: network.scale, levels: [edge+50, endpoint+50]}}
design: {{order: interleaved, trials: 4, lab_warmup_trials: 2, seed: 2{extra}}}
"""


def test_every_round_starts_on_a_fresh_lab_with_its_lab_warmups() -> None:
    trials = plan(parse_spec(SPEC.format(extra=", labs: per-round")))
    rebuilds = [t for t in trials if t.reset == "rebuild"]
    assert [t.round for t in rebuilds] == [1, 2, 3, 4]
    assert all(t.warmup for t in rebuilds)  # each build's first lab warm-up
    assert rebuilds[0].why.startswith("first trial: no lab yet")
    for t in rebuilds[1:]:
        assert t.why == (f"design.labs: per-round: a fresh lab for round {t.round}; then "
                         "design.lab_warmup_trials")
    # 2 lab warm-ups and 2 kept trials a round; every round has each cell once
    for r in range(1, 5):
        in_round = [t for t in trials if t.round == r]
        assert [t.warmup for t in in_round] == [True, True, False, False]
        assert sorted(t.cell.index for t in in_round if not t.warmup) == [0, 1]


def test_without_lab_warmups_the_rounds_first_kept_trial_is_the_rebuild() -> None:
    text = SPEC.format(extra=", labs: per-round").replace("lab_warmup_trials: 2, ", "")
    trials = plan(parse_spec(text))
    assert not any(t.warmup for t in trials)
    firsts = [t for t in trials if t.reset == "rebuild"]
    assert [t.round for t in firsts] == [1, 2, 3, 4]
    assert firsts[2].why == "design.labs: per-round: a fresh lab for round 3"


def test_one_lab_is_built_once_without_it() -> None:
    trials = plan(parse_spec(SPEC.format(extra="")))
    assert [t.round for t in trials if t.reset == "rebuild"] == [1]


@pytest.mark.parametrize("extra", [", labs: per-round, order: random",
                                   ", labs: per-round, order: blocked"])
def test_per_round_needs_rounds(extra: str) -> None:
    text = SPEC.format(extra=extra).replace("order: interleaved, ", "")
    with pytest.raises(SpecError, match=r"design\.labs: per-round is for `order: "
                       r"interleaved`"):
        parse_spec(text)
