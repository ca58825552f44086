"""One node's process: start it inside its cgroup and namespace, watch its log.

Readiness is checked in layers, as ccm does: the process is alive, then its log
says it listens for CQL (only lines written after our mark count).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path

from casslab.core.errors import NodeStartError
from casslab.system.process import is_same_process, start_time_ticks

CQL_READY = re.compile(r"Starting listening for CQL clients")
# Where the reaper writes how the node's process ended (its parent alone learns that):
# beside the process's stdout log, read by casslab.lab.health.
EXIT_FILE = "exit-status.json"
# Lines worth showing first when a node died: Cassandra's own reason for exiting.
_FATAL = re.compile(r"(ERROR|Exception|Exiting|Unable to|Invalid yaml|OutOfMemory)")
# The reapers this process runs, by (pid, start ticks). A killed node's reaper still has
# its exit file to write once kill returns, so whoever stops a node joins the reaper
# before the node's directory can be wiped under it. Threads are the process's, so this
# table is too: a node another process started has no entry, and nothing to wait for.
_reapers: dict[tuple[int, int | None], threading.Thread] = {}
_reapers_lock = threading.Lock()


def spawn(
    command: list[str], *, netns_prefix: list[str], cgroup_procs: list[str], stdout_log: Path
) -> tuple[int, int | None]:
    """Start `command` detached (own session), inside the cgroups and namespace given.

    The shell joins the cgroups with its own pid and then execs, so the JVM is in
    the cgroup from its first instruction and keeps that pid. Returns (pid, ticks).
    """
    join = "".join(f'echo $$ > "{p}" && ' for p in cgroup_procs)
    script = f'{join}exec "$@"'
    full = ["sh", "-c", script, "casslab-node", *netns_prefix, *command]
    with stdout_log.open("ab") as out:
        proc = subprocess.Popen(
            full,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    ticks = start_time_ticks(proc.pid)
    # Reap it in the background if it dies while this process lives (tests, `up`, a
    # campaign), and keep its exit status: nobody else can tell a kill -9 from a crash.
    reaper = threading.Thread(target=_reap, args=(proc, ticks, stdout_log.parent / EXIT_FILE),
                              daemon=True)
    with _reapers_lock:
        _reapers[(proc.pid, ticks)] = reaper
    reaper.start()
    return proc.pid, ticks


def wait_recorded(pid: int, ticks: int | None, *, timeout_s: float = 10.0) -> None:
    """Wait until this process's reaper of the node (pid, ticks) has written its exit
    file; at once when this process did not start it or it is recorded already."""
    with _reapers_lock:
        reaper = _reapers.get((pid, ticks))
    if reaper is not None:
        reaper.join(timeout_s)


def _reap(proc: subprocess.Popen[bytes], ticks: int | None, path: Path) -> None:
    """Wait for the node's process and record its exit status (a negative returncode: the
    signal that killed it) with the pid and start ticks that identify it."""
    code = proc.wait()
    record = {"pid": proc.pid, "start_ticks": ticks, "returncode": code, "at": time.time()}
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(record))
        tmp.replace(path)
    except OSError:
        pass  # a wiped lab directory: nobody is left to ask
    finally:
        with _reapers_lock:
            _reapers.pop((proc.pid, ticks), None)


def log_mark(path: Path) -> int:
    """The log's current size: a later wait only reads lines written after it."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log, fatal lines first when there are any."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return ""
    fatal = [ln for ln in text[-400:] if _FATAL.search(ln)][-5:]
    tail = text[-lines:]
    picked = fatal + [ln for ln in tail if ln not in fatal]
    return "\n".join(picked)


def wait_for_log(
    *,
    name: str,
    log: Path,
    stdout_log: Path,
    pattern: re.Pattern[str],
    mark: int,
    pid: int,
    ticks: int | None,
    deadline: float,
) -> None:
    """Block until `pattern` appears in `log` after `mark`.

    Raises NodeStartError when the process exits or the deadline (time.monotonic)
    passes, with the log's tail in the message.
    """
    while True:
        if _log_matches(log, mark, pattern):
            return
        if not is_same_process(pid, ticks):
            # The JVM's own complaints (bad option, OOM kill) land in stdout, Cassandra's in
            # system.log: show both.
            tail = "\n".join(t for t in (log_tail(stdout_log, 5), log_tail(log)) if t)
            raise NodeStartError(f"{name} (pid {pid}) exited during start; last log lines:\n{tail}")
        if time.monotonic() > deadline:
            raise NodeStartError(
                f"{name} did not log '{pattern.pattern}' in time; last log lines:\n{log_tail(log)}"
            )
        time.sleep(0.25)


def _log_matches(log: Path, mark: int, pattern: re.Pattern[str]) -> bool:
    try:
        with log.open("rb") as f:
            f.seek(mark)
            return pattern.search(f.read().decode(errors="replace")) is not None
    except FileNotFoundError:
        return False
