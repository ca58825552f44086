"""One error path: every user error is one line `error: ...` on stderr, exit 2 for usage
and 1 for failures, whatever the input holds; --debug / CASSLAB_DEBUG=1 give the
traceback; nothing is created for input that turns out bad. The real command runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from casslab.core.paths import default_home

from labtools import casslab

ROOT = Path(__file__).resolve().parents[2]
SPEC = str(ROOT / "examples" / "000-rpi-iot" / "links.yaml")


def one_error_line(res: subprocess.CompletedProcess[str]) -> str:
    lines = res.stderr.splitlines()  # not stripped: a stray blank line counts
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["lab", "up", "--nodes", "x"], "casslab lab up: Invalid value for '--nodes'"),
        (["lab", "up", "--bogus"], "casslab lab up: No such option: --bogus"),
        (["lab", "logs"], "casslab lab logs: Missing argument"),
        (["nosuch"], "No such command 'nosuch'"),
        (["run", "ycsb-a", "--ops", "many"], "Invalid value for '--ops'"),
    ],
)
def test_a_bad_command_line_is_one_line_and_exit_2(args: list[str], expected: str) -> None:
    res = casslab(*args)
    assert res.returncode == 2
    assert expected in one_error_line(res)
    assert "╭" not in res.stderr + res.stdout  # no Typer usage box


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["lab", "up", "--name", "[/]x"], "lab name '[/]x' is invalid"),
        (["lab", "up", "--name", "clim", "--profile", "[bold]p[/]"],
         "unknown profile '[bold]p[/]'"),
        (["lab", "up", "--name", "clim", "--profile", "a\nb"], "unknown profile 'a\\nb'"),
    ],
)
def test_markup_and_newlines_in_a_value_are_shown_as_typed(args: list[str], shown: str) -> None:
    res = casslab(*args)
    assert res.returncode == 2
    assert shown in one_error_line(res)


def test_debug_flag_and_variable_give_the_traceback() -> None:
    for res in (casslab("--debug", "lab", "up", "--name", "clid", "--profile", "nope"),
                casslab("lab", "up", "--name", "clid", "--profile", "nope",
                        env=dict(os.environ, CASSLAB_DEBUG="1"))):
        assert res.returncode == 1
        assert "Traceback (most recent call last)" in res.stderr
        assert "ProfileError: unknown profile 'nope'" in res.stderr


def test_no_lock_file_for_a_lab_that_does_not_exist() -> None:
    res = casslab("lab", "down", "--name", "ghost")
    assert res.returncode == 1
    assert one_error_line(res) == "error: no lab named 'ghost' (see `casslab lab list`)"
    res = casslab("lab", "stop", "1", "--name", "ghost")
    assert res.returncode == 1
    assert not (default_home() / "labs" / "ghost").exists()


def test_no_lock_file_for_a_bad_cassandra_version() -> None:
    res = casslab("lab", "up", "--name", "badver", "--cassandra-version", "five")
    assert res.returncode == 2
    assert "cassandra version 'five' is not of the form X.Y.Z" in one_error_line(res)
    assert not (default_home() / "labs" / "badver").exists()


def test_casslab_home_at_a_file_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory")
    res = casslab("lab", "list", env=dict(os.environ, CASSLAB_HOME=str(home)))
    assert res.returncode == 2
    assert one_error_line(res) == (f"error: CASSLAB_HOME={home}: is a file, where a "
                                   "directory is needed")


def test_a_results_path_that_is_a_file(tmp_path: Path) -> None:
    results = tmp_path / "results-file"
    results.write_text("x")
    run = casslab("experiment", "run", SPEC, "--results", str(results), "--lab", "clires")
    assert run.returncode == 2 and run.stdout == ""
    assert one_error_line(run) == (f"error: {results}: is a file, where a results directory "
                                   "is needed")
    for args in (["report", str(results)], ["experiment", "export", str(results)]):
        res = casslab(*args)
        assert res.returncode == 2
        assert str(results) in one_error_line(res)


def test_export_of_a_non_database_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "results.db").write_text("this is not SQLite")
    res = casslab("experiment", "export", str(tmp_path))
    assert res.returncode == 1
    assert f"{tmp_path / 'results.db'}: not a results database" in one_error_line(res)
    assert not (tmp_path / "export").exists()
    res = casslab("experiment", "export", str(tmp_path / "missing"))
    assert res.returncode == 2
    assert not (tmp_path / "missing").exists()


def test_a_binary_spec_is_named(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"name: x\n\xff\xfe: 1\n")
    res = casslab("experiment", "validate", str(spec))
    assert res.returncode == 2
    line = one_error_line(res)
    assert line.startswith(f"error: {spec}:") and "not UTF-8" in line
