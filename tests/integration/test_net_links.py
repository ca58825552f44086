"""Packet-level tests of network emulation on a bare namespace (no Cassandra):
127.0.1.1-3 on lo, the client at 127.0.0.1, casslab-netem, iptables and htb for real.
The "nodes" are probe sockets created in the nodes' identity cgroups
(casslab/itnet-links/node1-3 on the cgroup v2 hierarchy), as a lab's JVMs would be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from casslab import net
from casslab.core.paths import default_home
from casslab.experiment.factors.network import wanted
from casslab.experiment.factors.registry import net_levels
from casslab.experiment.spec import parse_spec
from casslab.lab.state import LabState, NodeState
from casslab.net import NetSpec, identity
from casslab.net.linkcheck import run_probe, wire_rate
from casslab.system import netns
from casslab.system.process import is_same_process

from labtools import casslab

# timing: measures delays, jitter and rates of emulated links against their configuration;
# run alone (make test runs these after the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

NS = "itnet-links"
ADDRS = ["127.0.1.1", "127.0.1.2", "127.0.1.3"]


@dataclass
class Bare:
    netns: str
    lab_dir: Path


def _in_ns(*cmd: str) -> str:
    return subprocess.run(["ip", "netns", "exec", NS, *cmd], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def bare() -> Iterator[Bare]:
    netns.delete(NS)
    cgroups = identity.create_bare(NS, len(ADDRS))
    lab_dir = Path(tempfile.mkdtemp(prefix="itnet-"))
    try:
        netns.create(NS, ADDRS)
        yield Bare(NS, lab_dir)
    finally:
        state = net.load(lab_dir)
        netns.delete(NS)
        identity.remove_bare(cgroups)
        if state and state.daemon:
            assert not state.daemon.alive(), "casslab-netem survived its namespace"
        assert not netns.exists(NS)
        assert not any(d.exists() for d in cgroups)


def _tolerance(configured_ms: float) -> float:
    return max(0.1 * configured_ms, 0.5)


def test_round_trip_matches_configured_delay(bare: Bare) -> None:
    spec = NetSpec(links=(("client-node1", {"delay": "10ms"}),
                          ("node1-to-node2", {"delay": "3ms"}),
                          ("node2-to-node1", {"delay": "1ms"}),
                          ("node2-node3", {"delay": "25ms"})))
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, spec)
    assert state.daemon is not None and state.daemon.alive()
    rows = net.check(state, links=["client-to-node1", "node1-to-node2", "node2-to-node3",
                                   "client-to-node3"],
                     pings=200, loss_packets=0, bandwidth=False)
    by_link = {(r.src, r.dst): r for r in rows}
    for link, want in ((("client", "node1"), 20.0), (("node1", "node2"), 4.0),
                       (("node2", "node3"), 50.0), (("client", "node3"), 0.0)):
        r = by_link[link]
        assert r.rtt_configured_ms == want
        assert r.rtt_p50_ms is not None
        assert abs(r.rtt_p50_ms - want) <= _tolerance(want), (link, r)
    # One-way: the two directions of node1<->node2 differ as configured.
    assert abs((by_link[("node1", "node2")].one_way_p50_ms or 0) - 3.0) <= 0.5


def test_node_links_follow_the_opener_not_the_source_address(bare: Bare) -> None:
    """Cassandra's internode sockets are not bound to the node's address: node1's
    connection to node2 leaves from 127.0.1.2 (the local route's choice) or, with the
    client route, 127.0.0.1. The opener's cgroup decides the link, not the source."""
    spec = NetSpec(links=(("client-node2", {"delay": "20ms"}),
                          ("node1-to-node2", {"delay": "3ms"}),
                          ("node2-to-node1", {"delay": "1ms"})))
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, spec)
    assert set(state.identities) == {"node1", "node2", "node3"}
    assert not state.warnings
    mount = identity.v2_mount()
    assert mount is not None
    job = {"wait_s": 1.0, "delay": {"count": 100, "interval_ms": 5.0, "pairs": [
        ["127.0.1.2", "127.0.1.2", "node1"],  # what Cassandra 5.0.6 does
        ["127.0.0.1", "127.0.1.2", "node1"],  # unbound, after the client route
        ["127.0.1.1", "127.0.1.2", "node1"],  # bound to its own address
        ["127.0.0.1", "127.0.1.2", None],  # the client
        ["127.0.1.1", "127.0.1.2", None],  # nobody's: no link, no delay
    ]}}
    res = run_probe(bare.netns, job, 30, {"node1": mount / state.identities["node1"]})
    p50 = [sorted(r["rtt_ms"])[len(r["rtt_ms"]) // 2] for r in res["delay"]]
    # This test tells links apart (4 vs 40 vs 0 ms), not the delay's precision (the test
    # above): on a busy 2-core CI machine the user-space scheduler's own passes added
    # 0.8-1.0 ms to every delayed round trip (2026-11-23), more than the 0.5 ms floor.
    for got, want in zip(p50, (4.0, 4.0, 4.0, 40.0, 0.0), strict=True):
        assert abs(got - want) <= max(_tolerance(want), 1.5), (p50, want)
    # The probe went back to its own cgroup: nothing is left in node1's.
    assert not (mount / state.identities["node1"] / "cgroup.procs").read_text().strip()


def test_loss_over_10k_packets_and_no_reordering_with_jitter(bare: Bare) -> None:
    spec = NetSpec(links=(("node1-to-node2", {"loss": "5%"}),
                          ("node1-to-node3", {"loss": "3%", "burst": "4"}),
                          ("node3-to-node1", {"delay": "5ms", "jitter": "4ms"})))
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, spec)
    rows = net.check(state, links=["node1-to-node2", "node1-to-node3", "node3-to-node1"],
                     pings=20, loss_packets=10_000, bandwidth=False)
    by_link = {(r.src, r.dst): r for r in rows}
    assert abs((by_link[("node1", "node2")].loss_pct or 0) - 5.0) <= 1.5
    assert abs((by_link[("node1", "node3")].loss_pct or 0) - 3.0) <= 1.5
    jittery = by_link[("node3", "node1")]
    # 10k packets 0.3 ms apart through +-4 ms of jitter: without a FIFO per link about
    # every packet would overtake or be overtaken.
    assert jittery.loss_pct == 0.0
    assert jittery.reordered == 0


def test_bandwidth_within_ten_percent(bare: Bare) -> None:
    spec = NetSpec(links=(("node2-to-node3", {"rate": "10mbit"}),
                          ("client-to-node1", {"rate": "50mbit", "delay": "2ms"})))
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, spec)
    rows = net.check(state, links=["node2-to-node3", "client-to-node1"], pings=20,
                     loss_packets=0, bandwidth=True, bandwidth_s=2.5)
    for r in rows:
        assert r.configured.rate_mbit is not None and r.wire_rate_mbit is not None
        assert abs(r.wire_rate_mbit / r.configured.rate_mbit - 1) <= 0.10, r
    qdiscs = _in_ns("tc", "qdisc", "show", "dev", "lo")
    assert "htb 1: root" in qdiscs and "bfifo" in qdiscs


