"""`casslab experiment validate` counts a spec's reference values and findings at each
size, and refuses a bad entry in one line naming file:line and the field."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

EXAMPLES = Path(__file__).parent.parent.parent / "examples"


def test_validate_counts_the_reference_at_each_size() -> None:
    spec = EXAMPLES / "000-rpi-iot" / "ram.yaml"  # Table 3's values at its paper size
    res = casslab("experiment", "validate", str(spec), env=None)
    assert res.returncode == 0, res.stderr
    written, smoke = res.stdout.replace("\n", "").split("--scale smoke")
    here, paper = written.split("--scale paper")
    assert "reference: 0 values, 2 findings" in here
    assert "reference: 9 values, 5 findings" in paper  # its own findings: + 3 trends
    assert "more not compared: levels this size drops" in smoke


def test_a_bad_reference_level_is_one_line_with_file_line_and_field(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("workload: {name: ycsb-a}\nfactors:\n  - {name: nodes, levels: [1, 3]}\n"
                    "reference:\n  values:\n    - {at: {nodes: 6}, value: 1, unit: s, "
                    "source: T3}\n")
    res = casslab("experiment", "validate", str(spec), env=None)
    assert res.returncode != 0
    assert (f"{spec}:6: reference.values[0].at.nodes: 6 is not a level of factor nodes "
            "(valid: 1, 3)") in res.stderr.replace("\n", "")


def test_validate_says_a_difference_finding_has_no_relative_detectable_size(
        tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("workload: {name: ycsb-a}\nfactors:\n  - {name: nodes, levels: [1, 3]}\n"
                    "design: {trials: 5, noise_cv: 0.05}\n"
                    "reference:\n  findings:\n"
                    "    - {claim: more, factor: nodes, expect: higher}\n"
                    "    - {claim: fewer pages, factor: nodes, expect: lower, "
                    "scale: difference}\n")
    res = casslab("experiment", "validate", str(spec), env=None)
    assert res.returncode == 0, res.stderr
    out = res.stdout.replace("\n", " ")
    assert "finding 'more': detectable +-" in out
    assert "finding 'fewer pages': a difference in runtime_s's unit" in out
