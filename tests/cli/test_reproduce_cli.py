"""`casslab reproduce 002 --no-run` writes the doc's tables and figures from results that
are already there (a fabricated campaign database: no lab, no campaign run)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "unit"))

import pytest
from repro_fixture import ROOT, fabricate, fabricate_002

from casslab.report.reproduce import begin_marker, end_marker

from labtools import casslab


def test_no_run_writes_the_tables_from_the_results_folder(tmp_path: Path) -> None:
    results, docs = tmp_path / "results", tmp_path / "docs"
    fabricate_002(results / "002-edge-3-endpoint-percent")
    docs.mkdir()
    shutil.copy(ROOT / "docs" / "reproductions" / "002.md", docs / "002.md")
    res = casslab("reproduce", "002", "--no-run", "--results", str(results), "--docs",
                  str(docs), "--examples", str(ROOT / "examples"), env=None)
    assert res.returncode == 0, res.stderr
    assert f"wrote {docs / '002.md'} and 4 figures" in res.stdout.replace("\n", "")
    text = (docs / "002.md").read_text()
    for block in ("verdicts", "values", "figures"):
        assert begin_marker(block) in text and end_marker(block) in text
    assert "**holds**" in text
    assert "`002-edge-1-endpoint-steps`: its rows and figures are kept" in text
    assert len(list((docs / "img").glob("002-edge-3-endpoint-percent-*.png"))) == 4


def test_a_study_without_specs_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    res = casslab("reproduce", "003", "--no-run", "--examples", str(tmp_path / "none"),
                  "--docs", str(tmp_path / "docs"), env=None)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("error: study 003: no spec in ")
    assert len(res.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("study", "spec", "scale", "folder", "rows"), [
    ("000", "000-rpi-iot/links.yaml", "paper", "000-rpi-iot-links-paper", 5),
    ("004", "004-containers/1-mixed.yaml", "here", "004-containers-1-mixed", 3),
])
def test_no_run_writes_000_and_004s_verdicts_from_their_results(
        tmp_path: Path, study: str, spec: str, scale: str, folder: str, rows: int) -> None:
    from test_report_reproduce_studies import container_runtime, pi_runtime

    results, docs = tmp_path / "results", tmp_path / "docs"
    fabricate(results / folder, ROOT / "examples" / spec,
              pi_runtime if study == "000" else container_runtime,
              scale=None if scale == "here" else scale, trials=5)
    docs.mkdir()
    shutil.copy(ROOT / "docs" / "reproductions" / f"{study}.md", docs / f"{study}.md")
    res = casslab("reproduce", study, "--no-run", "--scale", scale, "--results",
                  str(results), "--docs", str(docs), "--examples", str(ROOT / "examples"),
                  env=None)
    assert res.returncode == 0, res.stderr
    text = (docs / f"{study}.md").read_text()
    assert text.count(f"| `{folder}` | **") == rows
    # its other specs, named: 000's doc has no paper-size rows for them yet, 004's keeps
    # the rows it has
    assert (": not run (no results database" if study == "000" else
            ": its rows and figures are kept as the doc had them") in text
