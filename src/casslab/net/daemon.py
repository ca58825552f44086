"""Start, signal and stop casslab-netem inside a lab's namespace."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import casslab
from casslab.core.errors import CommandError, PrerequisiteError
from casslab.net.errors import NetError
from casslab.system import netns as netns_mod
from casslab.system.process import is_same_process, run, start_time_ticks, terminate

READY_TIMEOUT_S = 10.0
RT_PRIORITY = 50


def netem_binary() -> Path:
    """$CASSLAB_NETEM_BIN, else <repo>/target/release/casslab-netem, else on PATH."""
    env = os.environ.get("CASSLAB_NETEM_BIN")
    if env:
        path = Path(env)
        if not path.is_file():
            raise PrerequisiteError(f"CASSLAB_NETEM_BIN={env}: no such file")
        return path
    repo = Path(casslab.__file__).resolve().parents[2]
    built = repo / "target" / "release" / "casslab-netem"
    if built.is_file():
        return built
    found = shutil.which("casslab-netem")
    if found:
        return Path(found)
    raise PrerequisiteError(f"casslab-netem not found at {built} or on PATH: build it with "
                            "`cargo build --release -p casslab-netem` (or set CASSLAB_NETEM_BIN)")


@dataclass
class DaemonInfo:
    pid: int
    start_ticks: int | None
    realtime: bool

    def alive(self) -> bool:
        return is_same_process(self.pid, self.start_ticks)


def _can_realtime(netns: str) -> bool:
    try:
        run([*netns_mod.exec_prefix(netns), "chrt", "-f", str(RT_PRIORITY), "true"])
        return True
    except (CommandError, FileNotFoundError):
        return False


def start(netns: str, net_dir: Path, queue_num: int) -> DaemonInfo:
    """Start the daemon in `netns` (SCHED_FIFO 50 when allowed) and wait until it is bound.

    Raises NetError with the daemon's log tail when it exits or is not ready in time.
    """
    binary = netem_binary()
    log = net_dir / "netem.log"
    mark = log.stat().st_size if log.exists() else 0
    realtime = _can_realtime(netns)
    cmd = [*netns_mod.exec_prefix(netns),
           *(["chrt", "-f", str(RT_PRIORITY)] if realtime else []),
           str(binary), "run", "--queue-num", str(queue_num),
           "--config", str(net_dir / "netem.json"),
           "--stats-file", str(net_dir / "netem-stats.json")]
    with log.open("ab") as fh:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh,
                                start_new_session=True)
    # nsenter and chrt exec the daemon: the pid is the daemon's.
    info = DaemonInfo(proc.pid, start_time_ticks(proc.pid), realtime)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = _read_from(log, mark)
        if '"event":"ready"' in text:
            return info
        code = proc.poll()
        if code is not None:
            raise NetError(f"casslab-netem exited with code {code} while starting in {netns}; "
                           f"log {log}:\n{_tail(_read_from(log, mark))}")
        time.sleep(0.02)
    stop(info)
    raise NetError(f"casslab-netem not ready after {READY_TIMEOUT_S:.0f} s in {netns}; "
                   f"log {log}:\n{_tail(_read_from(log, mark))}")


def reload(info: DaemonInfo) -> None:
    """SIGHUP: the daemon rereads its config (held packets keep their due times)."""
    if not info.alive():
        raise NetError(f"casslab-netem (pid {info.pid}) is not running")
    try:
        os.kill(info.pid, signal.SIGHUP)
    except ProcessLookupError:  # it exited since the check above
        raise NetError(f"casslab-netem (pid {info.pid}) is not running") from None


def stop(info: DaemonInfo) -> None:
    """SIGTERM (the daemon releases every held packet), SIGKILL after 3 s."""
    terminate(info.pid, info.start_ticks, grace_s=3.0)


def _read_from(log: Path, mark: int) -> str:
    try:
        with log.open("rb") as fh:
            fh.seek(mark)
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _tail(text: str, lines: int = 10) -> str:
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty)"
