"""Factorial design, run order, warm-ups, resets; peak search decisions."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from casslab.experiment.design import (
    PlannedTrial,
    cells,
    plan,
    reset_before,
    reset_needed,
    rewarm_needed,
    search_key,
    summarize_plan,
)
from casslab.experiment.search import PeakSearch, Step, find_knee, resolve_relative, summarize
from casslab.experiment.spec import SpecError, estimate_size, load_spec, parse_spec

SPEC = """\
workload: ycsb-a
factors:
  - {name: nodes, levels: [1, 3]}
  - {name: workload, levels: [ycsb-a, ycsb-c]}
  - {name: in_flight, levels: [1, 8]}
design: {trials: 3, warmup_trials: 2, randomize: RANDOM, seed: 5}
"""


def spec(randomize: bool = False):  # type: ignore[no-untyped-def]
    return parse_spec(SPEC.replace("RANDOM", "true" if randomize else "false"))


def test_full_factorial() -> None:
    cs = cells(spec().factors)
    assert len(cs) == 8
    assert cs[0].params == {"nodes": 1, "workload": "ycsb-a", "in_flight": 1}
    assert cs[0].key == "nodes=1,workload=ycsb-a,in_flight=1"
    assert len({c.key for c in cs}) == 8


@pytest.mark.parametrize("randomize", [False, True])
def test_plan_counts_warmups_and_groups_labs(randomize: bool) -> None:
    trials = plan(spec(randomize))
    assert len(trials) == 8 * 5
    assert [t.seq for t in trials] == list(range(1, 41))
    for idx in range(8):
        mine = [t for t in trials if t.cell.index == idx]
        assert [t.trial_no for t in mine] == [1, 2, 3, 4, 5]
        assert [t.warmup for t in mine] == [True, True, False, False, False]
    # grouped by lab configuration: the lab is built exactly twice (nodes 1 and 3)
    assert sum(t.reset == "rebuild" for t in trials) == 2
    nodes = [t.cell.params["nodes"] for t in trials]
    assert nodes == sorted(nodes) or nodes == sorted(nodes, reverse=True)


def test_randomised_order_is_seeded() -> None:
    a = [(t.cell.index, t.trial_no) for t in plan(spec(True))]
    b = [(t.cell.index, t.trial_no) for t in plan(spec(True))]
    c = [(t.cell.index, t.trial_no) for t in plan(spec(False))]
    assert a == b and a != c


def test_resets_follow_what_changes() -> None:
    f = spec().factors
    base = {"nodes": 1, "workload": "ycsb-a", "in_flight": 1}
    assert reset_needed(None, base, f, "none") == "rebuild"
    assert reset_needed(base, {**base, "nodes": 3}, f, "none") == "rebuild"
    assert reset_needed(base, {**base, "workload": "ycsb-c"}, f, "none") == "recreate"
    assert reset_needed(base, {**base, "workload": "ycsb-c"}, f, "rebuild") == "rebuild"
    assert reset_needed(base, {**base, "in_flight": 8}, f, "none") == "none"
    assert reset_needed(base, {**base, "in_flight": 8}, f, "truncate") == "truncate"
    assert reset_needed(base, base, f, "truncate") == "truncate"


def cold_kept_trials(trials: list[PlannedTrial], warmups: int) -> list[PlannedTrial]:
    """Kept trials with fewer than `warmups` warm-ups of their own block between the last
    reset before them (a block always starts with one) and themselves."""
    cold, since = [], 0
    for t in trials:
        if t.reset != "none":
            since = 0
        if t.warmup:
            since += 1
        elif since < warmups:
            cold.append(t)
    return cold


def blocks_share_lab_and_schema(trials: list[PlannedTrial]) -> bool:
    seen: dict[int, set[tuple[object, ...]]] = {}
    for t in trials:
        p = t.cell.params
        seen.setdefault(t.block, set()).add((p.get("nodes"), p.get("profile"),
                                              p.get("workload")))
    return all(len(v) == 1 for v in seen.values())


EXAMPLE_000 = Path(__file__).parents[2] / "examples" / "000-rpi-iot" / "links.yaml"


def test_example_000_every_kept_trial_follows_its_blocks_warmups() -> None:
    """Issue 15: with randomize and the workload as a schema factor, 121 of the 160
    kept trials ran right after a keyspace recreate, their warm-ups elsewhere. The
    example's paper size keeps that design (the study's: 9 warm-ups, 21 kept trials per
    cell, in random order; its here-size adds rounds since 2026-11-29)."""
    trials = plan(load_spec(EXAMPLE_000, scale="paper", allow_large=True))
    assert cold_kept_trials(trials, 9) == []
    assert blocks_share_lab_and_schema(trials)
    # a block changes only with a reset that rebuilds or recreates
    for a, b in itertools.pairwise(trials):
        assert (a.block != b.block) == (b.reset in ("rebuild", "recreate"))
    s = summarize_plan(trials)
    assert (s.blocks, s.warmups, s.kept) == (24, 432, 1008)
    assert s.resets == {"recreate": 18, "rebuild": 6}  # each lab (1..6 nodes) built once
    assert s.line() == ("24 blocks, 432 warm-ups, 1008 kept trials; resets: 18 recreate, "
                        "6 rebuild")
    assert trials[0].why == "first trial: no lab yet"
    recreate = next(t for t in trials if t.reset == "recreate")
    assert recreate.why.startswith("schema changed: workload ")


def test_the_old_order_left_kept_trials_cold() -> None:
    """The check above can fail: a plan where one block's warm-ups are moved after its
    kept trials is caught."""
    trials = plan(load_spec(EXAMPLE_000, scale="paper", allow_large=True))
    block = [t for t in trials if t.block == 1]
    moved = [t for t in block if not t.warmup] + [t for t in block if t.warmup]
    moved[0] = PlannedTrial(1, moved[0].cell, 9, False, "rebuild", 1)
    # both cells of the block, 21 kept trials each
    assert len(cold_kept_trials(moved, 9)) == 42


@pytest.mark.parametrize("randomize", [False, True])
def test_blocks_shuffle_only_inside_lab_and_schema(randomize: bool) -> None:
    trials = plan(spec(randomize))
    assert cold_kept_trials(trials, 2) == []
    assert blocks_share_lab_and_schema(trials)
    assert summarize_plan(trials).blocks == 4
    # a block's warm-ups all come before its first kept trial
    for b in {t.block for t in trials}:
        mine = [t.warmup for t in trials if t.block == b]
        assert mine == sorted(mine, reverse=True) or not randomize


def test_randomized_block_order_is_shuffled_too() -> None:
    orders = set()
    for seed in range(1, 8):
        s = parse_spec(SPEC.replace("RANDOM", "true").replace("seed: 5", f"seed: {seed}"))
        orders.add(tuple(dict.fromkeys((t.cell.params["nodes"], t.cell.params["workload"])
                                       for t in plan(s))))
    assert len(orders) > 1


def test_spec_order_is_kept_without_randomize() -> None:
    """Cells in factor order, each with its warm-ups first, as before blocks existed."""
    trials = plan(spec(False))
    assert [(t.cell.index, t.trial_no) for t in trials] == \
        [(c, n) for c in range(8) for n in range(1, 6)]


@pytest.mark.parametrize("randomize", [False, True])
def test_design_reset_is_followed_by_warmups_again(randomize: bool) -> None:
    """A truncate between trials wipes the warm state: each kept trial gets its own
    warm-ups after the truncate, never a truncate between warm-up and kept trial."""
    s = parse_spec(SPEC.replace("RANDOM", "true" if randomize else "false")
                   .replace("seed: 5", "seed: 5, reset: truncate"))
    trials = plan(s)
    assert len(trials) == 8 * 3 * (2 + 1) == estimate_size(s).trials
    assert cold_kept_trials(trials, 2) == []
    for a, b in itertools.pairwise(trials):
        if not b.warmup:
            assert (b.reset, a.warmup, a.cell) == ("none", True, b.cell)
    # each kept trial with its warm-ups is a block, started by its reset: a truncate
    # unless the lab or the schema changed (rebuild, recreate)
    assert all((a.block != b.block) == (b.reset != "none") for a, b in itertools.pairwise(trials))
    truncates = [t for t in trials if t.reset == "truncate"]
    assert all(t.warmup and "design.reset: truncate" in t.why for t in truncates)
    s2 = summarize_plan(trials)
    assert (s2.blocks, s2.warmups, s2.kept) == (24, 48, 24)
    assert sum(s2.resets.values()) == 24
    if randomize:  # shuffled across the schema levels of a lab, not one level after another
        assert s2.resets["recreate"] > 2
    else:
        assert s2.resets == {"rebuild": 2, "recreate": 2, "truncate": 20}


def test_reset_before_follows_the_lab_not_only_the_plan() -> None:
    trials = plan(spec(False))
    f = spec().factors
    kept = next(t for t in trials if not t.warmup)
    assert kept.reset == "none"
    assert reset_before(kept, kept.cell.params, f) == "none"
    # resumed (no lab yet) or after a failure: rebuilt, then warmed up again unstored
    assert reset_before(kept, None, f) == "rebuild"
    assert rewarm_needed(kept, "rebuild", 2)
    assert not rewarm_needed(kept, "none", 2)
    assert not rewarm_needed(kept, "rebuild", 0)
    assert not rewarm_needed(trials[0], "rebuild", 2)  # a warm-up itself
    other = {**kept.cell.params, "workload": "ycsb-c"}
    assert reset_before(kept, other, f) == "recreate"


SEARCH = """\
workload: stress-write
factors:
  - {name: workload, levels: [stress-write, stress-read]}
  - {name: rate, levels: ["100%", "66%"]}
