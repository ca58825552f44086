"""`reference` in the spec: a study's numbers (converted to the response's unit) and
findings read; bad entries refused in one line with file:line, the field and what is
valid; a scaled spec leaves out the entries about levels it dropped."""

from __future__ import annotations

import math

import pytest

from casslab.experiment.spec import SpecError, parse_spec

HEAD = """workload: {name: ycsb-a}
factors:
  - {name: nodes, levels: [1, 3]}
  - {name: network, levels: [ethernet-100, wifi]}
  - {name: workload, levels: [ycsb-a, ycsb-c, ycsb-e]}
analysis: {responses: [runtime_s, host_cpu_pct]}
"""
GOOD = """reference:
  study: Richardson 2017
  alpha: 0.01
  values:
    - {response: runtime_s, at: {nodes: 3, workload: ycsb-a}, value: 65650, unit: ms,
       source: "Table 3, p. 26", note: 10000 operations}
    - {response: host_cpu_pct, at: {nodes: 1}, value: 91.65, unit: "%", source: Fig. 7}
  findings:
    - {claim: Wi-Fi is slower, factor: network, expect: higher, where: {nodes: 3},
       source: Figs 19-22}
    - {response: runtime_s, factor: workload, from: ycsb-a, to: ycsb-e, expect: lower,
       where: {network: [ethernet-100, wifi]}, test: mann-whitney}
"""


def test_values_and_findings_are_read_and_converted_to_the_responses_unit() -> None:
    ref = parse_spec(HEAD + GOOD, source="s.yaml").reference
    assert ref.study == "Richardson 2017" and ref.alpha == 0.01 and ref.absent == ()
    rt, cpu = ref.values
    assert rt.at == {"nodes": 3, "workload": "ycsb-a"}
    assert rt.value == pytest.approx(65.65) and (rt.paper_value, rt.unit) == (65650, "ms")
    assert rt.source == "Table 3, p. 26" and rt.note == "10000 operations"
    assert cpu.value == 91.65
    wifi, scans = ref.findings
    # two levels: from/to default to the first and the last; response to the first
    assert (wifi.factor, wifi.low, wifi.high, wifi.expect) == ("network", "ethernet-100",
                                                               "wifi", "higher")
    assert wifi.response == "runtime_s" and wifi.where == {"nodes": (3,)}
    assert wifi.claim == "Wi-Fi is slower" and wifi.test == "welch"
    assert scans.where == {"network": ("ethernet-100", "wifi")}
    assert scans.test == "mann-whitney" and scans.claim.startswith("runtime_s lower at")


def test_an_expected_ratio_is_read() -> None:
    ref = parse_spec(HEAD + """reference:
  findings:
    - {factor: nodes, expect: ratio, ratio: 1.12, where: {workload: ycsb-a}}
""").reference
    (f,) = ref.findings
    assert (f.expect, f.ratio, f.low, f.high) == ("ratio", 1.12, 1, 3)
    assert f.claim == "runtime_s 1.12 times as high at nodes=3 than at 1"


def test_an_expected_slope_is_read_with_its_tolerance() -> None:
    ref = parse_spec(HEAD + """reference:
  findings:
    - {factor: nodes, expect: slope, slope: 0.5, where: {workload: ycsb-a}}
    - {factor: nodes, expect: slope, slope: -2, tolerance: 0.3, claim: faster}
""").reference
    first, second = ref.findings
    assert (first.expect, first.slope, first.tolerance, first.low, first.high) == (
        "slope", 0.5, 0.05, 1, 3)
    assert first.claim == "runtime_s changes by 0.5 per unit of nodes"
    assert (second.slope, second.tolerance, second.claim) == (-2.0, 0.3, "faster")


def test_a_ratio_is_read_with_its_relative_tolerance() -> None:
    ref = parse_spec(HEAD + """reference:
  findings:
    - {factor: nodes, from: 1, to: 3, expect: ratio, ratio: 1.12, tolerance: 0.05}
    - {factor: nodes, from: 1, to: 3, expect: ratio, ratio: 1.12}
""").reference
    given, default = ref.findings
    assert given.tolerance == 0.05 and math.isnan(default.tolerance)


def test_a_spec_without_reference_has_an_empty_one() -> None:
    assert parse_spec(HEAD).reference.empty


