"""`compare`: Welch t, Hedges g and Holm against scipy and by hand; flags only at
corrected p <= 0.01; load_side reads a real results store."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.compare import Side, compare, load_side
from casslab.core.errors import UsageError
from casslab.metrics.samples import TrialMetrics
from casslab.store.db import Store, StoreError

FAST = [1010.0, 990.0, 1005.0, 998.0, 1002.0, 995.0]
SLOW = [900.0, 910.0, 895.0, 905.0, 899.0, 902.0]
LAT_A = [2.0, 2.2, 1.9, 2.1, 2.05, 1.95]
LAT_B = [2.1, 2.0, 2.2, 1.9, 2.15, 2.0]


def test_compare_matches_scipy_welch_and_flags_only_strong_differences() -> None:
    a = Side("a", {"ops_s": FAST, "p99_ms": LAT_A})
    b = Side("b", {"ops_s": SLOW, "p99_ms": LAT_B, "mean_ms": [1.0, 2.0]})
    res = compare(a, b)
    assert [r.response for r in res.rows] == ["ops_s", "p99_ms"]  # mean_ms only in B
    ops, p99 = res.rows
    ref = st.ttest_ind(FAST, SLOW, equal_var=False)
    assert ops.welch_t == pytest.approx(ref.statistic) and ops.p == pytest.approx(ref.pvalue)
    assert ops.p_holm == pytest.approx(min(1.0, 2 * ops.p))  # smaller of two: x 2
    assert ops.flagged and not p99.flagged
    assert ops.change_pct == pytest.approx(100 * (901.0 - 1000.0) / 1000.0)  # medians
    assert ops.hedges_g > 5  # means ~100 apart, sd ~7
    assert (ops.n_a, ops.n_b) == (6, 6)


def test_a_difference_at_p_002_is_not_flagged() -> None:
    # Welch p between 0.01 and 0.05: "significant" at 5 % but not flagged at 1 %
    a = Side("a", {"ops_s": [10.0, 11.0, 12.0, 11.0, 10.5, 11.5]})
    b = Side("b", {"ops_s": [11.5, 12.0, 12.5, 11.8, 12.2, 11.0]})
    row = compare(a, b).rows[0]
    assert 0.01 < row.p_holm < 0.05 and not row.flagged


def test_json_has_no_nan() -> None:
    res = compare(Side("a", {"ops_s": [1.0]}), Side("b", {"ops_s": [2.0]}))
    data = res.to_json()
    assert data["rows"][0]["p"] is None and data["rows"][0]["flagged"] is False


def make_results(directory: Path, cells: dict[str, list[float]]) -> None:
    """A results directory with one done trial per value (ops_s) per cell, plus a warm-up
    and a failed trial that must not count."""
    store = Store(directory)
    cid, _ = store.open_campaign(name="c", digest="d", spec_yaml="name: c\n",
                                 response="ops_s", factors=[])
    plan, seq = [], 0
    for ci, (key, vals) in enumerate(cells.items()):
        for t in range(len(vals) + 2):
            seq += 1
            plan.append((seq, ci, key, {}, t, t == 0, "none"))
    status = store.ensure_plan(cid, plan)
    seq = 0
    for key, vals in cells.items():
        for t in range(len(vals) + 2):
            seq += 1
            tid = status[seq][0]
            if t == len(vals) + 1:
                store.mark_ended(tid, "failed", "boom")
                continue
            ops_s = 1.0 if t == 0 else vals[t - 1]
            store.commit_trial(tid, summary=summary(ops_s), intervals=[],
                               metrics=TrialMetrics(), command=["casslab-load"])
        del key
    store.close()


def summary(ops_s: float) -> dict[str, object]:
    p = {"mean_us": 900.0, "p50_us": 800, "p95_us": 1500, "p99_us": 2500, "p999_us": 4000,
         "max_us": 9000, "min_us": 100}
    return {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": 10.0,
            "ops": int(ops_s * 10), "ops_s": ops_s, "errors": 0,
            "by_op": {"read": {"ops": int(ops_s * 10), "ops_s": ops_s, "errors": 0,
                               "latency": p, "service": p}}}


def test_load_side_keeps_done_trials_of_the_asked_cell(tmp_path: Path) -> None:
    make_results(tmp_path, {"nodes=1": FAST, "nodes=3": SLOW})
    whole = load_side(tmp_path)
    assert len(whole.values["ops_s"]) == 12
    one = load_side(tmp_path, "nodes=3")
    assert one.values["ops_s"] == pytest.approx(SLOW)
    assert one.label.endswith("[nodes=3]")
    with pytest.raises(UsageError, match=r"cell 'nodes=2' is not in .*nodes=1, nodes=3"):
        load_side(tmp_path, "nodes=2")
    with pytest.raises(StoreError, match="no results database"):
        load_side(tmp_path / "missing")
