"""The paired comparison's pure parts: stage timing, pairing and core swapping, where
trials land in the results store, and the summaries of paired differences."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.load import LoadResult, RunSummary
from casslab.metrics.samples import NodeSample, TrialMetrics
from casslab.store.db import Store, StoreError
from casslab.store.records import Results
from casslab.store.schema import SCHEMA_VERSION
from casslab.tune.learn import share_of
from casslab.tune.paired import (
    Arm,
    cell_index,
    changed_stage_gain,
    check_modes,
    load_note,
    normalised,
    paired,
    paired_gains,
    per_rep,
    schedule,
    stage_plan,
    start_setting,
    table,
    trial_seq,
)
from casslab.tune.paired_run import TrialSink, disk_peak_mib, stage_options, stage_result
from casslab.tune.rules import seed003_rules


def test_stage_plan_compresses_ttls_and_lengths_separately() -> None:
    plans = stage_plan(0.05, 0.01)
    assert [p.stage for p in plans] == [1, 2, 3, 4]
    assert [p.ttl_s for p in plans] == [180, 360, 540, 180]
    assert [p.duration_s for p in plans] == pytest.approx([90, 120, 180, 90])
    assert [round(share_of(p.mix), 4) for p in plans] == [0.1, 0.3, 0.03, 0.1]


@pytest.mark.parametrize(("scales", "message"), [
    ((0.0, 0.01), r"^time_scale 0: valid is 1/60 \(0.01667\) to 1 "),
    ((1e-9, 0.01), r"^time_scale 1e-09: valid is 1/60"),
    ((2.0, 0.01), r"^time_scale 2: valid is 1/60"),
    ((float("nan"), 0.01), r"^time_scale nan: valid is 1/60"),
    ((0.05, -1.0), r"^stage_scale -1: valid is 0.0005 to 1 "),
    ((0.05, 1e-9), r"^stage_scale 1e-09: valid is 0.0005 to 1 "),
    ((0.05, float("inf")), r"^stage_scale inf: valid is 0.0005 to 1 "),
])
def test_stage_plan_rejects_a_scale_outside_its_range(scales: tuple[float, float],
                                                      message: str) -> None:
    with pytest.raises(UsageError, match=message):
        stage_plan(*scales)
    # The ends of the ranges themselves are valid.
    assert len(stage_plan(1 / 60, 0.0005)) == len(stage_plan(1.0, 1.0)) == 4


def test_arms_swap_cores_every_repetition() -> None:
    pairs = schedule(4, ("static", "dynamic"))
    assert [(a.mode, b.mode) for a, b in pairs] == [("static", "dynamic"),
                                                    ("dynamic", "static")] * 2
    assert all((a.position, b.position) == (0, 1) for a, b in pairs)
    assert [a.rep for a, _ in pairs] == [1, 2, 3, 4]
    # Over an even number of repetitions each mode had each core equally often.
    on_core0 = [a.mode for a, _ in pairs]
    assert on_core0.count("static") == on_core0.count("dynamic")


def test_schedule_needs_a_repetition() -> None:
    with pytest.raises(UsageError, match="reps 0: must be >= 1"):
        schedule(0, ("static", "dynamic"))


@pytest.mark.parametrize("modes", [("static",), ("static", "static"), ("static", "tuned"),
                                   ("static", "dynamic", "observe")])
def test_modes_must_be_two_different_known_ones(modes: tuple[str, ...]) -> None:
    with pytest.raises(UsageError, match="static, dynamic, observe"):
        check_modes(modes)
    assert check_modes(("observe", "static")) == ("observe", "static")


def test_every_arm_stage_has_its_own_trial_and_each_mode_stage_its_own_cell() -> None:
    modes = ("static", "dynamic")
    arms = [arm for pair in schedule(3, modes) for arm in pair]
    seqs = [trial_seq(arm, stage, 4) for arm in arms for stage in range(1, 5)]
    assert seqs == list(range(1, 25))  # unique and in the order they run
    cells = {cell_index(modes, m, s, 4) for m in modes for s in range(1, 5)}
    assert cells == set(range(8))


def stage(no: int, ops: int, duration_s: float = 10.0, **extra: Any) -> dict[str, Any]:
    return {"stage": no, "ttl_s": 180, "read_share": 0.1, "ops": ops,
            "ops_s": ops / duration_s, "duration_s": duration_s, "mean_ms": 1.0,
            "p99_ms": 5.0, "disk_peak_mib": 10.0, **extra}


def run(rep: int, mode: str, ops: list[int]) -> dict[str, Any]:
    return {"rep": rep, "mode": mode, "stages": [stage(i, o) for i, o in enumerate(ops, 1)]}


DOC = {"scenario": [[1, 0.10, 150]], "time_scale": 0.05,
       "runs": [run(1, "static", [1000, 1000, 1000, 1000]),
                run(1, "dynamic", [1000, 1100, 1100, 1000]),
                run(2, "dynamic", [500, 600, 600, 500]),
                run(2, "static", [1000, 1000, 1000, 1000])]}


def test_paired_gains_compare_within_each_repetition() -> None:
    by = per_rep(DOC, lambda r: sum(s["ops"] for s in r["stages"] if s["stage"] in (2, 3)))
    assert paired_gains(by) == [(1, pytest.approx(0.1)), (2, pytest.approx(-0.4))]
    assert paired(DOC) == ("Paired by repetition (dynamic vs static, stages 2+3): "
                           "rep 1 +10.0%, rep 2 -40.0%.")


def test_normalising_by_stage_one_cancels_a_slower_core() -> None:
    # Rep 2's dynamic arm ran at half speed throughout but gained 20 % in stages 2+3
    # over its own stage 1: the normalised gain sees that, the raw one does not.
    assert normalised(DOC) == ("Relative to each run's own stage 1 (stages 2+3 ops/s over "
                               "stage 1 ops/s; stage 1 is identical in both modes), dynamic "
                               "vs static: rep 1 +10.0%, rep 2 +20.0% (median +15.0%).")


def test_a_repetition_missing_an_arm_is_left_out_of_the_pairs() -> None:
    doc = {"runs": [run(1, "static", [10, 10, 10, 10])]}
    assert paired(doc).endswith(": .")
    assert normalised(doc) == ""
    assert changed_stage_gain(doc) == "not enough runs"


def test_changed_stage_gain_compares_medians() -> None:
    assert changed_stage_gain(DOC) == ("stages 2+3 operations, median over 2 static / 2 "
                                       "dynamic runs: 2,000 vs 1,700 (-15.0%)")


def test_table_has_one_row_per_stage_and_mode_with_median_and_range() -> None:
    lines = table(DOC)
    assert len(lines) == 2 + 4 * 2
    assert lines[4] == ("| 2 | 180 s / 10% | static | 1000 (1000-1000) | 1 (1-1) | 5 (5-5) | "
                        "10 (10-10) |  |")
    assert lines[5] == ("| 2 | 180 s / 10% | dynamic | 850 (600-1100) | 1 (1-1) | 5 (5-5) | "
                        "10 (10-10) | -15.0% |")


def test_load_note_reads_stage_end_load_averages() -> None:
    doc = {"runs": [{"stages": [stage(1, 1, load_avg_1m=1.0), stage(2, 1, load_avg_1m=3.0)]}]}
    assert load_note(doc).startswith("Machine load average (1 min) at stage ends: median 2.0, "
                                     "range 1.0-3.0")


def test_start_setting_is_the_rules_choice_for_stage_one() -> None:
    rules = seed003_rules(time_scale=0.05)
    assert start_setting(rules, DOC) == "window 1 MINUTES, min_threshold 6"


def test_disk_peak_sums_nodes_sampled_together_and_skips_missing_sizes() -> None:
    m = TrialMetrics()
    for t, node, mib in [(1.0, "n1", 5.0), (1.0, "n2", 6.0), (2.0, "n1", 9.0),
                         (2.0, "n2", None), (3.0, "n1", 4.0), (3.0, "n2", 4.0)]:
        m.nodes.append(NodeSample(t, node, 0.0, 0.0, 0.0, 0.0, 1.0, mib))
    assert disk_peak_mib(m) == 11.0
    assert disk_peak_mib(TrialMetrics()) == 0.0


def test_both_arms_send_the_same_seed_per_stage_and_a_new_one_per_repetition() -> None:
    plans = stage_plan(0.05, 0.01)
    seeds = {(rep, p.stage): stage_options({"devices": 5}, Path("s.yaml"), rep, p)["seed"]
             for rep in (1, 2) for p in plans}
    assert len(set(seeds.values())) == len(seeds)
    opts = stage_options({"devices": 5}, Path("s.yaml"), 1, plans[0])
    assert opts == {"devices": 5, "stages": "s.yaml", "seed": 11}


def load_result(ops: int, ended_by: str = "completed") -> LoadResult:
    def pct(us: int) -> dict[str, Any]:
        return {"mean_us": us, "p50_us": us, "p95_us": us, "p99_us": us * 4, "p999_us": us * 5,
                "max_us": us * 6}
    by_op = {"insert": {"ops": ops, "ops_s": ops / 10, "errors": 0, "latency": pct(1000),
                        "service": pct(900)},
             "lesrow": {"ops": ops // 9, "ops_s": ops / 90, "errors": 0, "latency": pct(3000),
                        "service": pct(2000)}}
    total = ops + ops // 9
    # The merged histogram's numbers, as casslab-load computes them: mean 1.2 ms, p99 12 ms.
    merged = {"ops": total, "ops_s": total / 10, "errors": 0, "latency": pct(1200) | {
        "p99_us": 12000}, "service": pct(1000)}
    raw = {"workload": "iot", "ended_by": ended_by, "elapsed_s": 10.0,
           "ops": total, "ops_s": total / 10, "errors": 0, "by_op": by_op, "all": merged}
    return LoadResult(RunSummary.from_json(raw), [], ["casslab-load", "iot"])


def test_stage_result_takes_the_merged_percentiles_of_all_operations() -> None:
    plan = stage_plan(0.05, 0.01)[0]
    s = stage_result(plan, load_result(900), TrialMetrics(), {"min_threshold": "6"}, 1.234)
    assert (s.ops, s.mean_ms, s.p99_ms, s.load_avg_1m) == (1000, 1.2, 12.0, 1.23)


HEAD = {"scenario": [[1, 0.1, 150]], "reps": 1, "results": "x"}


def test_trials_land_in_the_store_as_mode_by_stage_cells(tmp_path: Path) -> None:
    modes = ("static", "dynamic")
    sink = TrialSink(tmp_path, HEAD, modes, 4)
    plan = stage_plan(0.05, 0.01)[1]
    sink.record(Arm(1, "dynamic", 0), plan, 0, load_result(900), TrialMetrics())
    sink.record(Arm(1, "static", 1), plan, 1, load_result(800, "interrupted"), TrialMetrics())
    with Store(tmp_path, create=False) as store:
        results = Results(store)
        rows = results.trials()
        campaign = results.campaign()
    assert campaign is not None
    assert [f["name"] for f in campaign.factors] == ["mode", "stage"]
    assert [(r.cell, r.status, r.ops, r.params["core"]) for r in rows] == [
        ("mode=dynamic stage=2", "done", 1000, 0), ("mode=static stage=2", "failed", 888, 1)]


def test_another_comparisons_results_are_refused_before_anything_runs(tmp_path: Path) -> None:
    TrialSink(tmp_path, HEAD, ("static", "dynamic"), 4)
    TrialSink(tmp_path, {**HEAD, "results": "elsewhere"}, ("static", "dynamic"), 4)  # same one
    with pytest.raises(StoreError, match="holds results of another spec"):
        TrialSink(tmp_path, {**HEAD, "reps": 3}, ("static", "dynamic"), 4)


def test_an_older_comparison_store_is_migrated_with_a_backup_and_one_line(
        tmp_path: Path) -> None:
    TrialSink(tmp_path, HEAD, ("static", "dynamic"), 4)
    raw = sqlite3.connect(tmp_path / "results.db")
    raw.execute("DROP TABLE host_load")
    raw.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    said: list[str] = []
    TrialSink(tmp_path, HEAD, ("static", "dynamic"), 4, say=said.append)
    backup = tmp_path / "results.db.v4.bak"
    assert said == [f"{tmp_path / 'results.db'}: schema 4 migrated to {SCHEMA_VERSION}; the "
                    f"old file is kept as {backup}"]
    assert backup.exists()
    said.clear()
    TrialSink(tmp_path, HEAD, ("static", "dynamic"), 4, say=said.append)
    assert said == []  # current now: nothing to say
