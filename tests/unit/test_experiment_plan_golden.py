"""`casslab experiment plan` of every example spec, at every size it offers, and `casslab
schema experiment` against golden files: a refactoring of the spec reader (issue 29: the
split of experiment/spec.py) must plan exactly the same trials and describe the same
format.

The goldens were captured before the split. After a deliberate change of the plans or the
format, regenerate them and review the diff:
    CASSLAB_UPDATE_GOLDEN=1 pytest tests/unit/test_experiment_plan_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from casslab.cli import experiment as cli_experiment
from casslab.cli import schema as cli_schema
from casslab.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("CASSLAB_UPDATE_GOLDEN") == "1"
# Every YAML file under examples/; the ones that are no experiment spec (stage files, a
# plan spec, tuner rules) pin down the error the reader gives for them.
EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*.yaml"))


def scales_of(example: str) -> list[str]:
    """The sizes a spec offers, read from its text (not by the reader under test)."""
    import yaml

    doc = yaml.safe_load((ROOT / example).read_text())
    named = sorted(doc.get("scales") or {}) if isinstance(doc, dict) else []
    return [*named, "smoke"] if "workload" in (doc or {}) else []


def golden_name(example: str, scale: str | None) -> str:
    stem = example.removeprefix("examples/").removesuffix(".yaml").replace("/", "__")
    return f"{stem}@{scale}.txt" if scale else f"{stem}.txt"


def run(monkeypatch: pytest.MonkeyPatch, module: object, *args: str) -> str:
    """The command's exit code, stdout and stderr, printed 140 columns wide (what it
    prints into a pipe) whatever terminal pytest runs in."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(module, "out", Console(width=140))
    result = CliRunner().invoke(app, list(args))
    return f"exit {result.exit_code}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}"


def check(text: str, golden: Path) -> None:
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.is_file(), f"{golden} is missing (CASSLAB_UPDATE_GOLDEN=1 writes it)"
    assert text == golden.read_text(), (f"{golden.name} differs from its golden file "
                                        "(CASSLAB_UPDATE_GOLDEN=1 regenerates them)")


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_plans_the_same_trials_at_every_size(
        example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for scale in [None, *scales_of(example)]:
        text = run(monkeypatch, cli_experiment, "experiment", "plan", example,
                   *(("--scale", scale) if scale else ()))
        check(text, GOLDEN / "plan" / golden_name(example, scale))


def test_every_golden_plan_belongs_to_an_example() -> None:
    wanted = {golden_name(e, s) for e in EXAMPLES for s in [None, *scales_of(e)]}
    stale = sorted(p.name for p in (GOLDEN / "plan").glob("*.txt") if p.name not in wanted)
    assert not stale, f"golden plans of no example: {', '.join(stale)}"


def test_the_experiment_schema_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    check(run(monkeypatch, cli_schema, "schema", "experiment"),
          GOLDEN / "schema" / "experiment.json.txt")
