"""Which of a lab's nodes died, and why, said in one line.

The cause comes from the best witness there is:

1. The exit status, when this process started the node: casslab.lab.node's reaper
   thread writes it (with the pid and start ticks that identify the process) to
   `logs/exit-status.json`. A negative status is the signal that killed the JVM
   (`killed by signal 9 (SIGKILL)`); a JVM that handled SIGTERM or SIGINT exits with
   128 + the signal, said as such.
2. Otherwise (another casslab started the lab, or a container runtime whose start
   command daemonizes): the node's logs. A JVM crash leaves `hs_err_pid<pid>.log`;
   Cassandra's own fatal lines (ERROR, OutOfMemoryError, ...) are quoted; a log that
   ends without either, and without Cassandra's shutdown lines, is what a SIGKILL
   (kill -9 or the kernel's OOM killer) leaves, and is said to be only that.
"""

from __future__ import annotations

import json
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from casslab.lab import node as nodeproc
from casslab.lab.state import LabState, NodeState
from casslab.system.process import is_same_process

# Cassandra logs these when it stops on its own terms (drain, SIGTERM's shutdown hook).
_SHUTDOWN = re.compile(r"(DRAINED|Cassandra shutting down|StorageServiceShutdownHook)")
# Lines that say why a JVM ended (anchored: the JVM's arguments name OutOfMemoryError too).
_FATAL = re.compile(r"^(ERROR\b|Exception in thread|Terminating due to|java\.lang\.\w*Error\b)")
# A process is a zombie, not alive, before its reaper's wait() returns and the exit
# record is written: the record is waited for this long.
EXIT_RECORD_WAIT_S = 2.0


@dataclass(frozen=True)
class DeadNode:
    """A node of the lab state whose process is gone, and the cause in words."""

    name: str
    pid: int
    cause: str


def signal_name(number: int) -> str:
    """SIGKILL for 9; `signal 64` for a number without a name here."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_cause(returncode: int) -> str:
    """A process's exit status (subprocess's returncode) in words."""
    if returncode < 0:
        return f"killed by signal {-returncode} ({signal_name(-returncode)})"
    if returncode > 128 and returncode - 128 < 65:
        # The JVM runs its shutdown hooks on SIGTERM/SIGINT/SIGHUP and exits with 128+N.
        return (f"exited with status {returncode} (the JVM's exit on signal "
                f"{returncode - 128}, {signal_name(returncode - 128)})")
    return f"exited with status {returncode}"


def recorded_exit(node: NodeState) -> int | None:
    """The exit status the reaper recorded for this node's current pid; None when there
    is none (not our child, still running, or a record of an earlier process)."""
    path = Path(node.directory) / "logs" / nodeproc.EXIT_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    same = record.get("pid") == node.pid and record.get("start_ticks") == node.start_ticks
    code = record.get("returncode")
    return code if same and isinstance(code, int) else None


def log_cause(node: NodeState) -> str:
    """The cause as the node's logs tell it, for a process this casslab did not start."""
    directory = Path(node.directory)
    for crash in (directory / f"hs_err_pid{node.pid}.log",
                  directory / "logs" / f"hs_err_pid{node.pid}.log"):
        if crash.exists():
            return f"the JVM crashed (see {crash})"
    lines = _tail(directory / "logs" / "stdout.log") + _tail(directory / "logs" / "system.log")
    fatal = [ln for ln in lines if _FATAL.search(ln)]
    if fatal:
        return f"exited; its log's last fatal line: {fatal[-1].strip()[:300]}"
    if any(_SHUTDOWN.search(ln) for ln in lines[-50:]):
        return "shut down (its log shows Cassandra's shutdown)"
    return ("gone without a word in its logs: a SIGKILL (kill -9 or the kernel's OOM killer) "
            "leaves exactly that; no exit status, as this process did not start it")


def death_cause(node: NodeState, wait_s: float = EXIT_RECORD_WAIT_S) -> str:
    """Why the node's process is gone: its exit status when we are its parent (waiting
    up to wait_s for the reaper to record it), else its logs (module docstring)."""
    deadline = time.monotonic() + wait_s
    while (code := recorded_exit(node)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return exit_cause(code) if code is not None else log_cause(node)


def dead_nodes(state: LabState) -> list[DeadNode]:
    """The nodes of a built lab whose process is not running, with the cause of each.
    A node never started or stopped on purpose (`lab stop-node`, pid 0) is not dead."""
    return [DeadNode(n.name, n.pid, death_cause(n)) for n in state.nodes
            if n.pid > 0 and not is_same_process(n.pid, n.start_ticks)]


def _tail(path: Path, lines: int = 400) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []
