"""A node that dies mid-campaign: name it with its cause, restart it, rerun the trial.

Before each trial and after it (whether it failed or not: a load against a dead node
can still end "completed", its operations failed fast), the lab's nodes are checked
(casslab.lab.health: a node whose process is gone, and why). Each dead node is said in
one line ("node1 died during trial in_flight=4 #3: killed by signal 9 (SIGKILL)"),
started again and waited for until the cluster sees it UN, and the restart is recorded
with the trial (results table node_restarts). A trial after which a node was found dead
is marked failed with that line (it ran, at least in part, on a dead node; one that
died right after the load ended cannot be told apart and is rerun too) and run again
after the restart. A trial that failed with every node alive stays failed (its error
is the trial's own).

Bounded, so that a node that cannot stay up does not turn a campaign into a loop:
- each restart waits at most `lab.timeout_s` (the spec's lab start timeout, 180 s by
  default) for the node to be UN again;
- at most `lab.max_restarts` restarts per run of the campaign (3 by default; 0: never
  restart, a dead node stops the campaign). A run of the same results directory (the
  resume) counts again from 0.
A node that is not restarted (the bound is reached, or the restart fails) stops the
campaign with that line as its error (exit 1); the lab is taken down, finished trials
are kept, and the failed trial is redone by the resume.

Only labs that can say which nodes died implement NodeRecovery (this machine's); a lab
of real hosts is not checked here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from casslab.core.errors import CasslabError
from casslab.testbed.base import NodeRecovery, Testbed

# When a dead node was found: before its trial started, or after its trial failed.
BEFORE, DURING = "before", "during"


class NodeLostError(CasslabError):
    """A node died and was not restarted: the campaign cannot go on."""


@dataclass(frozen=True)
class Restart:
    """One dead node found, and what was done about it."""

    node: str
    cause: str
    found: str  # BEFORE or DURING
    at: float  # time.time() when it was found
    duration_s: float  # how long the restart took (until UN), or tried for
    ok: bool
    error: str | None = None


def death_message(node: str, cause: str, label: str, found: str) -> str:
    """The line that names a dead node: when it died and why."""
    if found == DURING:
        return f"{node} died during trial {label}: {cause}"
    return f"{node} died before trial {label} (after the trial before it ended): {cause}"


def restart_refusal(done: int, allowed: int) -> str | None:
    """Why no further restart is made after `done` of `allowed`; None: one may be made."""
    if allowed <= 0:
        return "not restarted: lab.max_restarts is 0 (restarts are off)"
    if done >= allowed:
        return (f"not restarted: {done} restart{'s' if done != 1 else ''} in this run of the "
                f"campaign already, the most lab.max_restarts ({allowed}) allows")
    return None


class Recovery:
    """The campaign's watch over its lab's nodes (module docstring); counts restarts."""

    def __init__(self, lab: Testbed | NodeRecovery, *, timeout_s: float,
                 max_restarts: int) -> None:
        self.lab = lab
        self.timeout_s = timeout_s
        self.max_restarts = max_restarts
        self.restarts = 0

    def run_trial(self, attempt: Callable[[bool], bool], label: str, *,
                  record: Callable[[Restart], None], void: Callable[[str], None],
                  say: Callable[[str], None]) -> bool:
        """Check the nodes, run `attempt` (one trial: True when it is done; its argument
        says whether a node was restarted right before it), and while a node is found
        dead after it, restart the node and run it again. `record` stores each restart
        with the trial, `void` marks the trial failed with the line that names the
        death, `say` reports progress. Raises NodeLostError (after recording it) for a
        node that is not restarted."""
        ok = attempt(self._check(label, BEFORE, record, say))
        while self._check(label, DURING, record, say, void):
            say(f"trial {label}: running it again after the restart")
            ok = attempt(True)
        return ok

    def _check(self, label: str, found: str, record: Callable[[Restart], None],
               say: Callable[[str], None], void: Callable[[str], None] | None = None
               ) -> bool:
        """Restart every dead node (voiding the trial first); True when there was one."""
        if not isinstance(self.lab, NodeRecovery):
            return False
        dead = self.lab.dead_nodes()
        for d in dead:
            line = death_message(d.name, d.cause, label, found)
            if void is not None:
                void(line)
            at, t0 = time.time(), time.monotonic()
            refusal = restart_refusal(self.restarts, self.max_restarts)
            if refusal is not None:
                record(Restart(d.name, d.cause, found, at, 0.0, False, refusal))
                raise NodeLostError(f"{line}; {refusal}")
            say(f"{line}; restarting it (waiting at most {self.timeout_s:g} s, restart "
                f"{self.restarts + 1} of at most {self.max_restarts})")
            self.restarts += 1
            try:
                self.lab.restart_node(d.name, self.timeout_s)
            except CasslabError as exc:
                error = f"restart failed: {exc}"
                record(Restart(d.name, d.cause, found, at, time.monotonic() - t0, False,
                               error))
                raise NodeLostError(f"{line}; {error}") from exc
            took = time.monotonic() - t0
            record(Restart(d.name, d.cause, found, at, took, True))
            say(f"{d.name} is up again after {took:.1f} s")
        return bool(dead)
