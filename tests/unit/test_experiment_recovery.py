"""Recovery from a dead node: the line that names it, the restart bound, and the
check-restart-rerun loop (against a stand-in lab: a real one is in
tests/integration/test_experiment_node_death.py)."""

from __future__ import annotations

import pytest

from casslab.core.errors import NodeStartError
from casslab.experiment.recovery import (
    BEFORE,
    DURING,
    NodeLostError,
    Recovery,
    Restart,
    death_message,
    restart_refusal,
)
from casslab.lab.health import DeadNode


def test_a_death_found_after_a_failed_trial_is_said_to_be_during_it() -> None:
    assert death_message("node1", "killed by signal 9 (SIGKILL)", "in_flight=1 #4",
                         DURING) == ("node1 died during trial in_flight=1 #4: killed by "
                                     "signal 9 (SIGKILL)")


def test_a_death_found_before_a_trial_is_said_to_be_between_trials() -> None:
    assert death_message("node2", "exited with status 1", "c #2", BEFORE) == (
        "node2 died before trial c #2 (after the trial before it ended): exited with status 1")


@pytest.mark.parametrize(("done", "allowed", "refused"), [
    (0, 3, False), (2, 3, False), (3, 3, True), (4, 3, True), (0, 1, False), (1, 1, True)])
def test_restarts_are_bounded_per_campaign(done: int, allowed: int, refused: bool) -> None:
    refusal = restart_refusal(done, allowed)
    assert (refusal is not None) == refused
    if refusal:
        assert f"the most lab.max_restarts ({allowed}) allows" in refusal


def test_max_restarts_0_turns_restarts_off() -> None:
    assert restart_refusal(0, 0) == "not restarted: lab.max_restarts is 0 (restarts are off)"


class StandInLab:
    """A lab whose nodes die on cue: `deaths` says, per check, which node is dead."""

    name = "stand-in"

    def __init__(self, deaths: list[list[str]], restart_fails: bool = False) -> None:
        self.deaths = deaths
        self.restart_fails = restart_fails
        self.restarted: list[tuple[str, float]] = []

    def dead_nodes(self) -> list[DeadNode]:
        names = self.deaths.pop(0) if self.deaths else []
        return [DeadNode(n, 100, "killed by signal 9 (SIGKILL)") for n in names]

    def restart_node(self, name: str, timeout_s: float) -> None:
        if self.restart_fails:
            raise NodeStartError(f"{name} did not log 'Starting listening' in time")
        self.restarted.append((name, timeout_s))


class Run:
    """One trial under recovery: what it recorded, voided and ran."""

    def __init__(self) -> None:
        self.recorded: list[Restart] = []
        self.voided: list[str] = []
        self.ran: list[bool] = []
        self.after_restart: list[bool] = []  # per attempt: a node restarted right before


def _run(lab: StandInLab, results: list[bool], max_restarts: int = 3,
         recovery: Recovery | None = None, run: Run | None = None) -> tuple[bool, Run]:
    rec = recovery or Recovery(lab, timeout_s=90.0, max_restarts=max_restarts)
    r = run or Run()

    def attempt(restarted: bool) -> bool:
        r.after_restart.append(restarted)
        r.ran.append(results.pop(0))
        return r.ran[-1]

    ok = rec.run_trial(attempt, "c #3", record=r.recorded.append, void=r.voided.append,
                       say=lambda _m: None)
    return ok, r


def test_a_trial_that_failed_with_a_node_dead_is_rerun_after_its_restart() -> None:
    lab = StandInLab([[], ["node1"], []])  # before: none; after the failure: node1
    ok, r = _run(lab, [False, True])
    assert ok and r.ran == [False, True] and r.after_restart == [False, True]
    assert lab.restarted == [("node1", 90.0)]
    assert [(x.node, x.found, x.ok) for x in r.recorded] == [("node1", DURING, True)]
    assert r.voided == ["node1 died during trial c #3: killed by signal 9 (SIGKILL)"]


def test_a_trial_that_completed_on_a_dead_node_is_voided_and_rerun() -> None:
    # A load against a dead node can end "completed": its operations failed fast.
    lab = StandInLab([[], ["node1"], []])
    ok, r = _run(lab, [True, True])
    assert ok and r.ran == [True, True]
    assert r.voided == ["node1 died during trial c #3: killed by signal 9 (SIGKILL)"]


def test_a_node_dead_before_a_trial_is_restarted_before_it_runs() -> None:
    lab = StandInLab([["node1"]])
    ok, r = _run(lab, [True])
    assert ok and r.ran == [True] and r.voided == [] and r.after_restart == [True]
    assert [(x.node, x.found) for x in r.recorded] == [("node1", BEFORE)]


def test_a_trial_that_failed_with_every_node_alive_stays_failed() -> None:
    lab = StandInLab([[], []])
    ok, r = _run(lab, [False, True])
    assert not ok and r.ran == [False] and r.recorded == [] and r.voided == []


def test_a_node_that_keeps_dying_stops_the_campaign_at_the_bound() -> None:
    lab = StandInLab([[], ["node1"], ["node1"], ["node1"]])
    run = Run()
    with pytest.raises(NodeLostError, match=r"node1 died during trial c #3: killed by signal "
                       r"9 \(SIGKILL\); not restarted: 2 restarts in this run"):
        _run(lab, [False, False, False], max_restarts=2, run=run)
    assert len(lab.restarted) == 2 and len(run.ran) == 3 and len(run.voided) == 3
    assert [x.ok for x in run.recorded] == [True, True, False]


def test_the_bound_counts_across_trials() -> None:
    lab = StandInLab([["node1"], [], ["node1"]])
    rec = Recovery(lab, timeout_s=90.0, max_restarts=1)
    assert _run(lab, [True], recovery=rec)[0]
    with pytest.raises(NodeLostError, match="not restarted: 1 restart in this run"):
        _run(lab, [True], recovery=rec)


def test_a_failed_restart_stops_the_campaign_and_is_recorded() -> None:
    lab = StandInLab([[], ["node1"]], restart_fails=True)
    run = Run()
    with pytest.raises(NodeLostError, match=r"node1 died during trial c #3: killed by signal "
                       r"9 .*; restart failed: node1 did not log"):
        _run(lab, [False], run=run)
    assert [(x.node, x.ok) for x in run.recorded] == [("node1", False)]
    assert run.recorded[0].error is not None and "restart failed" in run.recorded[0].error
    assert len(run.voided) == 1


def test_a_lab_that_cannot_name_dead_nodes_is_not_checked() -> None:
    rec = Recovery(object(), timeout_s=90.0, max_restarts=3)  # type: ignore[arg-type]
    assert not rec.run_trial(lambda _restarted: False, "c #1", record=lambda _r: None,
                             void=lambda _l: None, say=lambda _m: None)
