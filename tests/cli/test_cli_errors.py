"""Bad input: a one-line error naming the cause, a non-zero exit, nothing started."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab, leftovers


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "rpi9"], "error: unknown profile 'rpi9' (valid: rpi2, rpi3"),
        (["--nodes", "0"], "error: --nodes 0: a lab needs at least 1 node"),
        (["--nodes", "500"], "error: --nodes 500: at most 32 nodes per lab"),
        (["--nodes", "30", "--profile", "vm-4g"], "exceeds 90 % of this machine's"),
        (["--name", "Bad Name"], "error: lab name 'Bad Name' is invalid"),
        (["--set", "oops"], "error: --set 'oops': expected key=value"),
        (["--cassandra-version", "five"], "error: cassandra version 'five' is not of the form"),
        (["--timeout", "0s"], "error: --timeout 0.0: must be > 0 seconds"),
        (["--timeout", "300"], "error: --timeout: bare number 300 is ambiguous: add a unit, "
                               "e.g. 300ms or 300s"),
        (["--heap-mib", "100"], "error: --heap-mib 100: Cassandra needs at least 256 MiB"),
        (["--net", "dialup"], "error: unknown link profile 'dialup'"),
    ],
)
def test_bad_up_arguments_give_one_line_errors(args: list[str], message: str) -> None:
    res = casslab("lab", "up", "--name", "clibad", *args) if "--name" not in args else \
        casslab("lab", "up", *args)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert message in " ".join(lines)
    assert leftovers("clibad") == []


def _path_without(*tools: str, tmp: Path) -> str:
    """A PATH with the venv and, linked into tmp, every tool of PATH but `tools`."""
    keep = tmp / "bin"
    keep.mkdir()
    for tool in ("ip", "sh", "tail", "java", "mvn"):
        if tool in tools:
            continue
        found = shutil.which(tool)
        if found:
            (keep / tool).symlink_to(found)
    return f"{Path(sys.executable).parent}:{keep}"


def test_missing_java_is_named(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=_path_without("java", tmp=tmp_path))
    res = casslab("lab", "up", "--nodes", "1", "--name", "clinojava", env=env)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [
        "error: java not found on PATH: Cassandra 5 needs Java 17 (apt-get install "
        "openjdk-17-jre-headless)"] or "java not found on PATH" in res.stderr
    assert leftovers("clinojava") == []


def test_missing_maven_is_named_when_jars_are_not_cached(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=_path_without("mvn", tmp=tmp_path),
               CASSLAB_CACHE=str(tmp_path / "empty-cache"))
    res = casslab("lab", "up", "--nodes", "1", "--name", "clinomvn", env=env)
    assert res.returncode == 1
    assert "error: mvn not found on PATH" in res.stderr
    assert leftovers("clinomvn") == []


def test_help_of_every_lab_command_has_an_example() -> None:
    for cmd in ("up", "down", "status", "list", "exec", "cql", "logs", "stop", "start"):
        res = casslab("lab", cmd, "--help")
        assert res.returncode == 0 and "Example: casslab lab" in res.stdout, cmd


def test_profiles_lists_builtins_with_sources() -> None:
    res = casslab("profiles")
    assert res.returncode == 0
    for name in ("rpi2", "t2.micro", "vm-4g", "container"):
        assert name in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cl-read", "serial"], "error: --cl-read: 'serial' must be one of ANY, ONE"),
        (["--workers", "0"], "error: --workers: 0 must be an integer >= 1"),
        (["--duration", "soon"], "error: --duration: 'soon' is not a duration"),
        (["--threads", "150", "--in-flight", "8"],
         "error: --threads: cannot be used with in-flight"),
        (["--threads", "0"], "error: --threads: 0 must be an integer in 1..=32768"),
    ],
)
def test_bad_run_options_fail_before_connecting(args: list[str], message: str) -> None:
    # 192.0.2.1 is TEST-NET-1: were the options not checked first, the run would try it.
    res = casslab("run", "ycsb-a", "--hosts", "192.0.2.1", *args, timeout_s=60)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert message in lines[0]


@pytest.mark.parametrize(("args", "message"), [
    (["--clients", "0"], "error: --clients: 0 is not a client count (valid: 1..64)"),
    (["--clients", "65"], "error: --clients: 65 is not a client count (valid: 1..64)"),
    (["--clients", "2", "--format", "ycsb"], "error: --format ycsb prints one client's text"),
])
def test_run_clients_outside_1_to_64_is_one_line(args: list[str], message: str) -> None:
    res = casslab("run", "stress-write", "--name", "clibadclients", *args)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
