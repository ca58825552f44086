"""No campaign spec in examples/ can rot: every one is validated at each of its sizes and
planned as written and at its smoke size; the first spec of each study
(examples/<study>-*/, in name order: its experiment 1) also runs end to end at its smoke
size (at most 2 cells of one 200-op trial each: `--scale smoke`) and its report renders.

One run per study, not one per spec (issue 28: `make test` has a budget; a run is ~45 s
of lab start and trials): the specs of one study share their lab shape, workload and
report code, and what differs between them (factors, levels, sizes) is what validate and
plan check. `make reproduce STUDY=... SCALE=smoke` runs every spec of a study.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from casslab.store.db import Store
from casslab.store.records import Results

from labtools import casslab, leftovers

ROOT = Path(__file__).parents[2]
SPECS = sorted([*ROOT.glob("examples/[0-9][0-9][0-9]-*.yaml"),
                *ROOT.glob("examples/[0-9][0-9][0-9]-*/*.yaml")])


def _study(spec: Path) -> str:
    return spec.relative_to(ROOT / "examples").parts[0][:3]


# The first spec of each study, in name order.
RUN = [spec for i, spec in enumerate(SPECS) if i == 0 or _study(SPECS[i - 1]) != _study(spec)]

pytestmark = pytest.mark.integration


def _id(spec: Path) -> str:
    return str(spec.relative_to(ROOT / "examples"))


def test_the_examples_are_found() -> None:
    studies = {_study(p) for p in SPECS}
    assert studies == {"000", "001", "002", "003", "004"}
    assert [_study(p) for p in RUN] == sorted(studies)
    assert len(SPECS) > len(RUN), "some specs are only validated and planned"


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_each_example_validates_at_every_size_and_plans(spec: Path) -> None:
    valid = casslab("experiment", "validate", str(spec))
    assert valid.returncode == 0, valid.stdout[-2000:] + valid.stderr[-2000:]
    sizes = [ln for ln in valid.stdout.splitlines() if ": valid; " in ln]
    assert any("--scale smoke: valid" in ln for ln in sizes), valid.stdout
    for scale in ([], ["--scale", "smoke"]):
        plan = casslab("experiment", "plan", str(spec), *scale)
        assert plan.returncode == 0, plan.stdout[-2000:] + plan.stderr[-2000:]
        kept = re.search(r"(\d+) kept trials", plan.stdout)
        assert kept and int(kept.group(1)) > 0, (scale, plan.stdout[-2000:])


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
