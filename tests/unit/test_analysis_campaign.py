"""analyze() picks the factorial ANOVA only when >= 2 factors vary and every cell is
replicated; otherwise the one-way path with the reason."""

from __future__ import annotations

from typing import Any

from casslab.analysis.campaign import analyze
from casslab.store.records import TrialRow

FACTORS = [{"name": "nodes", "levels": [1, 3]}, {"name": "workload", "levels": ["a", "b"]}]


def rows(per_cell: int, factors: list[dict[str, Any]]) -> list[TrialRow]:
    out: list[TrialRow] = []
    for n in factors[0]["levels"]:
        for w in (factors[1]["levels"] if len(factors) > 1 else [None]):
            params = {"nodes": n} | ({"workload": w} if w else {})
            for t in range(per_cell):
                tid = len(out) + 1
                runtime = 2.0 + n + (w == "b") * n + 0.1 * (t % 3)
                out.append(TrialRow(
                    trial_id=tid, seq=tid, trial_no=t, warmup=False, status="done", error=None,
                    started_at=None, ended_at=None, ended_by=None, cell=str(params),
                    cell_idx=len(out) // per_cell, params=params, cell_params=params,
                    runtime_s=runtime, ops=100, ops_s=100 / runtime, errors=0, mean_ms=1.0,
                    p50_ms=1.0, p95_ms=1.0, p99_ms=1.0, p999_ms=1.0, max_ms=1.0,
                    pct_source="histogram"))
    return out


def test_replicated_two_factor_design_gets_the_interaction() -> None:
    a = analyze(rows(3, FACTORS), FACTORS, "runtime_s", per_second={1: [1.0, 2.0, 3.0, 4.0]})
    assert a.factorial is not None and not a.factorial_note
    inter = next(t for t in a.factorial.terms if t.name == "nodes x workload")
    assert inter.p < 0.001  # workload b adds n: the nodes effect depends on the workload
    assert len(a.cells[0].within) == 1 and a.cells[1].within == []
    assert a.cells[0].stats.ci_coverage == 0.75


def test_unreplicated_or_one_factor_designs_stay_one_way() -> None:
    a = analyze(rows(1, FACTORS), FACTORS, "runtime_s")
    assert a.factorial is None and "no interaction can be estimated" in a.factorial_note
    assert [f.anova.test for f in a.factors] == ["ANOVA", "ANOVA"]
    one = [FACTORS[0]]
    b = analyze(rows(3, one), one, "runtime_s")
    assert b.factorial is None and b.factorial_note.startswith("one varied factor")


def test_a_factor_with_one_level_run_so_far_is_left_out_of_the_factorial() -> None:
    """An interrupted campaign that ran nodes=1 only: the ANOVA must not see nodes."""
    three = [*FACTORS, {"name": "cl", "levels": ["ONE", "ALL"]}]
    ran = [r for r in rows(3, FACTORS) if r.cell_params["nodes"] == 1]
    ran = [TrialRow(**{**r.__dict__, "cell_params": {**r.cell_params, "cl": cl}})
           for r in ran for cl in ("ONE", "ALL")]
    a = analyze(ran, three, "runtime_s")
    assert a.factorial is not None
    assert {t.name for t in a.factorial.terms} == {"workload", "cl", "workload x cl",
                                                   "residual"}