search: {vary: in_flight, start: 1, multiply: 2, max_steps: 6,
         stop_when: {throughput_drop_pct: 5, p99_ms: 100}}
"""


def test_peak_search_stops_when_throughput_falls() -> None:
    s = parse_spec(SEARCH)
    assert s.search is not None
    ps = PeakSearch(s.search)
    curve = {1: 1000, 2: 1900, 4: 3000, 8: 3300, 16: 3000}
    seen = []
    while (lvl := ps.next_level()) is not None:
        seen.append(lvl)
        ps.record(lvl, [curve[int(lvl)]], [5.0])
    assert seen == [1, 2, 4, 8, 16]
    r = ps.result()
    assert (r.peak_level, r.peak_ops_s) == (8, 3300)
    assert "fell" in r.stopped_by
    assert r.knee_level == 4


def test_peak_search_stops_on_latency_and_max_steps() -> None:
    s = parse_spec(SEARCH)
    assert s.search is not None
    ps = PeakSearch(s.search)
    ps.record(1, [100], [10])
    ps.record(2, [200], [150])
    assert ps.next_level() is None and "p99" in (ps.stopped_by or "")
    ps2 = PeakSearch(s.search)
    for i in range(6):
        lvl = ps2.next_level()
        assert lvl == 2 ** i
        ps2.record(lvl, [100 * (i + 1)], [1])
    assert ps2.next_level() is None and "max_steps" in (ps2.stopped_by or "")


def test_knee_and_relative_levels() -> None:
    steps = [Step(1, 100, 1), Step(2, 190, 1), Step(4, 260, 1), Step(8, 280, 1)]
    assert find_knee(steps).level == 4  # (1,0) (2,.5) (4,.89) (8,1) on x 0,1/7,3/7,1
    assert find_knee(steps[:2]).level == 2
    peak = summarize("in_flight", steps, "test")
    assert resolve_relative("rate", "66%", peak) == pytest.approx(280 * 0.66)
    assert resolve_relative("in_flight", "50%", peak) == 4
    assert resolve_relative("in_flight", "1%", peak) == 1


def test_search_key_drops_relative_factors() -> None:
    s = parse_spec(SEARCH)
    assert search_key({"workload": "stress-read", "rate": "66%"}, s.factors) == \
        "workload=stress-read"


def test_network_factors_map_to_link_conditions() -> None:
    from casslab.experiment.factors.network import wanted
    from casslab.experiment.factors.registry import net_levels

    assert wanted(None, net_levels({"workload": "ycsb-a"}), 3) is None
    assert wanted("none", net_levels({"network": "loopback"}), 3) is None
    assert wanted(None, net_levels({"network": "wifi"}), 3) == {"profile": "wifi"}
    got = wanted("ethernet", net_levels({"network.client.delay_ms": 10,
                                         "network.nodes.delay_ms": 5, "network.loss_pct": 1}),
                 3)
    assert got == {"profile": "ethernet", "all": {"loss_pct": 1},
                   "links": {"client-node1": {"delay_ms": 10}, "client-node2": {"delay_ms": 10},
                             "client-node3": {"delay_ms": 10}, "node1-node2": {"delay_ms": 5},
                             "node1-node3": {"delay_ms": 5}, "node2-node3": {"delay_ms": 5}}}
    assert wanted({"profile": "wifi", "client": {"delay_ms": 3}}, net_levels({}), 1) == {
        "profile": "wifi", "links": {"client-node1": {"delay_ms": 3}}}


@pytest.mark.parametrize("reset", ["none", "recreate"])
def test_lab_warmups_run_once_per_lab_right_after_it_is_built(reset: str) -> None:
    s = parse_spec(SPEC.replace("RANDOM", "true")
                   .replace("seed: 5", f"seed: 5, reset: {reset}, lab_warmup_trials: 2"))
    base = plan(parse_spec(SPEC.replace("RANDOM", "true")
                           .replace("seed: 5", f"seed: 5, reset: {reset}")))
    trials = plan(s)
    assert len(trials) == len(base) + 2 * 2 == estimate_size(s).trials  # 2 labs (nodes 1, 3)
    rebuilds = [i for i, t in enumerate(trials) if t.reset == "rebuild"]
    assert len(rebuilds) == 2
    for i in rebuilds:
        first, second, after = trials[i], trials[i + 1], trials[i + 2]
        assert first.warmup and second.warmup and second.reset == "none"
        assert first.cell == second.cell == after.cell
        assert "design.lab_warmup_trials" in first.why
        # the lab's own first unit follows with its usual reset (design.reset) and warm-ups
        assert after.reset == ("none" if reset == "none" else "recreate")
    # blocks start at resets, the lab warm-ups being one
    assert all((a.block != b.block) == (b.reset != "none") for a, b in itertools.pairwise(trials))
    assert summarize_plan(trials).warmups == summarize_plan(base).warmups + 4


def test_lab_warmup_trials_outside_0_to_100_is_one_line() -> None:
    with pytest.raises(SpecError, match=r"^spec:2: design\.lab_warmup_trials: 101 is out of "
                       r"range \(valid: >= 0 and <= 100\)$"):
        parse_spec("workload: ycsb-a\ndesign: {trials: 3, lab_warmup_trials: 101}\n")
