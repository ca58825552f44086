"""`design.labs: keep`: the spec field, the plan (a return to a lab is a resume, its
lab warm-ups come once) and the names of the kept labs. The runner's side (labs paused
and resumed for real) is tests/integration/test_experiment_keep_labs_lab.py."""

from __future__ import annotations

import pytest

from casslab.experiment.design import holds_schema, plan, summarize_plan
from casslab.experiment.runner import kept_lab_names
from casslab.experiment.spec import SpecError, parse_spec

SPEC = """\
workload: ycsb-a
factors:
  - {{name: profile, levels: [t2.micro, t2.small, t2.medium]}}
  - {{name: workload, levels: [ycsb-a, ycsb-c]}}
design: {{order: interleaved, trials: 3, warmup_trials: 1, lab_warmup_trials: 2, seed: 4{extra}}}
"""


def _plan(extra: str = ", labs: keep") -> list:
    return plan(parse_spec(SPEC.format(extra=extra)))


def test_labs_defaults_to_rebuild_and_refuses_other_values() -> None:
    assert not parse_spec(SPEC.format(extra="")).design.keep_labs
    with pytest.raises(SpecError, match=r"design\.labs: 'kept' is not a valid design\.labs"):
        parse_spec(SPEC.format(extra=", labs: kept"))


def test_keep_contradicts_a_rebuild_before_every_trial() -> None:
    with pytest.raises(SpecError, match="keep contradicts `reset: rebuild`"):
        parse_spec(SPEC.format(extra=", labs: keep, reset: rebuild"))


def test_a_return_to_a_built_lab_is_a_resume_and_its_lab_warmups_come_once() -> None:
    rebuild, keep = _plan(""), _plan()
    # the same trials in the same order, but the lab warm-ups only after a first build
    first_builds = [t for t in keep if t.reset == "rebuild" and not t.resume]
    assert len(first_builds) == 3
    lab_warm = sum(t.warmup for t in rebuild) - sum(t.warmup for t in keep)
    later_builds = sum(t.reset == "rebuild" for t in rebuild) - 3
    assert later_builds > 0 and lab_warm == 2 * later_builds
    resumes = [t for t in keep if t.resume]
    assert len(resumes) == later_builds
    assert all(t.reset == "rebuild" and "resumed" in t.why for t in resumes)
    assert [(t.cell.index, t.warmup) for t in keep if not t.warmup] == \
        [(t.cell.index, t.warmup) for t in rebuild if not t.warmup]


def test_the_plan_summary_counts_resumes_apart_from_rebuilds() -> None:
    s = summarize_plan(_plan())
    assert s.resets["rebuild"] == 3 and s.resets["resume"] > 0
    assert (s.round_resets or {}).get("rebuild", 0) == 0 and (s.round_resets or {})["resume"]
    assert "resume" in s.line()


def test_kept_labs_are_named_in_the_order_the_plan_builds_them() -> None:
    spec = parse_spec(SPEC.format(extra=", labs: keep"))
    trials = plan(spec)
    names = kept_lab_names("exp-0123456789abcdef", trials, spec)
    assert sorted(names.values()) == ["exp-0123456789abcd-2", "exp-0123456789abcd-3",
                                      "exp-0123456789abcdef"]
    first = next(t for t in trials if t.reset == "rebuild")
    assert names[next(iter(names))] == "exp-0123456789abcdef"
    assert str(first.cell.params["profile"]) in next(iter(names))
    assert all(len(n) <= 20 for n in names.values())


def test_keep_data_contradicts_a_rebuild_before_every_trial_too() -> None:
    with pytest.raises(SpecError, match="keep-data contradicts `reset: rebuild`"):
        parse_spec(SPEC.format(extra=", labs: keep-data, reset: rebuild"))


def test_keep_data_keeps_a_resumed_labs_data_only_for_the_schema_it_was_paused_with() -> None:
    spec = parse_spec(SPEC.format(extra=", labs: keep-data"))
    assert spec.design.keep_labs and spec.design.keep_data
    trials = plan(spec)
    last: dict[str, str] = {}  # lab (profile) -> the workload it last ran
    kept = recreated = 0
    for t in trials:
        lab, wl = t.cell.params["profile"], t.cell.params["workload"]
        if t.resume:
            assert t.keep_data == (last.get(lab) == wl), t
            kept += t.keep_data
            recreated += not t.keep_data
            assert ("with its data" in t.why) == t.keep_data
        last[lab] = wl
    # the rounds come back to a lab with the block it left on (ABBA), so every resume here
    # keeps its data; the rule above is what decides it
    assert kept == sum(t.resume for t in trials) > 0
    s = summarize_plan(trials)
    assert s.resets["resume with data"] == kept and s.resets.get("resume", 0) == recreated
    # labs: keep never keeps data
    assert not any(t.keep_data for t in _plan())


def test_keep_data_still_wipes_the_data_where_design_reset_asks() -> None:
    trials = plan(parse_spec(SPEC.format(extra=", labs: keep-data, reset: truncate")))
    assert any(t.resume for t in trials) and not any(t.keep_data for t in trials)


def test_a_kept_lab_holds_a_cells_data_when_its_schema_levels_match() -> None:
    spec = parse_spec(SPEC.format(extra=", labs: keep-data"))
    a_micro = {"profile": "t2.micro", "workload": "ycsb-a"}
    assert holds_schema(a_micro, {"profile": "t2.micro", "workload": "ycsb-a"}, spec.factors)
    assert not holds_schema(a_micro, {"profile": "t2.micro", "workload": "ycsb-c"},
                            spec.factors)
    assert not holds_schema(None, a_micro, spec.factors)  # unknown: recreate
