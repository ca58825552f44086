"""Named sizes of a spec: overrides by dotted path (factors by name), the built-in smoke
size, and errors that point at the override's line."""

from __future__ import annotations

import pytest

from casslab.experiment.design import plan
from casslab.experiment.spec import SpecError, parse_spec

SPEC = """\
name: sizes
workload: {name: ycsb-a, records: 5000}
factors:
  - {name: nodes, levels: [1, 3]}
  - {name: workload, levels: [ycsb-a, ycsb-c, ycsb-e]}
  - {name: cl, levels: [ONE, QUORUM]}
design: {trials: 5, warmup_trials: 2}
stop: {ops: 1000}
scales:
  paper:
    design.trials: 21
    design.warmup_trials: 9
    stop.ops: 10000
    factors.nodes.levels: [1, 2, 3, 4, 5, 6]
"""


def test_the_spec_as_written_ignores_its_scales() -> None:
    s = parse_spec(SPEC)
    assert (s.design.trials, s.stop.ops, s.factor("nodes").levels) == (5, 1000, (1, 3))
    assert s.scale is None


def test_a_named_scale_overrides_only_the_paths_it_names() -> None:
    s = parse_spec(SPEC, scale="paper")
    assert (s.design.trials, s.design.warmup_trials, s.stop.ops) == (21, 9, 10000)
    assert s.factor("nodes").levels == (1, 2, 3, 4, 5, 6)
    assert s.factor("workload").levels == ("ycsb-a", "ycsb-c", "ycsb-e")
    assert s.workload.records == 5000


def test_each_scale_is_its_own_campaign() -> None:
    digests = {parse_spec(SPEC, scale=x).digest for x in (None, "paper", "smoke")}
    assert len(digests) == 3


def test_smoke_runs_a_few_cells_of_one_short_trial() -> None:
    s = parse_spec(SPEC, scale="smoke")
    trials = plan(s)
    assert len({t.cell.index for t in trials}) == 2
    assert len(trials) == 2 and not any(t.warmup for t in trials)
    assert s.stop.ops == 200 and s.workload.records == 1000
    assert s.factor("workload").levels == ("ycsb-a",) and s.factor("cl").levels == ("ONE",)


def test_smoke_gives_a_stop_rule_to_a_spec_without_one() -> None:
    s = parse_spec("workload: {name: ycsb-a}\n", scale="smoke")
    assert s.stop.ops == 200


def test_smoke_of_a_sequential_design_runs_one_round_without_its_stopping_rule() -> None:
    """`until: verdicts`, its budget and the bound `detect` asks for all go: one trial a
    cell decides nothing, and `detect` without `until` would be refused."""
    s = parse_spec(SPEC.replace(
        "design: {trials: 5, warmup_trials: 2}",
        "design: {trials: {min: 3, max: 10}, until: verdicts, budget: 30m, detect: 20%}"),
        scale="smoke")
    assert s.design.trials == 1
    assert (s.design.until, s.design.budget_s, s.design.detect) == ("trials", None, None)


def test_an_unknown_scale_names_the_valid_ones() -> None:
    with pytest.raises(SpecError, match=r"spec:10: scales: no scale 'huge' in this spec "
                       r"\(valid: paper, smoke\)"):
        parse_spec(SPEC, scale="huge")


def test_a_bad_override_value_points_at_the_override_line() -> None:
    bad = SPEC.replace("design.trials: 21", "design.trials: many")
    with pytest.raises(SpecError, match=r"spec:11: design.trials: 'many' is not an integer"):
        parse_spec(bad, scale="paper")


def test_an_override_of_an_unknown_factor_names_the_factors() -> None:
    bad = SPEC.replace("factors.nodes.levels", "factors.racks.levels")
    with pytest.raises(SpecError, match=r"spec:14: scales.paper.'factors.racks.levels': "
                       r"factors has no item named 'racks' \(valid: nodes, workload, cl\)"):
        parse_spec(bad, scale="paper")


def test_a_bad_scale_name_is_refused_even_when_not_chosen() -> None:
    bad = SPEC.replace("  paper:", "  Paper Size:")
    with pytest.raises(SpecError, match="a scale name is lower-case"):
        parse_spec(bad)


def test_a_factor_whose_name_has_dots_is_addressed_by_its_whole_name() -> None:
    text = """\
name: sweep
lab: {nodes: 1, profile: vm-1g}
workload: {name: ycsb-e}
factors:
  - {name: profile.memory_mib, levels: [1024, 2048]}
stop: {ops: 1000}
scales:
  paper:
    factors.profile.memory_mib.levels: [1024, 1536, 2048]
"""
    assert parse_spec(text, scale="paper").factor("profile.memory_mib").levels == (
        1024, 1536, 2048)


ROUNDS_SPEC = """\
workload: {name: ycsb-a}
factors:
  - {name: threads, levels: [1, 2]}
design: {trials: {min: 3, max: 10}, until: verdicts, order: interleaved}
scales:
  paper: {design: {trials: 1, randomize: true}}
  paper-rounds: {design.trials: {min: 3, max: 8}}
"""


def test_a_stored_spec_is_read_at_the_scale_its_digest_names() -> None:
    from casslab.experiment.scales import spec_digest, stored_root
    from casslab.report.html import Until, until_verdicts

    assert until_verdicts(ROUNDS_SPEC, spec_digest(ROUNDS_SPEC, None)) == Until(True, 10)
    assert until_verdicts(ROUNDS_SPEC, spec_digest(ROUNDS_SPEC, "paper")) == Until()
    assert until_verdicts(ROUNDS_SPEC, spec_digest(ROUNDS_SPEC, "paper-rounds")) == \
        Until(True, 8)
    assert stored_root(ROUNDS_SPEC, "")["design"]["trials"] == {"min": 3, "max": 10}
    assert stored_root("[not, a, mapping", "") == {}
