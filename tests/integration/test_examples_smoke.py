"""No campaign spec in examples/ can rot: every one is validated at each of its sizes and
planned (tests/cli/test_examples_validate_cli.py, no lab); here the first spec of each
study (examples/<study>-*/, in name order: its experiment 1) also runs end to end at its
smoke size (at most 2 cells of one 200-op trial each: `--scale smoke`) and its report
renders, unless the README walk already runs a spec of that study (000's links.yaml).

One run per study, not one per spec (issue 28: `make test` has a budget; a run is ~45 s
of lab start and trials): the specs of one study share their lab shape, workload and
report code, and what differs between them (factors, levels, sizes) is what validate and
plan check. `make reproduce STUDY=... SCALE=smoke` runs every spec of a study.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

import readmewalk as rw
from casslab.cli.main import app
from casslab.store.db import Store
from casslab.store.records import Results

from labtools import casslab, leftovers

ROOT = Path(__file__).parents[2]
SPECS = sorted([*ROOT.glob("examples/[0-9][0-9][0-9]-*.yaml"),
                *ROOT.glob("examples/[0-9][0-9][0-9]-*/*.yaml")])


def _study(spec: Path) -> str:
    return spec.relative_to(ROOT / "examples").parts[0][:3]




def walked_specs() -> set[Path]:
    """The example specs a documented `casslab experiment run` line runs: the README
    walk (test_readme_walk.py) runs those end to end at smoke size and reports them."""
    root = typer.main.get_command(app)
    lines = rw.readme_lines((ROOT / "README.md").read_text()) + rw.help_lines(root)
    return {(ROOT / words[3]).resolve() for d in lines for words in rw.expand(d.text)
            if words[1:3] == ["experiment", "run"] and len(words) > 3
            and words[3].startswith("examples/")}


# The first spec of each study, in name order, for the studies the README walk does not
# already run a spec of (a second smoke campaign of the same study would cost ~55 s and
# check the same lab shape, workload and report code).
WALKED = {_study(p) for p in walked_specs()}
FIRSTS = [spec for i, spec in enumerate(SPECS)
          if i == 0 or _study(SPECS[i - 1]) != _study(spec)]
RUN = [spec for spec in FIRSTS if _study(spec) not in WALKED]

pytestmark = pytest.mark.integration


def _id(spec: Path) -> str:
    return str(spec.relative_to(ROOT / "examples"))


def test_the_examples_are_found() -> None:
    studies = {_study(p) for p in SPECS}
    assert studies == {"000", "001", "002", "003", "004"}
    assert WALKED and studies > WALKED, WALKED
    assert sorted([_study(p) for p in RUN] + sorted(WALKED)) == sorted(studies), \
        "every study runs one spec end to end, here or in the README walk"


@pytest.mark.parametrize("spec", RUN, ids=_id)
def test_one_example_per_study_runs_at_smoke_size_and_reports(spec: Path,
                                                               tmp_path: Path) -> None:
    lab = "smoke-" + spec.stem[:8]
    results = tmp_path / "results"
    try:
        run = casslab("experiment", "run", str(spec), "--scale", "smoke", "--results",
                      str(results), "--lab", lab, timeout_s=1500)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        with Store(results, create=False) as store:
            trials = Results(store).trials()
        assert trials and all(t.status == "done" for t in trials), trials
        report = casslab("report", str(results), timeout_s=600)
        assert report.returncode == 0, report.stderr[-2000:]
        assert (results / "report.html").stat().st_size > 10_000
    finally:
        casslab("lab", "down", "--name", lab, "--wipe")
        assert not leftovers(lab)
