"""Reading what the tuner decides on: tables, compaction maps, TTLs, and rates per node."""

from __future__ import annotations

from dataclasses import dataclass

from casslab.cassandra import catalog
from casslab.cassandra.cql import Cql
from casslab.core.errors import CasslabError, CqlError, UsageError
from casslab.tune.compaction import strategy_of
from casslab.tune.decide import TableObservation

TUNABLE = ("twcs", "ucs")


class KeyspaceError(UsageError):
    """The keyspace to tune does not exist or has nothing to tune."""


class ObserveError(CasslabError):
    """No node answered the rate queries."""


@dataclass(frozen=True)
class TableSchema:
    keyspace: str
    table: str
    strategy: str
    compaction: dict[str, str]
    ttl_s: int


@dataclass(frozen=True)
class Rates:
    """One table's coordinator rates summed over the nodes that answered."""

    reads_s: float = 0.0
    writes_s: float = 0.0
    read_count: int = 0
    write_count: int = 0


@dataclass(frozen=True)
class RateSnapshot:
    by_table: dict[str, Rates]
    nodes_read: list[str]
    node_errors: dict[str, str]


def keyspace_tables(cql: Cql, keyspace: str) -> list[TableSchema]:
    """Every table of `keyspace` with TWCS or UCS compaction (others are left out).

    Raises KeyspaceError when the keyspace does not exist, naming the ones that do.
    """
    names = catalog.keyspaces(cql)
    if keyspace not in names:
        user = sorted(n for n in names if not n.startswith("system"))
        raise KeyspaceError(f"keyspace '{keyspace}' does not exist (keyspaces: "
                            f"{', '.join(user) or 'none besides system ones'})")
    out = []
    for row in catalog.tables(cql, keyspace):
        strategy = strategy_of(row.compaction.get("class", ""))
        if strategy in TUNABLE:
            out.append(TableSchema(keyspace, row.table, strategy, row.compaction,
                                   row.default_ttl_s))
    return out


RATE_QUERY = ("SELECT table_name, count, per_second FROM system_views.{view} "
              "WHERE keyspace_name = %s")


def read_rates(cql: Cql, hosts: list[str], keyspace: str) -> RateSnapshot:
    """Read and write rates per table from coordinator_read_latency and
    coordinator_write_latency on EVERY node (each asked directly) and summed.

    per_second is the node's five-minute exponentially weighted rate. A node that does
    not answer is recorded in `node_errors`; ObserveError when none answers.
    """
    totals: dict[str, list[float]] = {}
    ok: list[str] = []
    errors: dict[str, str] = {}
    for host in hosts:
        try:
            node: dict[str, list[float]] = {}
            for col, view in ((0, "coordinator_read_latency"),
                              (1, "coordinator_write_latency")):
                for table, count, per_s in cql.execute(RATE_QUERY.format(view=view), [keyspace],
                                                       host=host).rows:
                    acc = node.setdefault(str(table), [0.0, 0.0, 0.0, 0.0])
                    acc[col] += float(per_s or 0.0)
                    acc[col + 2] += float(count or 0)
        except CqlError as exc:
            errors[host] = str(exc)
            continue
        ok.append(host)
        for table, acc in node.items():
            t = totals.setdefault(table, [0.0, 0.0, 0.0, 0.0])
            for i in range(4):
                t[i] += acc[i]
    if not ok:
        detail = "; ".join(f"{h}: {e}" for h, e in errors.items())
        raise ObserveError(f"no node answered the rate queries ({detail})")
    return RateSnapshot({t: Rates(v[0], v[1], int(v[2]), int(v[3])) for t, v in totals.items()},
                        ok, errors)


RATE_SOURCES = ("ewma5m", "delta")


def delta_rates(prev: Rates, cur: Rates, elapsed_s: float) -> Rates:
    """Rates from two snapshots' counts: operations per second over the interval between
    them (a node restart resets counts: negative deltas count as 0)."""
    if elapsed_s <= 0:
        return cur
    return Rates(max(0, cur.read_count - prev.read_count) / elapsed_s,
                 max(0, cur.write_count - prev.write_count) / elapsed_s,
                 cur.read_count, cur.write_count)


def observe(cql: Cql, hosts: list[str], keyspace: str, *,
            previous: tuple[float, RateSnapshot] | None = None,
            now_s: float = 0.0) -> tuple[list[TableObservation], RateSnapshot]:
    """The tuner's inputs for every TWCS/UCS table of `keyspace`.

    With `previous` (its time and snapshot), rates are count deltas over the interval
    since then ("delta" source) instead of the five-minute rates ("ewma5m")."""
    tables = keyspace_tables(cql, keyspace)
    snap = read_rates(cql, hosts, keyspace)
    obs = []
    for t in tables:
        r = snap.by_table.get(t.table, Rates())
        if previous is not None and previous[1].nodes_read == snap.nodes_read:
            r = delta_rates(previous[1].by_table.get(t.table, Rates()), r, now_s - previous[0])
        obs.append(TableObservation(t.keyspace, t.table, t.strategy, t.compaction, t.ttl_s,
                                    r.reads_s, r.writes_s, len(snap.nodes_read), len(hosts)))
    return obs, snap


def cluster_hosts(cql: Cql) -> list[str]:
    """Every node's client address, from system.local and system.peers_v2."""
    hosts = [str(r[0]) for r in cql.execute("SELECT rpc_address FROM system.local").rows]
    for (addr,) in cql.execute("SELECT native_address FROM system.peers_v2").rows:
        if addr and str(addr) not in hosts:
            hosts.append(str(addr))
    return hosts
