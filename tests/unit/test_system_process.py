"""casslab.system.process: signalling a process that may already be gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from casslab.system.process import (
    all_threads_stopped,
    is_same_process,
    process_state,
    signal_process,
    start_time_ticks,
    terminate,
)


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_signal_process_stops_a_live_process() -> None:
    proc = _sleeper()
    ticks = start_time_ticks(proc.pid)
    assert signal_process(proc.pid, ticks, signal.SIGTERM) is True
    assert proc.wait(timeout=10) == -signal.SIGTERM


def test_signal_process_of_an_exited_process_is_false_not_an_error() -> None:
    proc = _sleeper()
    ticks = start_time_ticks(proc.pid)
    proc.kill()
    proc.wait(timeout=10)
    assert signal_process(proc.pid, ticks, signal.SIGTERM) is False


def test_signal_process_spares_a_process_with_another_start_time() -> None:
    proc = _sleeper()
    try:
        ticks = start_time_ticks(proc.pid)
        assert ticks is not None
        # A recycled pid: same number, other process; it must not be signalled.
        assert signal_process(proc.pid, ticks - 1, signal.SIGTERM) is False
        assert is_same_process(proc.pid, ticks)
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_terminate_of_a_zombie_returns_without_error() -> None:
    proc = _sleeper()
    ticks = start_time_ticks(proc.pid)
    proc.kill()
    # Not reaped yet: a zombie, which is already stopped.
    deadline = time.monotonic() + 10
    stat = Path(f"/proc/{proc.pid}/stat")
    while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not is_same_process(proc.pid, ticks)
    terminate(proc.pid, ticks, grace_s=0.1)
    proc.wait(timeout=10)


def test_a_stopped_process_reads_stopped_in_every_thread_until_continued() -> None:
    # python with a second thread: a group stop must reach both
    proc = subprocess.Popen([sys.executable, "-c", "import threading, time; "
                             "threading.Thread(target=time.sleep, args=(30,)).start(); "
                             "time.sleep(30)"])
    try:
        time.sleep(0.3)
        assert not all_threads_stopped(proc.pid)
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not all_threads_stopped(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert all_threads_stopped(proc.pid) and process_state(proc.pid) == "T"
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.1)
        assert not all_threads_stopped(proc.pid) and process_state(proc.pid) in ("S", "R")
    finally:
        proc.kill()
        proc.wait()
    assert process_state(proc.pid) == "" and all_threads_stopped(proc.pid)