def test_shared_wifi_medium_splits_its_rate_between_flows(bare: Bare) -> None:
    """Every wifi link draws from one budget: one flow alone gets the medium's rate,
    two flows at once (client->node1, client->node2) about half of it each."""
    spec = NetSpec(profile="wifi", all={"rate": "20mbit", "loss": "0%"})
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, spec)
    flows = [["127.0.0.1", "127.0.1.1", None], ["127.0.0.1", "127.0.1.2", None]]

    def wire_mbit(links: list[list[str | None]]) -> list[float]:
        job = {"wait_s": 1.0, "flows": {"links": links, "duration_s": 4.0, "warmup_s": 1.0}}
        res = run_probe(bare.netns, job, 60, {})
        return [wire_rate(r["mbit"], int(r["mss"])) for r in res["flows"]]

    (alone,) = wire_mbit(flows[:1])
    both = wire_mbit(flows)
    # The medium also carries each flow's ACKs (half-duplex): a few % below 20.
    assert 17.0 <= alone <= 20.5, alone
    assert 17.0 <= sum(both) <= 20.5, both
    for got in both:
        assert abs(got - 10.0) <= 1.5, both
    cfg = json.loads((bare.lab_dir / "net" / "netem.json").read_text())
    assert cfg["groups"] == [{"id": 1, "name": "wifi", "rate_bit_s": 20_000_000,
                              "queue_limit_bytes": 65536}]
    assert "htb" not in _in_ns("tc", "qdisc", "show", "dev", "lo")
    assert state.daemon is not None and state.daemon.alive()


