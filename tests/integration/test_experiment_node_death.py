"""A real campaign (1-node lab, 8 short trials) whose only node's JVM is killed with
kill -9 twice: once in the middle of a trial's load, once right after a trial ended.
The campaign names each death with its cause, restarts the node, reruns the trial,
warmed up again (unstored) before the rerun, ends with every trial done, and its results
record both restarts."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec
from casslab.system.process import is_same_process
from casslab.testbed import open_lab

from labtools import CASSLAB, leftovers

LAB = "itexp-death"
SPEC = """\
name: itexp-death
lab: {nodes: 1, profile: host, max_restarts: 2}
workload: {name: ycsb-a, records: 300}
factors:
  - {name: in_flight, levels: [1, 4]}
design: {trials: 3, warmup_trials: 1, seed: 2}
stop: {duration_s: 4, timeout_s: 30}
metrics: {interval_s: 0.5}
"""
KILLED = "killed by signal 9 (SIGKILL)"
# The 3rd trial's JVM dies this long after the trial started (its load runs 4 s); the
# node is killed again in the runner's thread as the 5th trial-end is reported (after
# its commit, before the runner looks at the nodes again).
KILL_AFTER_S = 1.5

pytestmark = pytest.mark.integration


def kill_node() -> int:
    """kill -9 the lab's node1 JVM and wait until it is gone (a signal is delivered, and a
    JVM torn down, a moment after kill returns); its pid."""
    node = open_lab(LAB, home=default_home(), cache=default_cache()).state().nodes[0]
    os.kill(node.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while is_same_process(node.pid, node.start_ticks):
        assert time.monotonic() < deadline, f"node1 (pid {node.pid}) outlived SIGKILL"
        time.sleep(0.01)
    return node.pid


class Killer:
    """Kills the node from the runner's events: during the 3rd trial's load, at the 5th
    trial end (a rerun counts: its start and end are reported too)."""

    def __init__(self) -> None:
        self.starts = 0
        self.ends = 0
        self.killed: list[tuple[str, int]] = []
        self.events: list[Event] = []
        self.threads: list[threading.Thread] = []

    def __call__(self, e: Event) -> None:
        self.events.append(e)
        if e.kind == "trial-start":
            self.starts += 1
            if self.starts == 3:
                label = e.message.removesuffix(" (warm-up)")
                t = threading.Thread(target=self._kill_later, args=(label,))
                t.start()
                self.threads.append(t)
        elif e.kind == "trial-end":
            self.ends += 1
            if self.ends == 5:
                label = e.message.split(":")[0].removesuffix(" (warm-up)")
                self.killed.append((label, kill_node()))

    def _kill_later(self, label: str) -> None:
        time.sleep(KILL_AFTER_S)
        self.killed.append((label, kill_node()))


def test_a_node_killed_mid_campaign_is_named_restarted_and_its_trial_rerun(
        tmp_path: Path) -> None:
    spec = parse_spec(SPEC, source="node-death")
    results = tmp_path / "results"
    killer = Killer()
    try:
        outcome = CampaignRunner(spec, results, home=default_home(), cache=default_cache(),
                                 lab_name=LAB, on_event=killer).run()
        for t in killer.threads:
            t.join()
        messages = [e.message for e in killer.events]
        log = "\n".join(messages)
        assert len(killer.killed) == 2, log
        assert (outcome.total, outcome.done, outcome.failed) == (8, 8, 0), log
        first, second = (label for label, _pid in killer.killed)
        for label, n in ((first, 1), (second, 2)):
            assert (f"node1 died during trial {label}: {KILLED}; restarting it (waiting at most "
                    f"180 s, restart {n} of at most 2)") in messages, log
            assert f"trial {label}: running it again after the restart" in messages, log
            # both are kept trials: not measured on the restarted, cold JVM
            cell = label.split(" #")[0]
            assert (f"{cell}: warm-up 1/1 again, not stored (lab node restart before a kept "
                    "trial)") in messages, log
        assert "contact point is empty" not in log

        conn = sqlite3.connect(results / "results.db")
        rows = conn.execute(
            "SELECT c.key || ' #' || t.trial_no, t.status, t.attempts, r.node, r.cause, "
            "r.found, r.ok, r.duration_s FROM node_restarts r JOIN trials t ON "
            "t.id = r.trial_id JOIN cells c ON c.id = t.cell_id ORDER BY r.at").fetchall()
        statuses = conn.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall()
        summaries = conn.execute("SELECT count(DISTINCT trial_id) FROM summaries").fetchone()
        conn.close()
        assert statuses == [("done", 8)]
        assert summaries == (8,)
        # Each trial the node died in ran twice: its results are the rerun's.
        assert [r[:7] for r in rows] == [
            (first, "done", 2, "node1", KILLED, "during", 1),
            (second, "done", 2, "node1", KILLED, "during", 1)], rows
        assert all(0 < r[7] < 180 for r in rows)
        assert not leftovers(LAB)
    finally:
        subprocess.run([CASSLAB, "lab", "down", "--name", LAB, "--wipe"], capture_output=True,
                       check=False)
