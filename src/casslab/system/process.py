"""Small, dependency-free helpers for external commands and process identity."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from casslab.core.errors import CommandError


def run(cmd: list[str], *, check: bool = True, timeout_s: float = 60.0) -> str:
    """Run a command, return its stdout; raise CommandError on a non-zero exit."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if check and proc.returncode != 0:
        raise CommandError(cmd, proc.returncode, proc.stderr)
    return proc.stdout


def start_time_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot, or None if it is gone.

    Stored beside a pid so a recycled pid is never mistaken for our node.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; fields after the last ')' are fixed.
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19])


def is_same_process(pid: int, ticks: int | None) -> bool:
    """True when `pid` is alive and is the process that had start time `ticks`."""
    if pid <= 0:
        return False
    now = start_time_ticks(pid)
    if now is None:
        return False
    if _is_zombie(pid):
        return False
    return ticks is None or now == ticks


def _is_zombie(pid: int) -> bool:
    return process_state(pid) in ("Z", "")


def all_threads_stopped(pid: int) -> bool:
    """Every thread of PID stopped (state T or t), or the process gone: a group stop
    (SIGSTOP) is complete only once each thread has taken it."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    # a thread that ended reads "": as good as stopped
    return all(_stat_state(task / "stat") in ("T", "t", "") for task in tasks)


def process_state(pid: int) -> str:
    """The state letter of /proc/PID/stat (R, S, D, T stopped, Z zombie...); "" when the
    process is gone."""
    return _stat_state(Path(f"/proc/{pid}/stat"))


def _stat_state(path: Path) -> str:
    """The state field of a /proc stat file ("" when it cannot be read)."""
    try:
        stat = path.read_text()
    except OSError:
        return ""
    return stat[stat.rfind(")") + 2 :].split()[0]


def signal_process(pid: int, ticks: int | None, sig: signal.Signals) -> bool:
    """Send `sig` if `pid` is still the process started at `ticks`; False when it is gone.

    The process may exit between the identity check and the kill: that race is the
    normal end of a stopping node, not an error.
    """
    if not is_same_process(pid, ticks):
        return False
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


def terminate(pid: int, ticks: int | None, *, grace_s: float) -> None:
    """SIGTERM, wait up to grace_s, then SIGKILL. Silent when already gone."""
    if not signal_process(pid, ticks, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_same_process(pid, ticks):
            return
        time.sleep(0.1)
    kill_now(pid, ticks)


def kill_now(pid: int, ticks: int | None) -> None:
    """SIGKILL and wait (up to 10 s) until the process is gone."""
    if not signal_process(pid, ticks, signal.SIGKILL):
        return
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and is_same_process(pid, ticks):
        time.sleep(0.05)
