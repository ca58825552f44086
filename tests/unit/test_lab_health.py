"""A dead node's cause: from its exit status when this process started it (a real
process, killed for real), else from its logs."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from casslab.lab import node
from casslab.lab.health import dead_nodes, death_cause, exit_cause, log_cause, recorded_exit
from casslab.lab.state import LabState, NodeState
from casslab.system.process import is_same_process


@pytest.mark.parametrize(("code", "cause"), [
    (-9, "killed by signal 9 (SIGKILL)"),
    (-11, "killed by signal 11 (SIGSEGV)"),
    (143, "exited with status 143 (the JVM's exit on signal 15, SIGTERM)"),
    (130, "exited with status 130 (the JVM's exit on signal 2, SIGINT)"),
    (1, "exited with status 1"),
    (0, "exited with status 0"),
    (255, "exited with status 255"),
])
def test_exit_status_is_said_as_its_cause(code: int, cause: str) -> None:
    assert exit_cause(code) == cause


def _node(tmp_path: Path, pid: int = 0, ticks: int | None = None) -> NodeState:
    (tmp_path / "logs").mkdir(exist_ok=True)
    return NodeState(1, "127.0.0.1", str(tmp_path), pid=pid, start_ticks=ticks)


def _spawn(tmp_path: Path, command: list[str]) -> NodeState:
    n = _node(tmp_path)
    n.pid, n.start_ticks = node.spawn(command, netns_prefix=[], cgroup_procs=[],
                                      stdout_log=tmp_path / "logs" / "stdout.log")
    return n


def _wait_recorded(n: NodeState) -> int:
    node.wait_recorded(n.pid, n.start_ticks, timeout_s=10)
    code = recorded_exit(n)
    assert code is not None, "the reaper recorded no exit status"
    return code


def test_a_node_killed_with_sigkill_is_named_with_the_signal(tmp_path: Path) -> None:
    n = _spawn(tmp_path, ["sleep", "60"])
    os.kill(n.pid, signal.SIGKILL)
    assert _wait_recorded(n) == -9
    state = LabState("t", str(tmp_path), "5.0", "host", None, None, 1, [], {}, nodes=[n])
    assert [(d.name, d.cause) for d in dead_nodes(state)] == [
        ("node1", "killed by signal 9 (SIGKILL)")]


def test_waiting_for_a_nodes_record_returns_once_its_exit_file_is_written(
        tmp_path: Path) -> None:
    # What a wipe needs after stopping a node: kill returns once the process is a
    # zombie, and the reaper writes the exit file into its logs after that
    n = _spawn(tmp_path, ["sh", "-c", "sleep 0.5; exit 3"])
    node.wait_recorded(n.pid, n.start_ticks)
    assert recorded_exit(n) == 3
    node.wait_recorded(n.pid, n.start_ticks, timeout_s=0.0)  # recorded: nothing to join


def test_a_node_that_exits_by_itself_is_named_with_its_status(tmp_path: Path) -> None:
    n = _spawn(tmp_path, ["sh", "-c", "exit 3"])
    assert _wait_recorded(n) == 3
    assert death_cause(n) == "exited with status 3"


def test_a_running_or_stopped_node_is_not_dead(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    running = _spawn(tmp_path / "a", ["sleep", "60"])
    stopped = _node(tmp_path / "b")  # stopped on purpose (`lab stop-node`): pid 0
    try:
        state = LabState("t", str(tmp_path), "5.0", "host", None, None, 1, [], {},
                         nodes=[running, stopped])
        assert dead_nodes(state) == []
    finally:
        os.kill(running.pid, signal.SIGKILL)


def test_an_exit_record_of_another_process_is_not_used(tmp_path: Path) -> None:
    n = _spawn(tmp_path, ["sh", "-c", "exit 3"])
    _wait_recorded(n)
    later = _node(tmp_path, pid=n.pid + 1, ticks=n.start_ticks)  # a node started since
    assert recorded_exit(later) is None
    assert "no exit status" in death_cause(later, wait_s=0.0)


def test_without_an_exit_status_the_logs_tell_the_cause(tmp_path: Path) -> None:
    n = _node(tmp_path, pid=4242)
    log = tmp_path / "logs" / "system.log"
    log.write_text("INFO  [main] Node is up\n")
    assert log_cause(n).startswith("gone without a word in its logs: a SIGKILL")
    log.write_text("INFO  up\nINFO  [StorageServiceShutdownHook] Cassandra shutting down\n")
    assert log_cause(n) == "shut down (its log shows Cassandra's shutdown)"
    log.write_text("INFO  [main] JVM Arguments: [-Xmx1G, -XX:+ExitOnOutOfMemoryError]\n")
    assert log_cause(n).startswith("gone without a word")  # an argument is not a cause
    (tmp_path / "logs" / "stdout.log").write_text(
        "Terminating due to java.lang.OutOfMemoryError: Java heap space\n")
    assert log_cause(n) == ("exited; its log's last fatal line: Terminating due to "
                            "java.lang.OutOfMemoryError: Java heap space")
    (tmp_path / "hs_err_pid4242.log").write_text("# A fatal error\n")
    assert log_cause(n) == f"the JVM crashed (see {tmp_path / 'hs_err_pid4242.log'})"


def test_the_cause_is_known_as_soon_as_the_node_is_seen_dead(tmp_path: Path) -> None:
    # A killed child is a zombie (not alive) before the reaper has written its record.
    n = _spawn(tmp_path, ["sleep", "60"])
    os.kill(n.pid, signal.SIGKILL)
    while is_same_process(n.pid, n.start_ticks):
        time.sleep(0.001)
    assert death_cause(n) == "killed by signal 9 (SIGKILL)"
