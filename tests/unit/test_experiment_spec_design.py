"""design.order / trials {min, max} / until / budget / noise_cv / guard and
workload.warmup: good specs parse into the design; each bad one fails with one line
naming the field."""

from __future__ import annotations

import pytest

from casslab.experiment.spec import Guard, SpecError, estimate_size, json_schema, parse_spec

FINDING = """\
reference:
  findings:
    - {claim: delay is slower, response: runtime_s, factor: network.delay_ms, expect: higher}
"""
BASE = ("workload: ycsb-a\nfactors:\n  - {name: network.delay_ms, levels: [0, 2]}\n"
        + FINDING)


def test_sequential_interleaved_design_parses() -> None:
    s = parse_spec(BASE + "design: {order: interleaved, trials: {min: 3, max: 12}, "
                   "until: verdicts, budget: 5m, noise_cv: 4%, guard: "
                   "{max_outside_cpu_pct: 15}}\n")
    d = s.design
    assert (d.order, d.trials, d.trials_max, d.until) == ("interleaved", 3, 12, "verdicts")
    assert d.budget_s == 300.0 and d.noise_cv == pytest.approx(0.04)
    assert d.guard == Guard(15.0, 2)
    assert not d.randomize and d.interleaved


def test_size_counts_the_maximum_rounds() -> None:
    s = parse_spec(BASE + "design: {order: interleaved, trials: {min: 3, max: 12}, "
                   "until: verdicts}\n")
    assert estimate_size(s).trials == 2 * 12


def test_randomize_is_order_random_and_defaults_stay() -> None:
    assert parse_spec("workload: ycsb-a\ndesign: {randomize: true}\n").design.order == "random"
    d = parse_spec("workload: ycsb-a\n").design
    assert (d.order, d.trials, d.trials_max, d.until, d.guard) == ("blocked", 3, 3, "trials",
                                                                   None)
    assert parse_spec("workload: ycsb-a\ndesign: {order: random}\n").design.randomize


def test_until_steady_warmup_with_default_and_given_maximum() -> None:
    s = parse_spec("workload: {name: ycsb-a, warmup: until-steady}\n"
                   "stop: {duration_s: 20, timeout_s: 60}\n")
    assert s.workload.warmup is not None and s.workload.warmup.max_s == 10.0
    s = parse_spec("workload: {name: ycsb-a, warmup: {until: until-steady, max_s: 4}}\n"
                   "stop: {duration_s: 20, timeout_s: 60}\n")
    assert s.workload.warmup is not None and s.workload.warmup.max_s == 4.0


@pytest.mark.parametrize(("text", "line", "parts"), [
    ("workload: ycsb-a\ndesign: {order: shuffled}\n", 2,
     ["design.order", "'shuffled'", "random, blocked, interleaved"]),
    ("workload: ycsb-a\ndesign: {order: blocked, randomize: true}\n", 2,
     ["design.randomize", "contradicts `order: blocked`"]),
    ("workload: ycsb-a\ndesign: {trials: {min: 3, max: 9}}\n", 2,
     ["design.trials", "needs `design.until: verdicts`"]),
    (BASE + "design: {order: interleaved, until: verdicts, trials: 5}\n", 7,
     ["design.trials", "give a range"]),
    (BASE + "design: {order: interleaved, until: verdicts, trials: {min: 5, max: 3}}\n", 7,
     ["design.trials.max", ">= 5"]),
    (BASE + "design: {order: interleaved, until: verdicts, trials: {min: 1, max: 3}}\n", 7,
     ["design.trials.min", ">= 2"]),
    (BASE + "design: {order: interleaved, until: verdicts, trials: {max: 3}}\n", 7,
     ["design.trials.min", "required"]),
    (BASE + "design: {until: verdicts, trials: {min: 2, max: 3}}\n", 7,
     ["design.until", "needs `order: interleaved`"]),
    ("workload: ycsb-a\ndesign: {order: interleaved, until: verdicts, "
     "trials: {min: 2, max: 3}}\n", 2, ["design.until", "needs reference.findings"]),
    ("workload: ycsb-a\ndesign: {until: forever}\n", 2, ["design.until", "trials, verdicts"]),
    ("workload: ycsb-a\ndesign: {budget: 5m}\n", 2, ["design.budget", "until: verdicts"]),
    (BASE + "design: {order: interleaved, until: verdicts, trials: {min: 2, max: 3}, "
     "budget: soon}\n", 7, ["design.budget", "'soon' is not a wall time"]),
    ("workload: ycsb-a\ndesign: {noise_cv: 5}\n", 2, ["design.noise_cv", "fraction > 0"]),
    ("workload: ycsb-a\ndesign: {noise_cv: 0%}\n", 2, ["design.noise_cv", "5%"]),
    ("workload: ycsb-a\ndesign: {guard: {reruns: 1}}\n", 2,
     ["design.guard.max_outside_cpu_pct", "required"]),
    ("workload: ycsb-a\ndesign: {guard: {max_outside_cpu_pct: 150}}\n", 2,
     ["design.guard.max_outside_cpu_pct", "<= 100"]),
    ("workload: ycsb-a\ndesign: {guard: {max_outside_cpu_pct: 10, reruns: 99}}\n", 2,
     ["design.guard.reruns", "<= 10"]),
    ("workload: {name: ycsb-a, warmup: forever}\n", 1,
     ["workload.warmup", "'forever'", "until-steady"]),
    ("workload: {name: ycsb-a, warmup: {until: until-steady, max_s: 30}}\n"
     "stop: {duration_s: 20, timeout_s: 60}\n", 1,
     ["workload.warmup.max_s", "shorter than stop.duration_s 20"]),
])
def test_bad_design_fields_name_the_field(text: str, line: int, parts: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(text, source="s.yaml")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"s.yaml:{line}: "), msg
    for part in parts:
        assert part in msg, (part, msg)


def test_json_schema_knows_the_new_fields() -> None:
    design = json_schema()["properties"]["design"]["properties"]
    assert design["order"]["enum"] == ["random", "blocked", "interleaved"]
    assert set(design) >= {"until", "budget", "noise_cv", "guard"}
    assert "min" in design["trials"]["oneOf"][1]["properties"]


def test_copy_factor_makes_identical_cells_that_change_nothing() -> None:
    from casslab.experiment.design import plan
    from casslab.experiment.factors.cell import load_options

    s = parse_spec("workload: ycsb-c\nfactors:\n  - {name: copy, levels: [A, B]}\n"
                   "design: {order: interleaved, trials: 3}\n")
    trials = plan(s)
    assert s.factors[0].kind == "copy" and len(trials) == 6
    assert sum(t.reset != "none" for t in trials) == 1  # one lab, never reset for a copy
    assert load_options("ycsb-c", 10, {}, {"copy": "A"}) == load_options("ycsb-c", 10, {}, {})
    with pytest.raises(SpecError, match="copy's level is a name"):
        parse_spec("workload: ycsb-c\nfactors:\n  - {name: copy, levels: [[1], B]}\n")
