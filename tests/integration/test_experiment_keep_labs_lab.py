"""`design.labs: keep` on real 1-node labs: an interleaved campaign over a lab factor
builds each lab once, pauses the one not in use (its JVM stopped: state T) and resumes it
when its cells come again (the data recreated), and leaves no lab behind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec
from casslab.testbed.netlab import open_lab

from labtools import leftovers

pytestmark = pytest.mark.integration

LAB = "itkeep"
SPEC = """\
name: itkeep
lab: {nodes: 1, profile: container}
workload: {name: ycsb-c, records: 200}
factors:
  - {name: set.concurrent_reads, levels: [16, 32]}
design: {order: interleaved, trials: 3, labs: keep, seed: 2}
stop: {ops: 200, timeout_s: 60}
metrics: {interval_s: 1, cql: false}
"""


def _jvm_state(lab: str) -> str:
    """The /proc state letter of the lab's one node (T: stopped)."""
    state = open_lab(lab, home=default_home(), cache=default_cache()).state()
    stat = Path(f"/proc/{state.nodes[0].pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0]


def test_each_lab_is_built_once_and_paused_while_the_other_runs(tmp_path: Path) -> None:
    spec = parse_spec(SPEC, source="itkeep")
    results = tmp_path / "results"
    events: list[Event] = []
    other_state: list[tuple[str, str]] = []  # (lab in use, the other lab's JVM state)

    def on_event(e: Event) -> None:
        events.append(e)
        if e.kind == "trial-start":
            using = runner.lab.name
            other = LAB + "-2" if using == LAB else LAB
            other_state.append((using, _jvm_state(other) if
                                open_lab(other, home=default_home(),
                                         cache=default_cache()).exists() else "-"))

    runner = CampaignRunner(spec, results, home=default_home(), cache=default_cache(),
                            lab_name=LAB, on_event=on_event)
    try:
        outcome = runner.run()
    finally:
        assert not leftovers(LAB) and not leftovers(LAB + "-2")
    assert outcome.failed == 0 and outcome.done == 6
    builds = [e.message for e in events if e.message.startswith("building lab")]
    assert len(builds) == 2, builds
    resumes = [e.message for e in events if e.message.startswith("resuming lab")]
    assert len(resumes) >= 2, [e.message for e in events if e.kind == "lab"]
    # while one lab runs trials after the other was built, the other's JVM is stopped
    both = [s for u, s in other_state if s != "-"]
    assert both and set(both) == {"T"}, other_state
    with sqlite3.connect(results / "results.db") as db:
        resets = [r for (r,) in db.execute("SELECT reset FROM trials WHERE status = 'done' "
                                           "ORDER BY seq")]
    assert len(resets) == 6
    # the reset done: a build for each lab, then resumes with the keyspace recreated
    assert resets.count("rebuild") == 2 and resets.count("recreate") >= 2, resets


def test_keep_data_resumes_a_lab_with_its_data_instead_of_loading_it_again(
        tmp_path: Path) -> None:
    spec = parse_spec(SPEC.replace("labs: keep", "labs: keep-data"), source="itkeepd")
    events: list[Event] = []
    runner = CampaignRunner(spec, tmp_path / "results", home=default_home(),
                            cache=default_cache(), lab_name=LAB + "d", on_event=events.append)
    try:
        outcome = runner.run()
    finally:
        assert not leftovers(LAB + "d") and not leftovers(LAB + "d-2")
    assert outcome.failed == 0 and outcome.done == 6
    messages = [e.message for e in events]
    resumes = [m for m in messages if m.startswith("resuming lab")]
    kept = [m for m in messages if m.endswith("its data kept (design.labs: keep-data)")]
    assert len(resumes) >= 2 and len(kept) == len(resumes), messages
    # one load phase per lab build, none on a resume
    assert sum(m.startswith("loading the data") for m in messages) == 2, messages
    with sqlite3.connect(tmp_path / "results" / "results.db") as db:
        resets = [r for (r,) in db.execute("SELECT reset FROM trials WHERE status = 'done' "
                                           "ORDER BY seq")]
    # the resumed trials ran on the keyspace kept (a missing table fails a trial)
    assert resets.count("rebuild") == 2 and resets.count("recreate") == 0, resets
