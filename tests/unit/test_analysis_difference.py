"""`scale: difference`: a finding on a response near 0 read as to - from in the
response's unit (pooled Welch or Hodges-Lehmann, paired and sequential per-round
differences), its declared `detect`, and the spec fields that ask for it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from casslab.analysis.campaign import analyze
from casslab.analysis.effects import DIFFERENCE, PAIRED, RANK, SEQUENTIAL
from casslab.analysis.findings import (
    DECLARED,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    MEASURED,
    UNDETECTABLE,
    judge,
)
from casslab.experiment.reference import Finding, Reference
from casslab.experiment.spec import SpecError, parse_spec
from casslab.store.records import TrialRow

FACTORS = [{"name": "runtime", "levels": ["process", "lxc"]}]


def rows(values: dict[str, list[float]]) -> list[TrialRow]:
    """Trials whose `mean_ms` is the response (a near-0 quantity here)."""
    out: list[TrialRow] = []
    for ci, (rt, vals) in enumerate(values.items()):
        params: dict[str, Any] = {"runtime": rt}
        for v in vals:
            tid = len(out) + 1
            out.append(TrialRow(
                trial_id=tid, seq=tid, trial_no=tid, warmup=False, status="done", error=None,
                started_at=None, ended_at=None, ended_by=None, cell=rt, cell_idx=ci,
                params=params, cell_params=params, runtime_s=1.0, ops=100, ops_s=100.0,
                errors=0, mean_ms=v, p50_ms=1.0, p95_ms=1.0, p99_ms=1.0, p999_ms=1.0,
                max_ms=1.0, pct_source="histogram"))
    return out


def finding(expect: str = "higher", **kw: Any) -> Finding:
    return Finding("claim", "mean_ms", "runtime", "process", "lxc", expect, {}, "welch",
                   scale="difference", **kw)


def _judge(values: dict[str, list[float]], f: Finding, **kw: Any) -> Any:
    rs = rows(values)
    n = len(values["process"])
    rounds = {r.trial_id: (r.trial_id - 1) % n + 1 for r in rs} if kw.pop("paired", False) \
        else None
    (v,) = judge(Reference(findings=(f,)), [analyze(rs, FACTORS, "mean_ms")], rounds=rounds,
                 **kw)
    return v


# Page counts: 0, 1 or 2 pages of 0.267 KiB/s, with zeros on both sides. A ratio is
# undefined (log 0); the difference is not.
PAGES = {"process": [0.0, 0.267, 0.267, 0.0, 0.534, 0.267, 0.0, 0.267],
         "lxc": [0.267, 0.534, 0.267, 0.267, 0.534, 0.534, 0.267, 0.534]}


def test_a_difference_is_read_in_the_responses_unit_where_a_ratio_has_no_interval() -> None:
    v = _judge(PAGES, finding())
    assert v.effect.scale == DIFFERENCE and v.effect.unit == "ms"
    assert v.effect.estimate == pytest.approx(np.mean(PAGES["lxc"]) - np.mean(PAGES["process"]))
    assert v.verdict == HOLDS and v.effect.low > 0
    assert "Welch t on values" in v.test and v.interval().endswith("ms (95 % CI)")
    assert v.medians_text() == "cell medians +0.1335 ms"  # 0.4005 - 0.267
    ratio = judge(Reference(findings=(replace_scale(finding()),)),
                  [analyze(rows(PAGES), FACTORS, "mean_ms")])[0]
    assert not ratio.effect.bounded and ratio.verdict == INCONCLUSIVE  # log(0)


def replace_scale(f: Finding) -> Finding:
    from dataclasses import replace
    return replace(f, scale="ratio")


def test_a_difference_the_other_way_does_not_hold() -> None:
    v = _judge(PAGES, finding("lower"))
    assert v.verdict == FAILS


def test_mann_whitney_gives_the_hodges_lehmann_shift_of_the_values() -> None:
    from dataclasses import replace
    v = _judge(PAGES, replace(finding(), test="mann-whitney"))
    assert v.effect.kind == RANK and v.effect.scale == DIFFERENCE
    assert v.effect.estimate == pytest.approx(0.267)


def test_paired_and_sequential_differences_are_taken_within_rounds() -> None:
    # a drift of +1 per round on both sides, lxc +0.5: the rounds cancel the drift
    rng = np.random.default_rng(5)
    n = 12
    proc = [r + 0.05 * rng.standard_normal() for r in range(n)]
    lxc = [r + 0.5 + 0.05 * rng.standard_normal() for r in range(n)]
    paired = _judge({"process": proc, "lxc": lxc}, finding(), paired=True)
    assert paired.effect.kind == PAIRED and paired.verdict == HOLDS
    assert paired.effect.estimate == pytest.approx(0.5, abs=0.05)
    assert "differences (to - from)" in paired.test
    seq = _judge({"process": proc, "lxc": lxc}, finding(), paired=True, sequential=True,
                 planned_rounds=n)
    assert seq.effect.kind == SEQUENTIAL and seq.effect.anytime and seq.verdict == HOLDS
    assert seq.effect.low < paired.effect.low  # anytime-valid: wider


def test_a_declared_detect_is_the_bound_of_a_difference_and_a_ratio_margin_is_not() -> None:
    same = {"process": [0.267, 0.0, 0.267, 0.267, 0.0, 0.267, 0.267, 0.0] * 3,
            "lxc": [0.0, 0.267, 0.267, 0.0, 0.267, 0.267, 0.0, 0.267] * 3}
    declared = _judge(same, finding(detect=1.0))
    assert declared.verdict == UNDETECTABLE and declared.bound == 1.0
    assert declared.bound_source == DECLARED
    assert declared.label == "smaller than this lab can detect (+-1 ms, declared)"
    # design.detect (a fraction of a ratio) is no bound for a difference: measured
    measured = _judge(same, finding(), paired=True, sequential=True, planned_rounds=24,
                      margin=0.2)
    assert measured.bound_source == MEASURED and measured.bound != pytest.approx(
        math.log1p(0.2))


def test_no_difference_with_a_tolerance_in_the_responses_unit_is_an_equivalence_test() -> None:
    same = {"process": [1.0, 1.1, 0.9, 1.05, 0.95, 1.0], "lxc": [1.02, 1.08, 0.93, 1.0,
                                                                 0.97, 1.01]}
    assert _judge(same, finding("no difference", tolerance=0.2)).verdict == HOLDS
    far = {"process": same["process"], "lxc": [x + 1.0 for x in same["lxc"]]}
    assert _judge(far, finding("no difference", tolerance=0.2)).verdict == FAILS


SPEC = """\
workload: ycsb-a
factors:
  - {{name: runtime, levels: [process, lxc]}}