@pytest.mark.parametrize(("block", "line", "message"), [
    ("  values:\n    - {at: {nodes: 4}, value: 1, unit: s, source: T1}\n", 9,
     "reference.values[0].at.nodes: 4 is not a level of factor nodes (valid: 1, 3)"),
    ("  values:\n    - {at: {ram: 1GB}, value: 1, unit: s, source: T1}\n", 9,
     "reference.values[0].at.ram: 'ram' is not a valid factor"),
    ("  values:\n    - {response: ops_s, value: 1, unit: s, source: T1}\n", 9,
     "reference.values[0].response: 'ops_s' is not a valid response (one of "
     "analysis.responses) (valid: runtime_s, host_cpu_pct)"),
    ("  values:\n    - {value: 1, unit: ops/s, source: T1}\n", 9,
     "reference.values[0].unit: 'ops/s' does not convert to runtime_s's unit 's' (valid: "
     "s, ms, us, min)"),
    ("  values:\n    - {value: 1, unit: s}\n", 9,
     "reference.values[0].source: is required"),
    ("  findings:\n    - {factor: workload, expect: higher}\n", 9,
     "reference.findings[0]: workload has 3 levels: give `from` and `to` (valid: ycsb-a, "
     "ycsb-c, ycsb-e)"),
    ("  findings:\n    - {factor: network, expect: faster}\n", 9,
     "reference.findings[0].expect: 'faster' is not a valid expectation (valid: higher, "
     "lower, no difference, ratio, slope, increasing, decreasing, alternation)"),
    ("  findings:\n    - {factor: network, expect: slope, slope: 1}\n", 9,
     "reference.findings[0].factor: network has levels that are not numbers (valid for a "
     "slope: nodes)"),
    ("  findings:\n    - {factor: nodes, expect: slope}\n", 9,
     "reference.findings[0].slope: is required with `expect: slope`"),
    ("  findings:\n    - {factor: nodes, expect: slope, slope: 0}\n", 9,
     "reference.findings[0].tolerance: is required when the slope is 0"),
    ("  findings:\n    - {factor: nodes, expect: slope, slope: 1, test: welch}\n", 9,
     "reference.findings[0].test: a slope is fitted by least squares"),
    ("  findings:\n    - {factor: nodes, expect: slope, slope: 1, from: 3, to: 1}\n", 9,
     "reference.findings[0].to: '1' is not above `from` '3'"),
    ("  findings:\n    - {factor: nodes, expect: higher, slope: 1}\n", 9,
     "reference.findings[0].slope: is only for `expect: slope`"),
    ("  findings:\n    - {factor: network, expect: higher, where: {network: wifi}}\n", 9,
     "reference.findings[0].where.network: network is the finding's factor"),
    ("  findings:\n    - {factor: network, to: lan, expect: higher}\n", 9,
     "reference.findings[0].to: 'lan' is not a level of factor network (valid: "
     "ethernet-100, wifi)"),
    ("  findings:\n    - {factor: network, expect: ratio}\n", 9,
     "reference.findings[0].ratio: is required with `expect: ratio`"),
    ("  findings:\n    - {factor: network, expect: higher, ratio: 2}\n", 9,
     "reference.findings[0].ratio: is only for `expect: ratio`"),
    ("  findings:\n    - {factor: network, expect: no difference, tolerance: 1.5}\n", 9,
     "reference.findings[0].tolerance: 1.5 is"),
    ("  findings:\n    - {factor: network, expect: ratio, ratio: 2, tolerance: 1.5}\n", 9,
     "reference.findings[0].tolerance: 1.5 is"),
    ("  findings:\n    - {factor: network, expect: higher, bogus: 1}\n", 9,
     "reference.findings[0].bogus: unknown key"),
])
def test_bad_entries_name_file_line_field_and_what_is_valid(block: str, line: int,
                                                            message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_spec(HEAD + "reference:\n" + block, source="s.yaml")
    text = str(exc.value)
    assert text.startswith(f"s.yaml:{line}: ") and message in text, text
    assert "\n" not in text


def test_a_scaled_spec_leaves_out_entries_about_levels_it_dropped() -> None:
    ref = parse_spec(HEAD + GOOD, source="s.yaml", scale="smoke").reference
    # smoke keeps two levels of nodes, one of network and workload (ycsb-a)
    assert len(ref.values) == 2 and ref.findings == ()
    assert ref.absent == ("reference.findings[0] (network has one level)",
                          "reference.findings[1] (workload has one level)")
    one = HEAD + GOOD.replace("workload: ycsb-a}", "workload: ycsb-c}")
    ref = parse_spec(one, source="s.yaml", scale="smoke").reference
    assert ref.absent[0] == "reference.values[0] (workload=ycsb-c)"
    with pytest.raises(SpecError, match="ycsb-f' is not a level"):  # as written: strict
        parse_spec(HEAD + GOOD.replace("workload: ycsb-a}", "workload: ycsb-f}"))


SIX = """workload: {name: ycsb-a}
factors:
  - {name: nodes, levels: [1, 2, 3, 4, 5, 6]}
  - {name: network, levels: [ethernet-100, wifi]}
  - {name: workload, levels: [ycsb-a, ycsb-c, ycsb-e, ycsb-i]}
analysis: {response: runtime_s}
reference:
  findings:
"""


def test_patterns_over_three_or_more_levels_are_read() -> None:
    ref = parse_spec(SIX + """    - {factor: nodes, expect: increasing, growth: 0.08,
       tolerance: 0.5, where: {workload: ycsb-a}}
    - {factor: nodes, expect: alternation, higher_at: even, from: 1, to: 5,
       where: {network: wifi, workload: [ycsb-a, ycsb-c, ycsb-e]}, source: section 4.2}
    - {factor: nodes, expect: decreasing}
""").reference
    up, zig, down = ref.findings
    assert (up.expect, up.growth, up.tolerance, up.low, up.high) == (
        "increasing", 0.08, 0.5, 1, 6)
    assert up.pattern and up.claim == "runtime_s increasing with nodes by +8 % per unit"
    assert (zig.higher_at, zig.low, zig.high, zig.test) == ("even", 1, 5, "ols")
    assert zig.where == {"network": ("wifi",), "workload": ("ycsb-a", "ycsb-c", "ycsb-e")}
    assert math.isnan(down.growth) and down.claim == "runtime_s decreasing with nodes"


@pytest.mark.parametrize(("block", "message"), [
    ("{factor: network, expect: increasing}",
     "reference.findings[0].factor: network has levels that are not numbers (valid for "
     "`expect: increasing`: nodes)"),
    ("{factor: nodes, expect: increasing, from: 2, to: 3}",
     "reference.findings[0].factor: nodes has 2 levels from 2 to 3: `expect: increasing` "
     "is a pattern over >= 3"),
    ("{factor: nodes, expect: alternation}",
     "reference.findings[0].higher_at: None is not a valid parity"),
    ("{factor: nodes, expect: alternation, higher_at: evens}",
     "'evens' is not a valid parity (the levels at which the response is higher) (did you "
     "mean even?) (valid: even, odd)"),
    ("{factor: nodes, expect: increasing, growth: -0.1}",
     "reference.findings[0].growth: -0.1 does not say increasing (valid: > 0"),
    ("{factor: nodes, expect: decreasing, growth: -1}",
     "reference.findings[0].growth: -1 is"),
    ("{factor: nodes, expect: increasing, test: welch}",
     "reference.findings[0].test: `expect: increasing` is fitted by least squares on logs"),
    ("{factor: nodes, expect: alternation, higher_at: odd, tolerance: 0.1}",
     "reference.findings[0].tolerance: is for a size"),
    ("{factor: nodes, expect: increasing, higher_at: odd}",
     "reference.findings[0].higher_at: is only for `expect: alternation`"),
    ("{factor: nodes, expect: higher, from: 1, to: 2, growth: 0.1}",
     "reference.findings[0].growth: is only for `expect: increasing` or `decreasing`"),
    ("{factor: nodes, expect: increasing, from: 4, to: 2}",
     "reference.findings[0].to: '2' is not above `from` '4'"),
])
def test_bad_pattern_findings_are_refused_in_one_line(block: str, message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_spec(SIX + f"    - {block}\n", source="s.yaml")
    text = str(exc.value)
    assert text.startswith("s.yaml:9: ") and message in text, text
    assert "\n" not in text


def test_an_alternation_needs_whole_levels_of_both_parities() -> None:
    spec = SIX.replace("[1, 2, 3, 4, 5, 6]", "[1, 3, 5]")
    with pytest.raises(SpecError, match="not whole numbers of both parities"):
        parse_spec(spec + "    - {factor: nodes, expect: alternation, higher_at: even}\n")


def test_a_scaled_spec_with_fewer_levels_leaves_a_pattern_out() -> None:
    spec = SIX + "    - {factor: nodes, expect: increasing}\n"
    ref = parse_spec(spec, source="s.yaml", scale="smoke").reference
    assert ref.findings == ()
    assert ref.absent == ("reference.findings[0] (nodes has 2 levels from 1 to 2)",)


def test_a_stored_spec_reads_the_reference_of_the_scale_it_ran_at() -> None:
    """The campaign stores the spec's text and its digest at the scale it ran; the
    report's reader recovers the scale from the digest, so a paper size's own
    `reference.findings` (seed 000's patterns over 1..6 nodes) are the ones judged."""
    from pathlib import Path

    from casslab.experiment.figures import DesignFactor
    from casslab.experiment.reference import read_reference
    from casslab.experiment.scales import spec_digest
    from casslab.experiment.spec import load_spec

    path = Path(__file__).resolve().parents[2] / "examples" / "000-rpi-iot" / "links.yaml"
    paper = load_spec(path, scale="paper")
    assert spec_digest(paper.text, "paper") == paper.digest
    assert spec_digest(paper.text, None) == load_spec(path).digest
    factors = [DesignFactor(f.name, tuple(f.levels)) for f in paper.factors]
    stored = read_reference(paper.text, "stored", factors, ["runtime_s"], paper.digest)
    assert len(stored.findings) == 5 and stored.findings[4].expect == "alternation"
    as_written = read_reference(paper.text, "stored", factors, ["runtime_s"])
    assert len(as_written.findings) == 2  # the 1 -> 2 step is nodes.yaml's here
