"""A real campaign (1-node lab, 8 short trials) whose only node's JVM is killed with
kill -9 twice: once during a trial, once between two trials. The campaign names each
death with its cause, restarts the node, reruns the trial that failed, ends with every
trial done, and its results record both restarts."""

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
# node is killed again right after the 5th trial ended.
KILL_AFTER_S = 1.5

pytestmark = pytest.mark.integration


def kill_node() -> int:
    """kill -9 the lab's node1 JVM; its pid."""
    node = open_lab(LAB, home=default_home(), cache=default_cache()).state().nodes[0]
    os.kill(node.pid, signal.SIGKILL)
    return node.pid


class Killer:
    """Kills the node from the runner's events: during trial 3, after trial 5."""

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
            if self.ends == 5:  # the runner goes on after this returns: between trials
                self.killed.append(("after " + e.message.split(":")[0], kill_node()))

    def _kill_later(self, label: str) -> None:
        time.sleep(KILL_AFTER_S)
        self.killed.append(("during " + label, kill_node()))


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
        during = killer.killed[0][0].removeprefix("during ")
        assert f"node1 died during trial {during}: {KILLED}" in log
        assert f"trial {during}: running it again after the restart" in log
        assert any(m.startswith("node1 died before trial ") and m.endswith(
            f"(after the trial before it ended): {KILLED}; restarting it (waiting at most "
            "180 s, restart 2 of at most 2)") for m in messages), log
        assert "contact point is empty" not in log

        conn = sqlite3.connect(results / "results.db")
        rows = conn.execute(
            "SELECT t.seq, c.key || ' #' || t.trial_no, t.attempts, r.node, r.cause, r.found, "
            "r.ok, r.duration_s FROM node_restarts r JOIN trials t ON t.id = r.trial_id "
            "JOIN cells c ON c.id = t.cell_id ORDER BY r.at").fetchall()
        statuses = conn.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall()
        summaries = conn.execute("SELECT count(DISTINCT trial_id) FROM summaries").fetchone()
        conn.close()
        assert statuses == [("done", 8)]
        assert summaries == (8,)
        assert [(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows] == [
            (3, during, 2, "node1", KILLED, "during", 1),  # rerun: a second attempt
            (6, rows[1][1], 1, "node1", KILLED, "before", 1)], rows
        assert all(0 < r[7] < 180 for r in rows)
        assert not leftovers(LAB)
    finally:
        subprocess.run([CASSLAB, "lab", "down", "--name", LAB, "--wipe"], capture_output=True,
                       check=False)
