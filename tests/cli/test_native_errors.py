"""casslab-load and casslab-netem: a user error is one line `error: ...`, exit 2 for the
command line and 1 for a failure, never a backtrace (even with RUST_BACKTRACE=1); the
`casslab run` wrapper passes the line on once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

RELEASE = Path(__file__).resolve().parents[2] / "target" / "release"
LOAD = RELEASE / "casslab-load"
NETEM = RELEASE / "casslab-netem"
pytestmark = pytest.mark.skipif(not (LOAD.exists() and NETEM.exists()),
                                reason="build the Rust binaries first (make rust)")


def native(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RUST_BACKTRACE="1")
    return subprocess.run([str(binary), *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


def only_line(res: subprocess.CompletedProcess[str]) -> str:
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert "backtrace" not in res.stderr and "Caused by" not in res.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--ops", "-1"], "-1 is negative: give a whole number >= 0"),
        (["--duration", "-5s"], "-5s is negative"),
        (["--warmup", "-10s"], "-10s is negative"),
        (["--bogus"], "unexpected argument '--bogus'"),
        (["--ops", "ten"], "invalid value 'ten' for '--ops <OPS>'"),
    ],
)
def test_load_command_line_errors_are_one_line(args: list[str], expected: str) -> None:
    res = native(LOAD, "ycsb", "--workload", "a", "--hosts", "127.0.0.1:1", *args)
    assert res.returncode == 2
    assert expected in only_line(res)
    assert res.stdout == ""


def test_load_help_is_still_help() -> None:
    res = native(LOAD, "ycsb", "--help")
    assert res.returncode == 0 and "--ops" in res.stdout


def test_netem_failure_says_its_cause_once(tmp_path: Path) -> None:
    missing = tmp_path / "links.json"
    res = native(NETEM, "check-config", "--config", str(missing))
    assert res.returncode == 1
    line = only_line(res)
    assert line.startswith(f"error: cannot read link config {missing}: ")
    assert line.count("No such file or directory") == 1


def test_netem_bad_json_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "links.json"
    bad.write_text("{")
    res = native(NETEM, "check-config", "--config", str(bad))
    assert res.returncode == 1
    assert f"link config {bad} is not valid JSON" in only_line(res)


def test_casslab_run_names_a_negative_ops() -> None:
    res = casslab("run", "ycsb-a", "--ops", "-1", "--hosts", "127.0.0.1")
    assert res.returncode == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and res.stdout == "", res.stderr + res.stdout
    assert lines[0].count("error:") == 1
    assert "--ops: -1" in lines[0]