def test_coupled_scaling_of_50_percent_gives_one_and_a_half_round_trips(bare: Bare) -> None:
    """Seed 002's edge delays a, b, c = 5, 10, 15 ms as a base link table; the factor
    network.scale.edge at +50 % makes every edge round trip 1.5x its base."""
    spec = parse_spec("workload: ycsb-a\nlab:\n  nodes: 3\n  network:\n    groups:\n"
                      "      edge: {node1-node2: 5, node2-node3: 10, node1-node3: 15}\n"
                      "factors:\n  - {name: network.scale.edge, levels: [0, 50]}\n")
    pairs = ["node1-to-node2", "node2-to-node3", "node1-to-node3"]
    rtt: dict[float, list[float]] = {}
    for level in spec.factors[0].levels:
        mapping = wanted(spec.lab.network, net_levels({"network.scale.edge": level}),
                         len(ADDRS))
        state = net.apply(bare.lab_dir, bare.netns, ADDRS,
                          NetSpec.from_mapping(mapping, "network"))
        rows = net.check(state, links=pairs, pings=200, loss_packets=0, bandwidth=False)
        rtt[level] = [r.rtt_p50_ms or 0.0 for r in rows]
    for base_ms, got_base, got_up in zip((10.0, 20.0, 30.0), rtt[0.0], rtt[50.0],
                                         strict=True):
        assert abs(got_base - base_ms) <= _tolerance(base_ms), rtt
        assert abs(got_up - 1.5 * base_ms) <= _tolerance(1.5 * base_ms), rtt
        # The ratio, within the emulator's tolerance on both round trips.
        assert abs(got_up / got_base - 1.5) <= 0.1, rtt


def test_change_while_running_reloads_the_same_daemon(bare: Bare) -> None:
    state = net.apply(bare.lab_dir, bare.netns, ADDRS,
                      NetSpec(links=(("node1-node3", {"delay": "2ms"}),)))
    assert state.daemon is not None
    pid = state.daemon.pid
    state = net.set_links(bare.lab_dir, NetSpec(links=(("node1-node3", {"delay": "8ms"}),
                                                       ("client-node2", {"delay": "1ms"}))))
    assert state.daemon is not None and state.daemon.pid == pid
    assert state.table[("client", "node2")].delay_ms == 1.0
    rows = net.check(state, links=["node1-to-node3"], pings=100, loss_packets=0,
                     bandwidth=False)
    assert abs((rows[0].rtt_p50_ms or 0) - 16.0) <= _tolerance(16.0)


def test_dead_daemon_never_blackholes(bare: Bare) -> None:
    state = net.apply(bare.lab_dir, bare.netns, ADDRS,
                      NetSpec(links=(("node1-node2", {"delay": "5ms"}),)))
    assert state.daemon is not None
    os.kill(state.daemon.pid, 9)
    rows = net.check(state, links=["node1-to-node2"], pings=50, loss_packets=500,
                     bandwidth=False)
    assert rows[0].loss_pct == 0.0
    assert (rows[0].rtt_p50_ms or 99) < 3.0  # --queue-bypass: no daemon, no delay
    assert not net.is_active(state)