reference:
  findings:
    - {{response: runtime_s, factor: runtime, {body}}}
"""


def test_the_spec_reads_scale_and_detect() -> None:
    ref = parse_spec(SPEC.format(body="expect: higher, scale: difference, detect: 0.5")
                     ).reference
    (f,) = ref.findings
    assert f.difference and f.detect == 0.5
    (g,) = parse_spec(SPEC.format(body="expect: no difference, scale: difference, "
                                       "tolerance: 3")).reference.findings
    assert g.tolerance == 3.0  # a difference's tolerance is in the unit, not a fraction


@pytest.mark.parametrize(("body", "message"), [
    ("expect: ratio, ratio: 2, scale: difference",
     r"scale: difference is not for `expect: ratio` \(valid with it: higher, lower, no "),
    ("expect: higher, detect: 0.5",
     r"detect: is for `scale: difference`"),
    ("expect: higher, scale: difference, tolerance: 2",
     r"tolerance: is for `expect: no difference` with `scale: difference`"),
    ("expect: higher, scale: log",
     r"scale: 'log' is not a valid scale"),
    ("expect: higher, scale: difference, detect: 0",
     r"detect: 0"),
])
def test_bad_difference_fields_are_one_line_errors(body: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_spec(SPEC.format(body=body))


def test_the_report_and_the_docs_row_print_a_difference_in_the_responses_unit() -> None:
    from casslab.report.html import _effect
    from casslab.report.reproduce import verdict_row

    v = _judge(PAGES, finding())
    cell = _effect(v, {"mean_ms": "ms"})
    assert cell.startswith("+0.2") and " ms (95 % CI)" in cell
    assert "median to - from (mean over matched cells) = 0.134 ms" in cell
    row = verdict_row(v, "c")
    assert "ms (95 % CI); cell medians +0.1335 ms |" in row and "x " not in row.split("|")[7]


def test_the_verdicts_sentence_names_the_unit_of_a_difference_and_its_bound() -> None:
    same = {"process": [0.267, 0.0, 0.267, 0.267, 0.0, 0.267, 0.267, 0.0] * 3,
            "lxc": [0.0, 0.267, 0.267, 0.0, 0.267, 0.267, 0.0, 0.267] * 3}
    v = _judge(same, finding(detect=1.0))
    assert v.verdict == UNDETECTABLE
    assert "] ms lies within +-1 ms, the difference declared before the run" in v.why
