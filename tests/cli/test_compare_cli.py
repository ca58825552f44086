"""`casslab compare`: the real command on two small results directories written with the
Store API (no Cassandra needed): table, --json, two cells of one directory, bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "unit"))

from test_analysis_compare import FAST, SLOW, make_results

from labtools import casslab


def test_compare_two_directories_flags_the_throughput_drop(tmp_path: Path) -> None:
    make_results(tmp_path / "a", {"nodes=1": FAST})
    make_results(tmp_path / "b", {"nodes=1": SLOW})
    res = casslab("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert res.returncode == 0, res.stderr
    assert "throughput (ops/s)" in res.stdout and "-9.9 %" in res.stdout
    assert "YES" in res.stdout
    assert "1 of 7 responses differ (Holm-corrected p <= 0.01): throughput" in res.stdout


def test_compare_two_cells_as_json(tmp_path: Path) -> None:
    make_results(tmp_path, {"nodes=1": FAST, "nodes=3": FAST})
    res = casslab("compare", str(tmp_path), str(tmp_path), "--cell-a", "nodes=1",
                  "--cell-b", "nodes=3", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["alpha"] == 0.01 and data["correction"] == "Holm"
    ops = next(r for r in data["rows"] if r["response"] == "ops_s")
    assert ops["n_a"] == ops["n_b"] == 6 and ops["flagged"] is False
    assert ops["change_pct"] == 0.0


def test_compare_unknown_cell_is_one_line(tmp_path: Path) -> None:
    make_results(tmp_path, {"nodes=1": FAST})
    res = casslab("compare", str(tmp_path), str(tmp_path), "--cell-b", "nodes=9")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "cell 'nodes=9' is not in" in lines[0] and "nodes=1" in lines[0]
    res = casslab("compare", str(tmp_path / "nope"), str(tmp_path))
    assert res.returncode == 2 and "no results database" in res.stderr


def test_compare_help_has_an_example() -> None:
    res = casslab("compare", "--help")
    assert res.returncode == 0 and "Example: casslab compare" in res.stdout
