"""`report.figures` in the spec: declarations read, bad ones refused in one line naming
the field, defaults chosen from the design."""

from __future__ import annotations

import pytest

from casslab.experiment.figures import DesignFactor, default_figures
from casslab.experiment.spec import SpecError, parse_spec

HEAD = """workload: {name: ycsb-a}
factors:
  - {name: nodes, levels: [1, 3, 6]}
  - {name: profile, levels: [rpi3, t2.micro]}
  - {name: workload, levels: [ycsb-a, ycsb-c]}
analysis: {responses: [runtime_s, node_cpu_pct]}
"""


def spec(figures: str) -> str:
    return HEAD + "report:\n  figures:\n" + figures


def test_declared_figures_are_read_in_order() -> None:
    s = parse_spec(spec("""    - {kind: box, x: nodes, colour: profile, facet: workload, id: fig13}
    - {kind: line, x: nodes, colour: profile, response: node_cpu_pct}
    - {kind: bar, x: workload, colour: profile, response: node_cpu_pct}
    - {kind: series, metric: throughput, window: 5, facet: workload}
    - {kind: order}
    - {kind: cdf, facet: nodes}
"""))
    assert [(f.kind, f.id) for f in s.figures] == [
        ("box", "fig13"), ("line", "line-2"), ("bar", "bar-3"), ("series", "series-4"),
        ("order", "order-5"), ("cdf", "cdf-6")]
    box = s.figures[0]
    assert (box.x, box.colour, box.facet, box.response) == ("nodes", "profile", "workload",
                                                            "runtime_s")
    assert s.figures[3].window == 5 and s.figures[3].metric == "throughput"


def test_a_spec_without_report_has_no_declared_figures() -> None:
    assert parse_spec(HEAD).figures == ()


@pytest.mark.parametrize(("figures", "message"), [
    ("    - {kind: pie, x: nodes}\n",
     "spec:9: report.figures[0].kind: 'pie' is not a valid figure kind (valid: box, line, "
     "bar, series, order, cdf)"),
    ("    - {kind: line, x: workload}\n",
     "report.figures[0].x: 'workload' has levels that are not numbers or percentages "
     "(valid for a line: nodes)"),
    ("    - {kind: box, x: ram}\n",
     "report.figures[0].x: 'ram' is not a valid factor (valid: nodes, profile, workload)"),
    ("    - {kind: box, x: nodes, colour: nodes}\n",
     "report.figures[0]: x, colour and facet must name different factors"),
    ("    - {kind: box, colour: nodes}\n", "report.figures[0].x: a box figure needs `x`"),
    ("    - {kind: box, x: nodes, response: p99_ms}\n",
     "report.figures[0].response: 'p99_ms' is not a valid response (one of "
     "analysis.responses) (valid: runtime_s, node_cpu_pct)"),
    ("    - {kind: series, metric: cpu}\n",
     "report.figures[0].metric: 'cpu' is not a valid series metric"),
    ("    - {kind: order, x: nodes}\n",
     "report.figures[0].x: order figures take no 'x' (valid: id, title, response)"),
    ("    - {kind: cdf, id: a}\n    - {kind: order, id: a}\n",
     "report.figures[1].id: 'a' is used by another figure"),
    ("    - {kind: cdf, id: 'Bad Id'}\n", "report.figures[0].id: 'Bad Id' is not a valid id"),
    ("    - {kind: box, x: nodes, colur: profile}\n",
     "report.figures[0].colur: unknown key (did you mean colour?)"),
])
def test_bad_declarations_are_one_line_naming_the_field(figures: str, message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_spec(spec(figures))
    text = str(exc.value)
    assert "\n" not in text
    assert message in text, text


def test_empty_figures_list_is_refused() -> None:
    with pytest.raises(SpecError, match=r"report.figures: must be a list of 1-100 figures"):
        parse_spec(HEAD + "report: {figures: []}\n")


def test_defaults_facet_the_third_factor_and_split_by_numeric_factors() -> None:
    factors = [DesignFactor("nodes", (1, 3)), DesignFactor("ram", ("1GB", "2GB")),
               DesignFactor("workload", ("a", "e")), DesignFactor("rf", (3,))]
    figs = default_figures(factors, ["runtime_s"])
    box = figs[0]
    assert (box.kind, box.x, box.colour, box.facet) == ("box", "nodes", "ram", "workload")
    assert [f.id for f in figs] == ["box-nodes", "box-ram", "box-workload", "line-nodes",
                                    "order", "series-throughput", "series-latency",
                                    "series-cpu", "series-space", "cdf"]
    assert figs[5].window == 1


def test_defaults_add_a_bar_for_a_resource_and_smooth_a_staged_throughput() -> None:
    factors = [DesignFactor("runtime", ("process", "lxc")), DesignFactor("rate", ("66%",
                                                                                  "100%"))]
    figs = default_figures(factors, ["ops_s", "node_cpu_pct"], staged=True)
    ids = [f.id for f in figs]
    assert "bar-runtime-node_cpu_pct" in ids and "bar-runtime-ops_s" not in ids
    assert "line-rate-ops_s" in ids  # percentages of the peak are a numeric axis
    assert next(f for f in figs if f.id == "series-throughput").window == 5
