"""Link delays on a real 3-node lab (RF 3): a write at CL ONE pays the client's round
trip, at CL ALL also the coordinator's round trip to the other replicas.

Known gap (reported to the lead): Cassandra 5.0.6 here does NOT bind its outbound
internode sockets to listen_address. node1's connection to node2 goes
127.0.1.2:ephemeral -> 127.0.1.2:7000 (source = the destination's own address, the
kernel's choice for a local route), so per-pair rules cannot tell which node sent it
and node<->node delays do not reach Cassandra's traffic yet. The node-delay assertion
is therefore a strict xfail: it flips to a failure (remove the mark) once nodes send
from their own address.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from casslab import net
from casslab.lab import Lab
from casslab.lab.cql import CqlClient
from casslab.net import NetSpec

CLIENT_MS = 15.0  # one-way, client <-> every node
NODE_MS = 10.0  # one-way, node <-> node
WRITES = 60


def _median_write_ms(cql: CqlClient, consistency: str, start: int) -> float:
    times = []
    for i in range(start, start + WRITES):
        t = time.perf_counter()
        cql.execute("INSERT INTO itnet.kv (k, v) VALUES (%s, %s)", [i, "x"],
                    consistency=consistency, host="127.0.1.1")
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _measure(lab3: Lab) -> tuple[float, float, float, float]:
    """(CL ONE, CL ALL) median write ms before and after the delays."""
    state = lab3.state()
    assert state.netns is not None
    lab_dir = Path(state.directory)
    addrs = [n.address for n in state.nodes]
    # Clean links first, so the namespace is prepared (clients send from 127.0.0.1)
    # before the client below connects.
    net.apply(lab_dir, state.netns, addrs, NetSpec())
    try:
        with lab3.cql() as cql:
            cql.execute("CREATE KEYSPACE IF NOT EXISTS itnet WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}",
                        consistency="ALL")
            cql.execute("CREATE TABLE IF NOT EXISTS itnet.kv (k int PRIMARY KEY, v text)",
                        consistency="ALL")
            _median_write_ms(cql, "ALL", 0)  # warm up prepared paths and connections
            base_one = _median_write_ms(cql, "ONE", 1000)
            base_all = _median_write_ms(cql, "ALL", 2000)
            # Seed 002's notation: x, y, z for client<->node1..3; a, b, c for node pairs.
            net.apply(lab_dir, state.netns, addrs,
                      NetSpec(client_delay_ms=f"{CLIENT_MS}ms", node_delay_ms=f"{NODE_MS}ms"))
            slow_one = _median_write_ms(cql, "ONE", 3000)
            slow_all = _median_write_ms(cql, "ALL", 4000)
    finally:
        net.clear(lab_dir)
    assert net.load(lab_dir) is None
    return base_one, slow_one, base_all, slow_all


_RESULTS: dict[str, tuple[float, float, float, float]] = {}


def _results(lab3: Lab) -> tuple[float, float, float, float]:
    if "r" not in _RESULTS:
        _RESULTS["r"] = _measure(lab3)
    return _RESULTS["r"]


def _msg(r: tuple[float, float, float, float]) -> str:
    return f"CL ONE {r[0]:.1f} -> {r[1]:.1f} ms, CL ALL {r[2]:.1f} -> {r[3]:.1f} ms"


def test_cl_one_and_cl_all_pay_the_client_round_trip(lab3: Lab) -> None:
    r = _results(lab3)
    d_one, d_all = r[1] - r[0], r[3] - r[2]
    # One client round trip (2 x 15 ms); at CL ONE the coordinator is itself a replica.
    assert 0.8 * 2 * CLIENT_MS <= d_one <= 1.3 * 2 * CLIENT_MS + 3, _msg(r)
    assert d_all >= 0.6 * 2 * CLIENT_MS, _msg(r)  # noisy: the lab shares 2 cores


@pytest.mark.xfail(strict=True, reason="Cassandra's internode sockets are not bound to "
                   "the node's address, so node<->node rules do not match (see module doc)")
def test_cl_all_also_pays_the_node_round_trip(lab3: Lab) -> None:
    r = _results(lab3)
    extra = (r[3] - r[2]) - (r[1] - r[0])
    # CL ALL waits for node2 and node3 too: one node round trip (2 x 10 ms) more.
    assert 0.6 * 2 * NODE_MS <= extra <= 1.5 * 2 * NODE_MS + 5, _msg(r)
