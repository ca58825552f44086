"""A real campaign (1-node lab, tiny trials) interrupted with Ctrl-C, killed with
kill -9, then resumed: no finished trial is lost and none is run twice."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from labtools import CASSLAB, leftovers

LAB = "itexp-resume"
SPEC = """\
name: itexp-resume
lab: {nodes: 1, profile: host}
workload: {name: ycsb-a, records: 300}
factors:
  - {name: in_flight, levels: [1, 4]}
design: {trials: 3, warmup_trials: 1, seed: 2}
stop: {ops: 300, timeout_s: 60}
"""

pytestmark = pytest.mark.integration


def done_trials(db: Path) -> dict[int, tuple[float, int]]:
    """seq -> (ended_at, attempts) of the trials marked done."""
    if not db.exists():
        return {}
    conn = sqlite3.connect(db, timeout=10)
    try:
        rows = conn.execute("SELECT seq, ended_at, attempts FROM trials WHERE status='done'")
        return {int(s): (float(e), int(a)) for s, e, a in rows}
    except sqlite3.OperationalError:
        return {}
    finally:
        conn.close()


def start(spec: Path, results: Path, log: Path) -> subprocess.Popen[str]:
    """The real command in its own session (so signals reach only it); output to a file
    so a full pipe can never block it."""
    with log.open("w") as out:
        return subprocess.Popen([CASSLAB, "experiment", "run", str(spec), "--results",
                                 str(results), "--lab", LAB], stdout=out,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                preexec_fn=_default_sigint)


def _default_sigint() -> None:
    # A test run started in the background (`make test &`) ignores SIGINT, and a child
    # inherits that: Python would then never raise KeyboardInterrupt for the Ctrl-C.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_done(db: Path, proc: subprocess.Popen[str], log: Path, at_least: int,
              timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while len(done_trials(db)) < at_least:
        assert proc.poll() is None, f"campaign ended early:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"fewer than {at_least} trials done in {timeout_s} s"
        time.sleep(0.2)


def run_state(db: Path) -> str | None:
    """The runner's last word in the database's meta table."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'run_state'").fetchone()
    return None if row is None else str(row[0])


def test_interrupt_kill_and_resume(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    results = tmp_path / "results"
    db = results / "results.db"
    try:
        # 1. Ctrl-C after the first trial: exit 130, lab down, that trial kept.
        log = tmp_path / "run1.log"
        proc = start(spec, results, log)
        wait_done(db, proc, log, 1, 240)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
        out = log.read_text()
        assert proc.returncode == 130, out
        assert "interrupted" in out
        assert not leftovers(LAB), "Ctrl-C must take the lab down"
        after_int = done_trials(db)
        assert len(after_int) >= 1
        assert run_state(db) == "interrupted"

        # 2. Resume, then kill -9 (no cleanup at all) after two more trials.
        log = tmp_path / "run2.log"
        proc = start(spec, results, log)
        wait_done(db, proc, log, len(after_int) + 2, 240)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        # Seqs 1 and 5 are the warm-ups: a resume that rebuilt the lab right before a kept
        # trial warms it up again first (not stored).
        if min(set(range(1, 9)) - set(after_int)) not in (1, 5):
            assert "warm-up 1/1 again, not stored" in log.read_text(), log.read_text()
        after_kill = done_trials(db)
        assert run_state(db) == "running"  # kill -9: nobody said otherwise; it may resume
        for seq, val in after_int.items():
            assert after_kill[seq] == val, f"trial {seq} was run again"

        # 3. Resume to the end: the lab left by kill -9 is rebuilt, finished trials skipped.
        log = tmp_path / "run3.log"
        proc = start(spec, results, log)
        proc.wait(timeout=600)
        out = log.read_text()
        assert proc.returncode == 0, out
        assert f"{len(after_kill)} already done" in out
        final = done_trials(db)
        assert len(final) == 8
        assert run_state(db) == "completed"
        for seq, val in after_kill.items():
            assert final[seq] == val, f"trial {seq} was run again"
        conn = sqlite3.connect(db)
        # each trial is summarised once: one 'ALL' row of 300 ops, same op rows for all
        per_trial = conn.execute("SELECT trial_id, count(*), sum(op = 'ALL'), "
                                 "max(CASE WHEN op = 'ALL' THEN ops END) FROM summaries "
                                 "GROUP BY trial_id").fetchall()
        assert len(per_trial) == 8
        assert len({c for _, c, _, _ in per_trial}) == 1
        assert {(a, n) for _, _, a, n in per_trial} == {(1, 300)}
        assert conn.execute("SELECT count(*) FROM trials").fetchone()[0] == 8
        assert conn.execute("SELECT count(*) FROM host_metrics").fetchone()[0] >= 8
        conn.close()
        assert not leftovers(LAB)
    finally:
        subprocess.run([CASSLAB, "lab", "down", "--name", LAB, "--wipe"], capture_output=True,
                       check=False)
