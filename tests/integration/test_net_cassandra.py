"""Link delays on a real 3-node lab (RF 3): a write at CL ONE pays the client's round
trip, at CL ALL also the coordinator's round trip to the other replicas.

Cassandra 5.0.6 does not bind its outbound internode sockets to listen_address (node1's
connection to node2 goes 127.0.1.2:ephemeral -> 127.0.1.2:7000, or from 127.0.0.1 once
the client route is set), so addresses cannot tell node links apart. The rules classify
by the connection's opener instead (its node's identity cgroup -> conntrack mark) and
its direction; this module checks that node<->node delays reach Cassandra's traffic.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from casslab import net
from casslab.cassandra.cql import CqlClient
from casslab.lab import Lab
from casslab.net import NetSpec

# timing: measures the round trips CL ONE and ALL pay; run alone (make test runs these after
# the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

CLIENT_MS = 15.0  # one-way, client <-> every node
NODE_MS = 10.0  # one-way, node <-> node
WRITES = 60
WARMUP = 150


def _median_write_ms(cql: CqlClient, start: int, count: int = WRITES) -> tuple[float, float]:
    """Median ms of writes at CL ONE and CL ALL, interleaved (one of each in turn), so
    both see the same background (JIT, compaction, other labs on the 2 cores)."""
    times: dict[str, list[float]] = {"ONE": [], "ALL": []}
    for i in range(start, start + count):
        for cl in ("ONE", "ALL"):
            t = time.perf_counter()
            cql.execute("INSERT INTO itnet.kv (k, v) VALUES (%s, %s)",
                        [i if cl == "ONE" else -i - 1, "x"], consistency=cl, host="127.0.1.1")
            times[cl].append((time.perf_counter() - t) * 1000)
    return statistics.median(times["ONE"]), statistics.median(times["ALL"])


def _measure(lab3: Lab) -> tuple[float, float, float, float]:
    """(CL ONE, CL ALL) median write ms before and after the delays; also probes the
    node links with `net check` (its probes open flows from the nodes' cgroups)."""
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
            # Warm up prepared paths, connections and the JIT: right after `lab up` the
            # first writes are several times slower than later ones.
            _median_write_ms(cql, 0, WARMUP)
            base_one, base_all = _median_write_ms(cql, 1000)
            # Seed 002's notation: x, y, z for client<->node1..3; a, b, c for node pairs.
            applied = net.apply(lab_dir, state.netns, addrs,
                                NetSpec(client_delay_ms=f"{CLIENT_MS}ms",
                                        node_delay_ms=f"{NODE_MS}ms"))
            slow_one, slow_all = _median_write_ms(cql, 3000)
        _CHECKS["identities"] = sorted(applied.identities)
        _CHECKS["rows"] = net.check(applied, links=["node1-to-node2", "node3-to-node1",
                                                    "client-to-node2"],
                                    pings=50, loss_packets=0, bandwidth=False)
    finally:
        net.clear(lab_dir)
    assert net.load(lab_dir) is None
    return base_one, slow_one, base_all, slow_all


_RESULTS: dict[str, tuple[float, float, float, float]] = {}
_CHECKS: dict[str, Any] = {}


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


def test_cl_all_also_pays_the_node_round_trip(lab3: Lab) -> None:
    r = _results(lab3)
    extra = (r[3] - r[2]) - (r[1] - r[0])
    # CL ALL waits for node2 and node3 too: one node round trip (2 x 10 ms) more.
    assert 0.6 * 2 * NODE_MS <= extra <= 1.5 * 2 * NODE_MS + 5, _msg(r)


def test_net_check_probes_node_links_as_their_nodes(lab3: Lab) -> None:
    _results(lab3)
    assert _CHECKS["identities"] == ["node1", "node2", "node3"]
    for r in _CHECKS["rows"]:
        want = 2 * (CLIENT_MS if "client" in (r.src, r.dst) else NODE_MS)
        assert r.rtt_configured_ms == want
        # A quarter either way still tells 2 delayed directions from 1 or 0 (or from the
        # client's 2 x 15 ms), while other labs' real-time daemons share the 2 cores.
        assert r.rtt_p50_ms is not None and abs(r.rtt_p50_ms - want) <= 0.25 * want, r
