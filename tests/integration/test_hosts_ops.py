"""Nodes on stand-in hosts under a small profile (1 core, 1536 MiB): each runs in its own
cgroup with the profile's limits, one sampler per host reads its CPU and disk writes
during a write load (and CQL its tables' latencies), its log comes back over SSH, and
stop leaves no cgroup."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from casslab.cassandra.cql import CqlClient
from casslab.hardware.cgroups import detect_layout
from casslab.metrics.samples import TrialMetrics
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts import cluster, limits

sys.path.insert(0, str(Path(__file__).parent.parent))
from casslab.testbed.hosts import trialmetrics

from labtools import NodesOnHosts, provision_small, wipe_node_data

pytestmark = pytest.mark.integration

LAB = "ops"
MEMORY_MIB = 1536


@pytest.fixture(scope="module")
def running(ssh_hosts: SshHosts, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[NodesOnHosts]:
    run = provision_small(ssh_hosts, tmp_path_factory.mktemp("ops"), nodes=2,
                          profile={"cpu_cores": 1.0, "memory_mib": MEMORY_MIB}, lab=LAB)
    try:
        run.start()
        cluster.wait_all_normal(run.nodes, timeout_s=120)
        yield run
    finally:
        run.stop()
        wipe_node_data(ssh_hosts)


def test_each_node_runs_in_its_labs_cgroup_with_the_profiles_limits(running: NodesOnHosts) -> None:
    layout = detect_layout()
    for s in running.started:
        assert s.limits.mode == f"cgroup-v{layout.version}"
        if layout.version == 1:
            cpu = layout.v1_mounts["cpu"] / "casslab" / LAB / s.node.layout.name
            memory = layout.v1_mounts["memory"] / "casslab" / LAB / s.node.layout.name
            assert (cpu / "cpu.cfs_quota_us").read_text().strip() == "100000"
            assert int((memory / "memory.limit_in_bytes").read_text()) == MEMORY_MIB << 20
            procs = (memory / "cgroup.procs").read_text().split()
        else:
            assert layout.v2_mount is not None
            node = layout.v2_mount / "casslab" / LAB / s.node.layout.name
            assert (node / "cpu.max").read_text().split() == ["100000", "100000"]
            assert int((node / "memory.max").read_text()) == MEMORY_MIB << 20
            procs = (node / "cgroup.procs").read_text().split()
        assert str(s.pid) in procs
        record = s.node.layout.directory / limits.LIMITS_FILE
        assert limits.LimitPlan.from_json(record.read_text()) == s.limits


def _write_load(addresses: list[str], seconds: float) -> int:
    with CqlClient(addresses, netns=None) as cql:
        cql.execute("CREATE KEYSPACE IF NOT EXISTS ops WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        cql.execute("CREATE TABLE IF NOT EXISTS ops.t (k int PRIMARY KEY, v text)")
        end, k = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            cql.execute("INSERT INTO ops.t (k, v) VALUES (%s, %s)", [k, "x" * 2000])
            k += 1
    return k


def test_sampling_a_write_load_gives_each_node_cpu_and_disk_writes(running: NodesOnHosts) -> None:
    addresses = [s.node.layout.address for s in running.started]

    async def sample() -> tuple[TrialMetrics, int]:
        async with running.fleet() as fleet:
            sampling = await trialmetrics.start(
                fleet, running.started, interval_s=1.0,
                cql=lambda: CqlClient(addresses, netns=None))
            written = await asyncio.to_thread(_write_load, addresses, 6.0)
            return await sampling.stop(), written

    metrics, written = asyncio.run(sample())
    assert written > 100
    assert not metrics.errors
    names = sorted(s.node.layout.name for s in running.started)
    for name in names:
        mine = [n for n in metrics.nodes if n.node == name]
        assert len(mine) >= 4
        assert sum(n.cpu_user_pct + n.cpu_sys_pct for n in mine) > 0
        assert sum(n.write_kb_s for n in mine) > 0
        assert all(n.rss_mib > 100 and n.data_mib for n in mine)
    assert sorted({h.host for h in metrics.hosts}) == sorted(h.name for h in running.hosts.hosts)
    assert all(h.net_rx_kb_s is not None and h.load1 >= 0 for h in metrics.hosts)
    assert sum(h.net_rx_kb_s or 0.0 for h in metrics.hosts) > 0
    assert metrics.host and all(h.cpu_user_pct > 0 for h in metrics.host)
    assert {(s.node, s.table) for s in metrics.sstables if s.keyspace == "ops"} == {
        (name, "t") for name in names}
    # Cassandra's side, over CQL as in the local lab.
    writes = [t for t in metrics.tables if (t.keyspace, t.table, t.kind) == ("ops", "t", "write")]
    assert sum(t.count for t in writes) > 0
    assert {c.node for c in metrics.compactions} == set(names)
    assert any(n.compactions_pending is not None for n in metrics.nodes)


def test_a_nodes_log_comes_back_over_ssh(running: NodesOnHosts, tmp_path: Path) -> None:
    node = running.started[1].node

    async def logs() -> tuple[str, Path]:
        async with running.fleet() as fleet:
            return (await cluster.node_log(fleet, node, lines=500),
                    await cluster.save_log(fleet, node, tmp_path / "system.log"))

    tail, whole = asyncio.run(logs())
    assert len(tail.splitlines()) <= 500
    assert cluster.CQL_READY in whole.read_text()
    assert tail in whole.read_text()


def test_stop_removes_every_nodes_cgroup(running: NodesOnHosts) -> None:
    dirs = [Path(d) for s in running.started for d in s.limits.dirs]
    assert dirs and all(d.is_dir() for d in dirs)
    running.stop()
    assert not [d for d in dirs if d.exists()]
    assert not [d.parent for d in dirs if d.parent.exists()]  # casslab/<lab>
    assert not any((s.node.layout.directory / limits.LIMITS_FILE).exists()
                   for s in running.started)