def test_clear_removes_daemon_rules_and_qdisc(bare: Bare) -> None:
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, NetSpec(profile="wifi"))
    assert state.daemon is not None and state.daemon.alive()
    assert "NFQUEUE" in _in_ns("iptables", "-t", "mangle", "-S")
    net.clear(bare.lab_dir)
    assert not is_same_process(state.daemon.pid, state.daemon.start_ticks)
    assert "CASSLAB_NET" not in _in_ns("iptables", "-t", "mangle", "-S")
    assert "htb" not in _in_ns("tc", "qdisc", "show", "dev", "lo")
    assert net.load(bare.lab_dir) is None


def test_namespace_setup_for_realism(bare: Bare) -> None:
    net.apply(bare.lab_dir, bare.netns, ADDRS, NetSpec(profile="edge", cc="cubic"))
    assert "mtu 1500" in _in_ns("ip", "link", "show", "lo")
    offload = _in_ns("ethtool", "-k", "lo")
    assert "tcp-segmentation-offload: off" in offload
    assert "generic-segmentation-offload: off" in offload
    assert _in_ns("sysctl", "-n", "net.ipv4.tcp_congestion_control").strip() == "cubic"
    state = net.apply(bare.lab_dir, bare.netns, ADDRS, NetSpec(profile="edge", cc="bbr",
                                                               all={"loss": "1%"}))
    assert _in_ns("sysctl", "-n", "net.ipv4.tcp_congestion_control").strip() == "bbr"
    assert any("BBR ignores random loss" in w for w in state.warnings)
    # Unbound client sockets send from 127.0.0.1, so client links are distinguishable.
    src = _in_ns(sys.executable, "-c", "import socket; s = socket.socket(socket.AF_INET, "
                 "socket.SOCK_DGRAM); s.connect(('127.0.1.2', 9)); print(s.getsockname()[0])")
    assert src.strip() == "127.0.0.1"
    net.clear(bare.lab_dir)


def test_cli_set_show_check_clear(bare: Bare) -> None:
    """The real command against a lab whose state points at the bare namespace."""
    name = "itnet-cli"
    lab_dir = default_home() / "labs" / name
    lab_dir.mkdir(parents=True, exist_ok=True)
    LabState(name=name, directory=str(lab_dir), cassandra_version="5.0.6", profile="host",
             netns=NS, cgroup_version=None, subnet=1, seeds=[ADDRS[0]], overrides={},
             nodes=[NodeState(i, a, str(lab_dir / f"node{i}"))
                    for i, a in enumerate(ADDRS, start=1)]).save()
    r = casslab("net", "set", "--name", name, "--client-delay", "1ms,2ms,3ms",
                "--node-delay", "4ms,5ms,6ms", "--link", "node1-to-node2:loss=2%,burst=2")
    assert r.returncode == 0, r.stderr
    r = casslab("net", "show", "--name", name)
    assert r.returncode == 0, r.stderr
    assert "client->node3" in r.stdout and "2 (burst 2)" in r.stdout
    r = casslab("net", "check", "--name", name, "--link", "client-node3", "--pings", "50",
                "--loss-packets", "200")
    assert r.returncode == 0, r.stderr
    assert "configured vs measured" in r.stdout and "client->node3" in r.stdout
    r = casslab("net", "set", "--name", name, "--link", "node1-node9:delay=1ms")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "unknown endpoint 'node9'" in r.stderr
    r = casslab("net", "set", "--name", name, "--delay", "fast")
    assert r.returncode == 2 and "delay: 'fast' is not a duration" in r.stderr
    r = casslab("net", "clear", "--name", name)
    assert r.returncode == 0, r.stderr
    assert net.load(lab_dir) is None
