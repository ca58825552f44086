"""Every reader and writer of a results directory, on a database it must refuse or only
read: a refusal writes nothing (results.db keeps its bytes and its mtime, no file is
added), a read of an older database leaves the file as it was (the migration happens in a
copy in memory), and the one line names the cause. The writer's migration in place, with
its backup and its one line, is tested in tests/unit/test_store_migration.py."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "results_v1.db"
SPEC = """\
name: refusal
workload: {name: ycsb-a, records: 100}
factors:
  - {name: nodes, levels: [1]}
design: {trials: 1}
stop: {ops: 100, timeout_s: 60}
"""


def stamp(directory: Path) -> tuple[str, int, list[str]]:
    """results.db's content hash and mtime (ns), and every file of the directory."""
    db = directory / "results.db"
    return (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns,
            sorted(str(p.relative_to(directory)) for p in directory.rglob("*")))


def one_line(res: subprocess.CompletedProcess[str]) -> str:
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    results = tmp_path / "r"
    results.mkdir()
    shutil.copy(FIXTURE, results / "results.db")
    return results


@pytest.fixture
def newer(v1: Path) -> Path:
    raw = sqlite3.connect(v1 / "results.db")
    raw.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    return v1


def test_run_refuses_another_campaigns_directory_without_migrating_it(
        v1: Path, tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    before = stamp(v1)
    # A resume is the same command run again: both times refused, nothing written.
    for _ in range(2):
        res = casslab("experiment", "run", str(spec), "--results", str(v1))
        assert res.returncode == 1, res.stderr
        assert f"{v1} holds results of another spec (campaign 'fixture'" in one_line(res)
        assert stamp(v1) == before  # not migrated to 5, no backup, no spec.yaml


@pytest.mark.parametrize("reader", ["report", "export", "compare", "run"])
def test_a_newer_schema_is_refused_by_every_reader_writing_nothing(
        newer: Path, tmp_path: Path, reader: str) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    argv = {"report": ["report", str(newer)],
            "export": ["experiment", "export", str(newer)],
            "compare": ["compare", str(newer), str(newer)],
            "run": ["experiment", "run", str(spec), "--results", str(newer)]}[reader]
    before = stamp(newer)
    res = casslab(*argv)
    assert res.returncode == 1, res.stderr
    assert "schema_version 99: this casslab reads up to" in one_line(res)
    assert stamp(newer) == before


@pytest.mark.parametrize("reader", ["report", "export", "compare"])
def test_a_reader_of_an_older_database_leaves_the_file_as_it_was(
        v1: Path, tmp_path: Path, reader: str) -> None:
    argv = {"report": ["report", str(v1), "--out", str(tmp_path / "report.html")],
            "export": ["experiment", "export", str(v1), "--out", str(tmp_path / "x")],
            "compare": ["compare", str(v1), str(v1), "--cell-a", "nodes=1",
                        "--cell-b", "nodes=3"]}[reader]
    before = stamp(v1)
    res = casslab(*argv)
    assert res.returncode == 0, res.stderr
    assert stamp(v1) == before
