"""No campaign spec in examples/ can rot: `casslab experiment validate` accepts every one
at each of its sizes, smoke included, and `plan` gives each at least one kept trial as
written and at its smoke size. In-process (no lab, ~0.3 s a spec): the plans' exact text
is pinned by tests/unit/test_experiment_plan_golden.py, and one spec per study runs end
to end in tests/integration/test_examples_smoke.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casslab.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted([*ROOT.glob("examples/[0-9][0-9][0-9]-*.yaml"),
                *ROOT.glob("examples/[0-9][0-9][0-9]-*/*.yaml")])


def _id(spec: Path) -> str:
    return str(spec.relative_to(ROOT / "examples"))


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def test_every_study_has_specs() -> None:
    assert {_id(p)[:3] for p in SPECS} == {"000", "001", "002", "003", "004"}


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_each_example_validates_at_every_size_and_plans(spec: Path) -> None:
    code, text = _invoke("experiment", "validate", str(spec))
    assert code == 0, text[-3000:]
    assert any("--scale smoke: valid" in ln for ln in text.splitlines()), text
    for scale in ([], ["--scale", "smoke"]):
        code, text = _invoke("experiment", "plan", str(spec), *scale)
        assert code == 0, text[-3000:]
        kept = re.search(r"(\d+) kept trials", text)
        assert kept and int(kept.group(1)) > 0, (scale, text[-2000:])


def test_validate_says_when_an_until_verdicts_design_can_first_decide() -> None:
    spec = ROOT / "examples" / "002-edge" / "3-endpoint-percent.yaml"
    code, text = _invoke("experiment", "validate", str(spec))
    assert code == 0, text[-3000:]
    flat = " ".join(text.split())
    # 8 findings: 99.38 % each; a sequence tuned to 30 rounds is finite from round 8.
    assert ("rounds: 3 to 30 until every finding is decisive; each finding's anytime-valid "
            "interval (99.38 %: 95 % over 8 findings) can be finite from round 8 and is "
            "narrowest at round 30") in flat
    # The paper-rounds size plans its own maximum; the fixed paper size prints no line.
    assert "can be finite from round 6 and is narrowest at round 14" in flat
    assert flat.count("rounds: 3 to") == 2
