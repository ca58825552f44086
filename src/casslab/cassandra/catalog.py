"""Questions to Cassandra's schema catalog (system_schema), written once.

Schema tables are node-local: a node answers with the schema it has applied, which is how
the tuner waits for an ALTER to reach every node (pass `host`). Map columns come back from
the CQL worker as their text form ("{'class': '...', ...}") and are parsed here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from casslab.cassandra.cql import Cql
from casslab.core.errors import CasslabError


class CatalogError(CasslabError):
    """The catalog answered something that is not what its schema promises."""


@dataclass(frozen=True)
class TableRow:
    """One table as system_schema.tables describes it (the columns casslab reads)."""

    keyspace: str
    table: str
    compaction: dict[str, str]
    default_ttl_s: int


def as_map(value: Any) -> dict[str, str]:
    """A CQL map column as a dict of strings (from the driver's map or its text form)."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise CatalogError(f"cannot read the map {value!r}") from None
    if not isinstance(value, dict):
        raise CatalogError(f"expected a map, got {value!r}")
    return {str(k): str(v) for k, v in value.items()}


def keyspaces(cql: Cql) -> list[str]:
    """Every keyspace's name, system ones included."""
    return [str(r[0]) for r in cql.execute("SELECT keyspace_name FROM "
                                           "system_schema.keyspaces").rows]


def table_names(cql: Cql, keyspace: str) -> list[str]:
    """The names of the keyspace's tables (empty for a keyspace that does not exist)."""
    return [str(r[0]) for r in cql.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s",
        [keyspace]).rows]


def tables(cql: Cql, keyspace: str) -> list[TableRow]:
    """The keyspace's tables with their compaction map and default TTL."""
    rows = cql.execute("SELECT table_name, compaction, default_time_to_live FROM "
                       "system_schema.tables WHERE keyspace_name = %s", [keyspace]).rows
    return [TableRow(keyspace, str(t), as_map(c), int(ttl or 0)) for t, c, ttl in rows]


def table_compaction(cql: Cql, keyspace: str, table: str,
                     host: str | None = None) -> dict[str, str] | None:
    """The table's compaction map as `host` (or any node) has it; None when that node's
    schema has no such table."""
    rows = cql.execute("SELECT compaction FROM system_schema.tables WHERE keyspace_name = %s "
                       "AND table_name = %s", [keyspace, table], host=host).rows
    return as_map(rows[0][0]) if rows else None
