"""The layer contract in pyproject.toml holds for the tree, and breaks on a forbidden
import (so `make lint` cannot pass a layer violation)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--config", str(project / "pyproject.toml"),
                           "--no-cache"],
                          cwd=project, capture_output=True, text=True,
                          env={"PYTHONPATH": str(project / "src"), "PATH": "/usr/bin:/bin"},
                          timeout=120)


def copy_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    shutil.copytree(ROOT / "src" / "casslab", project / "src" / "casslab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    return project


def test_tree_keeps_the_layer_contract(tmp_path: Path) -> None:
    result = lint(copy_project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    (project / "src/casslab/core/sneaky.py").write_text("import casslab.lab\n")
    result = lint(project)
    assert result.returncode != 0
    assert "casslab.core.sneaky -> casslab.lab" in result.stdout


def test_side_by_side_modules_importing_each_other_break_the_contract(
        tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    (project / "src/casslab/net/sneaky.py").write_text("from casslab.lab import Lab\n")
    result = lint(project)
    assert result.returncode != 0
    assert "casslab.net.sneaky -> casslab.lab" in result.stdout


def test_architecture_doc_names_every_module() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    src = ROOT / "src"
    modules = sorted(
        ".".join(p.relative_to(src).with_suffix("").parts)
        for p in (src / "casslab").rglob("*.py") if p.name != "__init__.py")
    missing = [m for m in modules if f"`{m}`" not in doc]
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"


# Imports back up inside casslab.experiment (issue 29): the spec reader once imported
# the options of a cell (then loadopts, now the factor registry) inside its functions
# while that module imported the spec, a cycle the layer contract above cannot see (both
# sit in one layer). Each plant is appended to a module of a copy of the tree; a
# function-level import counts like any other.
PLANTS = {
    "the old cycle, hidden in a function": (
        "experiment/factors/cell.py",
        "\n\ndef _sneaky() -> None:\n    from casslab.experiment.spec import parse_spec\n",
        "casslab.experiment.factors.cell -> casslab.experiment.spec"),
    "the level grammar importing the factor registry": (
        "experiment/levels.py", "\nimport casslab.experiment.factors.registry\n",
        "casslab.experiment.levels -> casslab.experiment.factors.registry"),
    "the factor registry importing the typed cell": (
        "experiment/factors/registry.py", "\nimport casslab.experiment.factors.cell\n",
        "casslab.experiment.factors.registry -> casslab.experiment.factors.cell"),
    "the spec model importing its reader": (
        "experiment/spec/model.py", "\nfrom casslab.experiment.spec.parse import parse_spec\n",
        "casslab.experiment.spec.model -> casslab.experiment.spec.parse"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_an_import_back_up_inside_the_experiment_layer_breaks_a_contract(
        plant: str, tmp_path: Path) -> None:
    module, code, chain = PLANTS[plant]
    project = copy_project(tmp_path)
    path = project / "src/casslab" / module
    path.write_text(path.read_text() + code)
    result = lint(project)
    assert result.returncode != 0
    assert chain in result.stdout, result.stdout
