"""Running an ALTER TABLE and checking that every node's schema shows it."""

from __future__ import annotations

import time

from casslab.cassandra import catalog
from casslab.cassandra.cql import Cql
from casslab.core.errors import CasslabError, CqlError
from casslab.tune.compaction import alter_statement


class ApplyError(CasslabError):
    """An ALTER TABLE failed or did not reach every node in time."""


def schema_compaction(cql: Cql, host: str, keyspace: str, table: str) -> dict[str, str]:
    """The compaction map in `host`'s own system_schema (schema tables are node-local)."""
    compaction = catalog.table_compaction(cql, keyspace, table, host)
    if compaction is None:
        raise ApplyError(f"{keyspace}.{table} is not in the schema of node {host}")
    return compaction


def apply_compaction(cql: Cql, hosts: list[str], keyspace: str, table: str,
                     compaction: dict[str, str], *, timeout_s: float = 60.0) -> str:
    """ALTER the table to `compaction` (the full map) and wait until every node's schema
    has it. Returns the statement; raises ApplyError naming the nodes that lag."""
    stmt = alter_statement(keyspace, table, compaction)
    try:
        cql.execute(stmt, timeout_s=timeout_s)
    except CqlError as exc:
        raise ApplyError(f"{stmt}: {exc}") from exc
    deadline = time.monotonic() + timeout_s
    want = {k: v for k, v in compaction.items() if k != "class"}
    while True:
        lagging = []
        for host in hosts:
            try:
                seen = schema_compaction(cql, host, keyspace, table)
            except CqlError as exc:
                lagging.append(f"{host} ({exc.kind})")
                continue
            if any(seen.get(k) != v for k, v in want.items()):
                lagging.append(host)
        if not lagging:
            return stmt
        if time.monotonic() > deadline:
            raise ApplyError(f"{keyspace}.{table}: after {timeout_s:g} s the new compaction "
                             f"options are not in the schema of {', '.join(lagging)}")
        time.sleep(0.5)
