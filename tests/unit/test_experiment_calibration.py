"""casslab calibrate's A/A spec: factors held at one level, copies A and B interleaved,
reference and sizes dropped; bad --cell values are one-line errors."""

from __future__ import annotations

import pytest

from casslab.experiment.calibration import aa_spec, parse_cell
from casslab.experiment.design import plan
from casslab.experiment.spec import SpecError, parse_spec

SPEC = """\
name: wifi
workload: ycsb-c
factors:
  - {name: nodes, levels: [1, 3]}
  - {name: network, levels: [ethernet-100, wifi]}
design: {trials: 5, warmup_trials: 1, randomize: true}
reference:
  findings:
    - {claim: c, response: runtime_s, factor: network, expect: higher}
scales:
  paper: {design.trials: 21}
"""


def test_aa_spec_holds_one_cell_and_interleaves_two_copies() -> None:
    s = parse_spec(aa_spec(SPEC, 4, parse_cell("network=wifi")))
    assert s.name == "wifi-calibrate"
    assert [(f.name, f.levels) for f in s.factors] == [("nodes", (1,)), ("network", ("wifi",)),
                                                       ("copy", ("A", "B"))]
    assert s.design.order == "interleaved" and s.design.trials == 4
    assert s.design.warmup_trials == 1 and s.reference.empty
    kept = [t for t in plan(s) if not t.warmup]
    assert sorted((t.round, t.cell.params["copy"]) for t in kept) == [
        (r, c) for r in range(1, 5) for c in ("A", "B")]


@pytest.mark.parametrize(("cell", "msg"), [
    ("network=lte", "not a level of factor network"),
    ("rf=3", "rf is not a factor"),
    ("nodes", "not factor=level"),
])
def test_bad_cell_is_one_line(cell: str, msg: str) -> None:
    with pytest.raises(SpecError, match=msg):
        aa_spec(SPEC, 3, parse_cell(cell))
