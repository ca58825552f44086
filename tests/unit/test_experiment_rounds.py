"""Interleaved designs: Williams rows are balanced; a round holds one kept trial of every
cell; labs are built once per round at most; warm-ups come after a block's reset."""

from __future__ import annotations

import random

import pytest

from casslab.experiment.design import plan, summarize_plan
from casslab.experiment.rounds import Counterbalance, arrange, balance, williams
from casslab.experiment.spec import parse_spec


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7])
def test_williams_rows_balance_position_and_predecessor(k: int) -> None:
    rows = williams(k)
    assert len(rows) == (2 * k if k % 2 and k > 1 else k)
    assert all(sorted(r) == list(range(k)) for r in rows)
    pos, after = balance(rows)
    n = len(rows)
    assert all(pos[(x, i)] == n // k for x in range(k) for i in range(k))
    if k > 1:  # every ordered pair of distinct cells is adjacent equally often
        per_pair = n * (k - 1) // (k * (k - 1))
        assert all(after.get((a, b), 0) == per_pair for a in range(k) for b in range(k)
                   if a != b)


def test_two_cells_alternate_abba() -> None:
    cb = Counterbalance.of(2, random.Random(1))
    orders = [cb.order(r) for r in range(1, 5)]
    assert orders[0] != orders[1] and orders[0] == orders[2] and orders[1] == orders[3]


def test_arrange_keeps_blocks_together_and_balances_cells() -> None:
    groups = [[["a1", "a2", "a3"]], [["b1"], ["b2"]]]
    runs = arrange(groups, 6, seed=3)
    assert all(sorted(r) == ["a1", "a2", "a3", "b1", "b2"] for r in runs)
    for r in runs:  # a lab's cells run together within a round
        labs = ["a" if x.startswith("a") else "b" for x in r]
        assert labs in (["a"] * 3 + ["b"] * 2, ["b"] * 2 + ["a"] * 3)
    a_orders = [[int(x[1]) - 1 for x in r if x.startswith("a")] for r in runs]
    pos, _ = balance(a_orders)
    assert set(pos.values()) == {2}  # 6 rounds = one pass over 6 rows for k = 3


SPEC = """\
workload: ycsb-a
factors:
  - {name: nodes, levels: [1, 2]}
  - {name: network.delay_ms, levels: [0, 2, 4]}
design: {order: interleaved, trials: 4, warmup_trials: 1, seed: 9}
"""


def test_every_round_has_one_kept_trial_of_every_cell() -> None:
    trials = plan(parse_spec(SPEC))
    kept = [t for t in trials if not t.warmup]
    assert {t.round for t in trials} == {1, 2, 3, 4}
    for r in range(1, 5):
        assert sorted(t.cell.index for t in kept if t.round == r) == list(range(6))
    assert [t.round for t in trials] == sorted(t.round for t in trials)


def test_each_lab_is_built_at_most_once_per_round_and_warmed_after_it() -> None:
    trials = plan(parse_spec(SPEC))
    for r in range(1, 5):
        assert sum(t.reset == "rebuild" for t in trials if t.round == r) <= 2
    for i, t in enumerate(trials):
        if t.reset == "rebuild":  # the cells of the new lab are warmed before any kept trial
            nxt = trials[i:i + 3]
            assert all(x.warmup for x in nxt)
    summary = summarize_plan(trials)
    assert summary.rounds == 4 and summary.kept == 24
    assert "4 rounds of 6 kept trials" in summary.line()


def test_one_lab_warms_up_once_then_only_rounds() -> None:
    s = parse_spec("workload: ycsb-a\nfactors:\n  - {name: network.delay_ms, levels: [0, 2]}\n"
                   "design: {order: interleaved, trials: 6, warmup_trials: 2}\n")
    trials = plan(s)
    assert sum(t.warmup for t in trials) == 4 and all(t.warmup for t in trials[:4])
    assert sum(t.reset != "none" for t in trials) == 1
    pairs = [[t.cell.index for t in trials[4:] if t.round == r] for r in range(1, 7)]
    assert pairs[0] != pairs[1] and pairs[0] == pairs[2]  # ABBA...


def test_until_verdicts_plans_the_maximum_rounds() -> None:
    s = parse_spec("workload: ycsb-a\nfactors:\n  - {name: network.delay_ms, levels: [0, 2]}\n"
                   "design: {order: interleaved, trials: {min: 3, max: 8}, until: verdicts}\n"
                   "reference:\n  findings:\n    - {claim: c, response: runtime_s, "
                   "factor: network.delay_ms, expect: higher}\n")
    assert max(t.round for t in plan(s)) == 8


def test_design_reset_makes_each_kept_trial_its_own_unit() -> None:
    s = parse_spec("workload: ycsb-a\nfactors:\n  - {name: network.delay_ms, levels: [0, 2]}\n"
                   "design: {order: interleaved, trials: 3, warmup_trials: 1, "
                   "reset: truncate}\n")
    trials = plan(s)
    kept = [i for i, t in enumerate(trials) if not t.warmup]
    assert len(kept) == 6
    for i in kept:  # reset, its own warm-up of the same cell, then the trial
        assert trials[i - 1].warmup and trials[i - 1].cell == trials[i].cell
        assert trials[i - 1].reset != "none"
