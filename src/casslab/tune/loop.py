"""The tuner's loop: observe, decide, apply (or not: dry run), audit; sleep; repeat."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from casslab.cassandra.cql import Cql
from casslab.core.errors import CasslabError, UsageError
from casslab.tune.apply import apply_compaction
from casslab.tune.audit import AuditLog
from casslab.tune.compaction import alter_statement
from casslab.tune.decide import Decision, Policy, TableMemory, decide
from casslab.tune.observe import RATE_SOURCES, KeyspaceError, RateSnapshot, observe
from casslab.tune.rules import RulesTable


class Stop(Protocol):
    """What the loop needs of a stop request: threading.Event or SignalStop."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float) -> bool: ...


class SignalStop:
    """A stop request that a signal handler may set.

    threading.Event.set() takes the event's lock; a signal arriving while the main
    thread holds that lock inside Event.wait() deadlocks the process (a SIGTERMed
    `casslab tune` hung this way under load). A plain flag polled in short sleeps
    takes no lock.
    """

    def __init__(self, poll_s: float = 0.1) -> None:
        self._set = False
        self._poll_s = poll_s

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self._set:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(self._poll_s, left))
        return self._set


@dataclass(frozen=True)
class Outcome:
    """One table's decision and what became of it."""

    decision: Decision
    statement: str | None
    applied: bool
    error: str | None = None


class Tuner:
    """Tunes the TWCS/UCS tables of one keyspace.

    cql: a connected client; hosts: every node's address (rates are read on each).
    """

    def __init__(self, cql: Cql, hosts: list[str], keyspace: str, rules: RulesTable, *,
                 policy: Policy | None = None, dry_run: bool = False,
                 audit: AuditLog | None = None, rate_source: str = "ewma5m",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cql = cql
        self.hosts = hosts
        self.keyspace = keyspace
        self.rules = rules
        self.policy = policy or Policy()
        self.dry_run = dry_run
        self.audit = audit or AuditLog(None)
        self.clock = clock
        if rate_source not in RATE_SOURCES:
            raise UsageError(f"rate source '{rate_source}' is not one of "
                             f"{', '.join(RATE_SOURCES)}")
        self.rate_source = rate_source
        self._previous: tuple[float, RateSnapshot] | None = None
        self.memory: dict[str, TableMemory] = {}
        self.iterations = 0

    def step(self) -> list[Outcome]:
        """One iteration. Raises KeyspaceError (keyspace gone or nothing to tune the first
        time), ObserveError (no node answered); an ALTER that fails is audited, not raised."""
        now = self.clock()
        obs, snap = observe(self.cql, self.hosts, self.keyspace, previous=self._previous,
                            now_s=now)
        if not obs and self.iterations == 0:
            raise KeyspaceError(f"keyspace '{self.keyspace}' has no table with TWCS or UCS "
                                "compaction to tune")
        self.iterations += 1
        if self.rate_source == "delta":
            self._previous = (now, snap)
        if self.rate_source == "delta" and self.iterations == 1:
            # Counts need two snapshots: the first iteration only records them.
            return [self._carry_out(Decision(f"{o.keyspace}.{o.table}", "skip",
                                             "rate source delta: first snapshot of the counts",
                                             {"strategy": o.strategy, "ttl_s": o.ttl_s},
                                             current=dict(o.compaction)),
                                    self.memory.setdefault(o.table, TableMemory()), now,
                                    snap.node_errors) for o in obs]
        results = []
        for o in obs:
            mem = self.memory.setdefault(o.table, TableMemory())
            d = decide(o, self.rules, self.policy, mem, now)
            results.append(self._carry_out(d, mem, now, snap.node_errors))
        return results

    def _carry_out(self, d: Decision, mem: TableMemory, now: float,
                   node_errors: dict[str, str]) -> Outcome:
        if d.point is not None and d.action in ("change", "keep"):
            mem.last_point = d.point
        stmt = error = None
        applied = False
        if d.action == "change" and d.target is not None:
            ks, _, table = d.table.partition(".")
            stmt = alter_statement(ks, table, d.target)
            if not self.dry_run:
                try:
                    apply_compaction(self.cql, self.hosts, ks, table, d.target)
                    applied = True
                except CasslabError as exc:
                    error = str(exc)
            # A dry run records the change it would have made, so its hysteresis and
            # audit trail match a live run's.
            if applied or self.dry_run:
                mem.last_change_s = now
        self.audit.write({
            "iteration": self.iterations, "keyspace": self.keyspace, "table": d.table,
            "action": d.action, "reason": d.reason, "inputs": d.inputs, "rule": d.rule,
            "current": d.current, "target": d.target, "statement": stmt,
            "applied": applied, "dry_run": self.dry_run, "error": error,
            **({"node_errors": node_errors} if node_errors else {})})
        return Outcome(d, stmt, applied, error)

    def run(self, *, interval_s: float, stop: Stop, iterations: int | None = None,
            on_step: Callable[[list[Outcome]], None] | None = None,
            on_error: Callable[[CasslabError], None] | None = None) -> int:
        """Loop until `stop` is set or `iterations` ran; returns the iterations done.

        A failed iteration after the first (a node restarting, a timeout) is reported
        through `on_error` and audited; the loop goes on. The first one raises, so a
        wrong keyspace or an unreachable cluster ends the command at once.
        """
        done = 0
        while not stop.is_set():
            try:
                out = self.step()
            except KeyspaceError:
                raise
            except CasslabError as exc:
                if done == 0:
                    raise
                self.audit.write({"iteration": self.iterations, "keyspace": self.keyspace,
                                  "action": "error", "reason": str(exc)})
                if on_error:
                    on_error(exc)
                out = []
            done += 1
            if on_step:
                on_step(out)
            if iterations is not None and done >= iterations:
                break
            stop.wait(interval_s)
        return done


@contextlib.contextmanager
def stop_on_signals(stop: SignalStop) -> Iterator[None]:
    """Set `stop` on SIGINT or SIGTERM while inside (main thread only; elsewhere a no-op)."""
    def handler(_sig: int, _frame: FrameType | None) -> None:
        stop.set()

    old: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
