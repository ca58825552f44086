"""Every campaign spec in examples/ runs end to end at its smoke size (at most 2 cells of
one 200-op trial each: `--scale smoke`), and its report renders, so no spec can rot."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.store.db import Store
from casslab.store.results import Results

from labtools import casslab, leftovers

ROOT = Path(__file__).parents[2]
SPECS = sorted([*ROOT.glob("examples/[0-9][0-9][0-9]-*.yaml"),
                *ROOT.glob("examples/[0-9][0-9][0-9]-*/*.yaml")])

pytestmark = pytest.mark.integration


def test_the_examples_are_found() -> None:
    studies = {p.relative_to(ROOT / "examples").parts[0][:3] for p in SPECS}
    assert studies == {"000", "001", "002", "003", "004"}


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_each_example_runs_at_smoke_size_and_reports(spec: Path, tmp_path: Path) -> None:
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
