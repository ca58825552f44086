"""Cassandra's compaction strategies as casslab names them: the one definition.

Specs, the tuner, the load phase and the rule learner all name strategies by their short
names (`stcs`, `lcs`, `ucs`, `twcs`) and write `twcs:SIZE:UNIT` for a TWCS window;
Cassandra wants the class name in a map that carries every option (ALTER TABLE replaces
the whole map). Pure code.
"""

from __future__ import annotations

import re

# Short name -> class name (org.apache.cassandra.db.compaction.<class>; Cassandra accepts
# the short class name in a compaction map).
STRATEGY_CLASSES = {"stcs": "SizeTieredCompactionStrategy",
                    "lcs": "LeveledCompactionStrategy",
                    "ucs": "UnifiedCompactionStrategy",
                    "twcs": "TimeWindowCompactionStrategy"}
SHORT_NAMES = tuple(STRATEGY_CLASSES)
WINDOW_UNITS = ("MINUTES", "HOURS", "DAYS")
LEVEL_SYNTAX = "stcs, lcs, ucs, twcs or twcs:SIZE:MINUTES|HOURS|DAYS"
_WINDOW = re.compile(r"(\d+):(MINUTES|HOURS|DAYS)")


def class_name(short: str) -> str:
    """The class name of a short strategy name; KeyError for an unknown one."""
    return STRATEGY_CLASSES[short]


def short_name(name: str) -> str | None:
    """The short name of a class (short or fully qualified), None for another class."""
    tail = name.rsplit(".", 1)[-1]
    for short, cls in STRATEGY_CLASSES.items():
        if tail == cls:
            return short
    return None


def level_options(level: str) -> dict[str, str]:
    """A level written as `stcs`, `lcs`, `ucs`, `twcs` or `twcs:SIZE:UNIT` as the map
    Cassandra takes (`class` and the window options).

    Raises ValueError naming what is valid.
    """
    name, _, rest = level.strip().partition(":")
    window = _WINDOW.fullmatch(rest)
    if name not in STRATEGY_CLASSES or (rest and not (name == "twcs" and window)):
        raise ValueError(f"{level!r} is not a compaction (valid: {LEVEL_SYNTAX})")
    opts = {"class": STRATEGY_CLASSES[name]}
    if window:
        opts |= {"compaction_window_size": window.group(1),
                 "compaction_window_unit": window.group(2)}
    return opts


def is_level(level: str) -> bool:
    """True when `level` is a short name or a TWCS window level."""
    try:
        level_options(level)
    except ValueError:
        return False
    return True


def cql_map(values: dict[str, str]) -> str:
    """A CQL map literal of string keys and values: {'class': '...', ...}."""
    def lit(s: str) -> str:
        return "'" + str(s).replace("'", "''") + "'"
    return "{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in values.items()) + "}"
