"""The compaction tuner as a campaign factor: `tuner: [off, seed003, seed003x<N>, rules.yaml]`.

For a trial whose level is not off, the campaign runner starts a Tuner in a thread right
before the load and stops it when the load ends; its audit records are stored with the
trial (the results' tuner_audit table). The runner (casslab.experiment) sits below this
package and knows the tuner only through experiment.beside's protocol; `casslab
experiment run` hands it a TunerBeside. TunerThread is shared with `casslab tune
compare` (tune.paired_run).

Rates come from count deltas between iterations (`rate_source="delta"`): a trial lasts
seconds to minutes, Cassandra's five-minute rate would mostly show the trial before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from casslab.cassandra.cql import CqlClient
from casslab.core.errors import CasslabError, UsageError
from casslab.experiment.beside import BesideResult, TrialSite, tuner_levels
from casslab.experiment.factors.parsers import TUNER_OFF, TUNER_VALID, time_divisor
from casslab.experiment.factors.registry import TUNER_FACTOR
from casslab.experiment.spec import CampaignSpec
from casslab.tune.audit import AuditLog
from casslab.tune.decide import Policy
from casslab.tune.loop import Tuner
from casslab.tune.rules import RulesTable, load_rules, seed003_rules

INTERVAL_S = 10.0  # between two iterations of a tuner beside a trial
MIN_CHANGE_INTERVAL_S = 30.0  # between two changes of one table
STOP_WAIT_S = 60.0  # an iteration's CQL calls time out well within this


def level_rules(level: str) -> RulesTable:
    """The rules of a tuner level other than off: the built-in `seed003`, or a rules file
    (an absolute path, as the spec keeps it). Raises UsageError naming factor, level and
    what is valid."""
    if level == "seed003":
        return seed003_rules()
    divisor = time_divisor(level)
    if divisor is not None:
        return seed003_rules(time_scale=1 / divisor)
    try:
        return load_rules(Path(level))
    except CasslabError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"factor {TUNER_FACTOR}: level {level!r}: {detail} (valid: "
                         f"{TUNER_VALID})") from None


class TunerThread:
    """A Tuner of one keyspace in a daemon thread until finish(); `take()` hands out the
    audit records written since the last take."""

    def __init__(self, hosts: list[str], netns: str | None, keyspace: str,
                 rules: RulesTable, *, audit: AuditLog, interval_s: float = INTERVAL_S,
                 policy: Policy | None = None, dry_run: bool = False,
                 name: str = "tuner") -> None:
        self.log = audit
        self.stop = threading.Event()
        self.error: CasslabError | None = None
        self._taken = 0
        pol = policy or Policy(min_interval_s=MIN_CHANGE_INTERVAL_S)

        def tune() -> None:
            try:
                with CqlClient(hosts, netns=netns) as cql:
                    Tuner(cql, hosts, keyspace, rules, audit=audit, policy=pol,
                          rate_source="delta", dry_run=dry_run,
                          ).run(interval_s=interval_s, stop=self.stop)
            except CasslabError as exc:
                self.error = exc

        self.thread = threading.Thread(target=tune, name=name, daemon=True)
        self.thread.start()

    def take(self) -> list[dict[str, Any]]:
        """The records written since the last call (the log only ever appends)."""
        records = self.log.records[self._taken:]
        self._taken += len(records)
        return list(records)

    def finish(self) -> CasslabError | None:
        """Stop the tuner and close its log; its error when it failed, else None."""
        self.stop.set()
        self.thread.join(timeout=STOP_WAIT_S)
        self.log.close()
        return self.error


class _Running:
    def __init__(self, thread: TunerThread) -> None:
        self.thread = thread

    def stop(self) -> BesideResult:
        error = self.thread.finish()
        return BesideResult(self.thread.take(), None if error is None else str(error))


class TunerBeside:
    """experiment.beside.Beside for factor `tuner`: a TunerThread on the trial's
    keyspace for the trial's load, its audit kept in memory for the results store."""

    def __init__(self, *, interval_s: float = INTERVAL_S,
                 min_change_interval_s: float = MIN_CHANGE_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self.policy = Policy(min_interval_s=min_change_interval_s)
        self._rules: dict[str, RulesTable] = {}

    def check(self, spec: CampaignSpec) -> None:
        """Read every level's rules now, so a bad rules file fails before any lab."""
        for level in tuner_levels(spec):
            self._rules[level] = level_rules(level)

    def start(self, site: TrialSite) -> _Running | None:
        level = site.tuner
        if level == TUNER_OFF:
            return None
        rules = self._rules.get(level) or level_rules(level)
        return _Running(TunerThread(list(site.hosts), site.netns, site.keyspace, rules,
                                    audit=AuditLog(None), interval_s=self.interval_s,
                                    policy=self.policy, name=f"tuner {site.label}"))
