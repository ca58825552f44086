"""Nothing is left behind: after kill -9 of casslab, after a node that dies at start."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from casslab.core.paths import default_home

from labtools import CASSLAB, casslab, leftovers

pytestmark = pytest.mark.integration


def _wait_for_node_pid(lab: str, timeout_s: float = 60) -> None:
    state_file = default_home() / "labs" / lab / "lab.json"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if state_file.exists():
            try:
                nodes = json.loads(state_file.read_text())["nodes"]
            except (json.JSONDecodeError, KeyError):
                nodes = []
            if any(n["pid"] for n in nodes):
                return
        time.sleep(0.1)
    raise AssertionError(f"no node of {lab} was started within {timeout_s} s")


def test_down_cleans_up_after_casslab_was_killed_during_up() -> None:
    proc = subprocess.Popen([CASSLAB, "lab", "up", "--nodes", "2", "--name", "itkill",
                             "--profile", "rpi2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _wait_for_node_pid("itkill")
        time.sleep(2)  # let the JVM get going inside its cgroup and namespace
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert leftovers("itkill"), "the killed up should have left a running node to clean"
    res = casslab("lab", "down", "--name", "itkill", "--wipe")
    assert res.returncode == 0, res.stderr
    assert leftovers("itkill") == []
    assert not (default_home() / "labs" / "itkill").exists()


def test_a_node_that_dies_at_start_is_reported_and_nothing_stays() -> None:
    res = casslab("lab", "up", "--nodes", "2", "--name", "itbroken", "--profile", "container",
                  "--set", "no_such_option=1")
    assert res.returncode == 1
    first = res.stderr.splitlines()[0]
    assert first.startswith("error: node1 (pid ") and "exited during start" in first
    assert "no_such_option" in res.stderr  # Cassandra's own reason, from the log tail
    assert leftovers("itbroken") == []
    casslab("lab", "down", "--name", "itbroken", "--wipe")


def test_lab_down_of_an_unknown_lab_is_an_error() -> None:
    res = casslab("lab", "down", "--name", "nosuchlab")
    assert res.returncode == 1 and "no lab named 'nosuchlab'" in res.stderr
    assert not Path(default_home(), "labs", "nosuchlab", "lab.json").exists()
