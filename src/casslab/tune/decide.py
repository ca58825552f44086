"""The tuner's decision for one table: pure, with hysteresis.

Inputs are what observe.py read (compaction map, default TTL, read and write rates);
the output says whether to change the table, and why. Three guards keep noise from
making the tuner flap:
- a dead band on the read share: the point chosen last time is kept until another
  point is nearer by `switch_margin` (normalised distance; nearest-point rules only);
- a minimum relative change of the numeric options (window in minutes, thresholds);
- a minimum time between two changes of one table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from casslab.core.errors import UsageError
from casslab.tune.compaction import (
    build_compaction_map,
    differences,
    effective_options,
)
from casslab.tune.rules import RuleChoice, RulePoint, RulesTable, window_minutes

ACTIONS = ("change", "keep", "hold", "skip")


@dataclass(frozen=True)
class Policy:
    """Hysteresis settings. Units in names; fractions are 0..1."""

    min_interval_s: float = 300.0
    min_rel_change: float = 0.2
    switch_margin: float = 0.05
    min_rate_ops_s: float = 0.5  # below this (reads + writes) the read share is noise

    def __post_init__(self) -> None:
        for name, value in (("min_interval_s", self.min_interval_s),
                            ("min_rel_change", self.min_rel_change),
                            ("switch_margin", self.switch_margin)):
            # `not >= 0` also refuses nan; inf would freeze every table for ever.
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name}: {value} is not a finite number >= 0")

    @classmethod
    def of_options(cls, min_interval_s: float, min_change: float,
                   switch_margin: float) -> Policy:
        """The policy of `casslab tune`'s options; UsageError naming the option."""
        for option, value in (("--min-interval", min_interval_s),
                              ("--min-change", min_change),
                              ("--switch-margin", switch_margin)):
            if not (math.isfinite(value) and value >= 0):
                raise UsageError(f"{option}: {value:g} is not a finite number >= 0")
        return cls(min_interval_s, min_change, switch_margin)


@dataclass(frozen=True)
class TableObservation:
    """One table as observed: its compaction map (from system_schema) and rates summed
    over every node (per_second: the five-minute exponentially weighted rate)."""

    keyspace: str
    table: str
    strategy: str
    compaction: dict[str, str]
    ttl_s: int
    reads_s: float
    writes_s: float
    nodes_read: int = 1
    nodes_total: int = 1

    @property
    def read_share(self) -> float | None:
        total = self.reads_s + self.writes_s
        return self.reads_s / total if total > 0 else None


@dataclass
class TableMemory:
    """What the loop remembers of one table between iterations."""

    last_change_s: float | None = None
    last_point: RulePoint | None = None


@dataclass(frozen=True)
class Decision:
    table: str
    action: str  # change, keep, hold, skip
    reason: str
    inputs: dict[str, Any]
    rule: dict[str, Any] | None = None
    current: dict[str, str] = field(default_factory=dict)
    target: dict[str, str] | None = None  # the full map to ALTER to (action change/hold)
    point: RulePoint | None = None


def _numeric(key: str, options: dict[str, str]) -> float | None:
    if key == "compaction_window_size":
        return window_minutes(options)
    try:
        return float(options[key])
    except (KeyError, ValueError):
        return None


def relative_change(strategy: str, current: dict[str, str], options: dict[str, str]) -> float:
    """The largest relative change of a numeric option (a TWCS window counts in minutes);
    a changed non-numeric option counts as 1.0 (100 %)."""
    eff = effective_options(strategy, current)
    new = {**eff, **options}
    worst = 0.0
    for key in differences(current, options, strategy):
        if key == "compaction_window_unit" and "compaction_window_size" in new:
            key = "compaction_window_size"
        a, b = _numeric(key, eff), _numeric(key, new)
        if a is None or b is None:
            worst = max(worst, 1.0)
        elif a == 0:
            worst = max(worst, 1.0 if b else 0.0)
        else:
            worst = max(worst, abs(b - a) / abs(a))
    return worst


def decide(obs: TableObservation, rules: RulesTable, policy: Policy, memory: TableMemory,
           now_s: float) -> Decision:
    """What to do with one table now. Does not change `memory` (the loop does)."""
    share = obs.read_share
    inputs: dict[str, Any] = {
        "strategy": obs.strategy, "ttl_s": obs.ttl_s, "reads_s": round(obs.reads_s, 3),
        "writes_s": round(obs.writes_s, 3),
        "read_share": None if share is None else round(share, 4),
        "nodes_read": obs.nodes_read, "nodes_total": obs.nodes_total}
    name = f"{obs.keyspace}.{obs.table}"
    current = dict(obs.compaction)

    def skip(reason: str) -> Decision:
        return Decision(name, "skip", reason, inputs, current=current)

    if obs.strategy not in rules.strategies():
        return skip(f"no {obs.strategy} points in the rules "
                    f"(rules cover: {', '.join(rules.strategies())})")
    if obs.ttl_s <= 0:
        return skip("default_time_to_live is 0: the rules are indexed by the table's TTL")
    if share is None or obs.reads_s + obs.writes_s < policy.min_rate_ops_s:
        return skip(f"{obs.reads_s + obs.writes_s:.2f} ops/s (five-minute rate) is below "
                    f"{policy.min_rate_ops_s:g}: the read share would be noise")
    choice = rules.choose(obs.strategy, obs.ttl_s, share)
    choice, sticky = _dead_band(choice, rules, obs, share, policy, memory)
    rule = {"point": {"ttl_s": choice.point.ttl_s, "read_share": choice.point.read_share},
            "distance": round(choice.distance, 4), "interpolated": choice.interpolated,
            "options": choice.options, "kept_previous_point": sticky}
    diff = differences(current, choice.options, obs.strategy)
    target = build_compaction_map(current, choice.options)
    if not diff:
        return Decision(name, "keep", "the table already has the rule's options", inputs, rule,
                        current, None, choice.point)
    rel = relative_change(obs.strategy, current, choice.options)
    changes = ", ".join(f"{k} {a}->{b}" for k, (a, b) in diff.items())
    if rel < policy.min_rel_change:
        return Decision(name, "hold", f"{changes}: change of {rel:.0%} is below the minimum "
                        f"{policy.min_rel_change:.0%}", inputs, rule, current, target,
                        choice.point)
    if obs.nodes_read < obs.nodes_total:
        return Decision(name, "hold", f"{changes}: rates from {obs.nodes_read} of "
                        f"{obs.nodes_total} nodes only (a node is down: no change until every "
                        "node answers)", inputs, rule, current, target, choice.point)
    if memory.last_change_s is not None and now_s - memory.last_change_s < policy.min_interval_s:
        return Decision(name, "hold", f"{changes}: last change {now_s - memory.last_change_s:.0f}"
                        f" s ago, minimum {policy.min_interval_s:g} s", inputs, rule, current,
                        target, choice.point)
    return Decision(name, "change", changes, inputs, rule, current, target, choice.point)


def _dead_band(choice: RuleChoice, rules: RulesTable, obs: TableObservation, share: float,
               policy: Policy, memory: TableMemory) -> tuple[RuleChoice, bool]:
    last = memory.last_point
    if (rules.interpolate or last is None or last == choice.point
            or last not in rules.points.get(obs.strategy, ())):
        return choice, False
    d_last = rules.distance(last, obs.ttl_s, share)
    if d_last - choice.distance < policy.switch_margin:
        return RuleChoice(dict(last.options), last, d_last, False), True
    return choice, False


__all__ = ["ACTIONS", "Decision", "Policy", "TableMemory",
           "TableObservation", "decide", "relative_change"]
