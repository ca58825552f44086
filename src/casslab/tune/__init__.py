"""casslab.tune: the online compaction tuner (TWCS, UCS) and its rule tables.

rules (rule tables, nearest point, interpolation) and decide (hysteresis) are pure;
observe reads schema and per-node rates, apply runs the ALTER, loop ties them up,
learn builds a rules table for this hardware from a campaign.
"""

from casslab.tune.decide import Decision, Policy, TableMemory, TableObservation, decide
from casslab.tune.rules import RulePoint, RulesTable, load_rules, parse_rules, seed003_rules

__all__ = ["Decision", "Policy", "RulePoint", "RulesTable", "TableMemory", "TableObservation",
           "decide", "load_rules", "parse_rules", "seed003_rules"]
