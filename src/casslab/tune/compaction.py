"""Compaction maps: strategy names, effective TWCS options, the CQL of an ALTER TABLE.

ALTER TABLE ... WITH compaction = {...} replaces the whole map, so every statement
built here carries the class and every option of the table's current map, with the
rule's options laid over them. Pure code.
"""

from __future__ import annotations

import re

from casslab.cassandra.compaction import cql_map, short_name
from casslab.tune.rules import STRATEGIES, WINDOW_UNITS_MIN

# What TWCS uses for an option absent from the table's map (Cassandra 5.0).
TWCS_DEFAULTS = {"compaction_window_size": "1", "compaction_window_unit": "DAYS",
                 "min_threshold": "4", "max_threshold": "32"}
_PLAIN_IDENT = re.compile(r"[a-z_][a-z0-9_]*")


def strategy_of(class_name: str) -> str:
    """'twcs' / 'ucs' for those strategies (short or fully qualified), else the class's
    short name in lower case (e.g. 'sizetieredcompactionstrategy')."""
    short = short_name(class_name)
    if short in STRATEGIES:
        return short
    return class_name.rsplit(".", 1)[-1].lower()


def effective_options(strategy: str, compaction: dict[str, str]) -> dict[str, str]:
    """The table's options including the defaults the strategy applies when unset."""
    base = dict(TWCS_DEFAULTS) if strategy == "twcs" else {}
    return {**base, **{k: str(v) for k, v in compaction.items() if k != "class"}}


def build_compaction_map(current: dict[str, str], options: dict[str, str]) -> dict[str, str]:
    """The full map for ALTER TABLE: `class` and every current option, then `options`.

    Raises ValueError when `current` has no class (not a map read from system_schema).
    """
    if "class" not in current:
        raise ValueError("the current compaction map has no 'class'")
    out = {"class": str(current["class"])}
    out.update({k: str(v) for k, v in current.items() if k != "class"})
    out.update({k: str(v) for k, v in options.items()})
    return out


def differences(current: dict[str, str], options: dict[str, str],
                strategy: str) -> dict[str, tuple[str | None, str]]:
    """Options whose value would change: name -> (effective current value, new value)."""
    eff = effective_options(strategy, current)
    out: dict[str, tuple[str | None, str]] = {}
    for k, v in options.items():
        cur = eff.get(k)
        if cur is None or _norm(cur) != _norm(v):
            out[k] = (cur, v)
    return out


def _norm(value: str) -> str:
    text = str(value).strip()
    return text.upper() if text.upper() in WINDOW_UNITS_MIN or text.lower() in (
        "true", "false") else text


def quote_ident(name: str) -> str:
    """A CQL identifier: as is when lower-case plain, else double-quoted."""
    if _PLAIN_IDENT.fullmatch(name):
        return name
    return '"' + name.replace('"', '""') + '"'


def alter_statement(keyspace: str, table: str, compaction: dict[str, str]) -> str:
    """ALTER TABLE ks.table WITH compaction = {full map}."""
    return (f"ALTER TABLE {quote_ident(keyspace)}.{quote_ident(table)} WITH compaction = "
            f"{cql_map(compaction)}")
