"""A real 3-node lab, RF 3: replication, consistency levels, node faults, profile limits."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from casslab.core.errors import CqlError
from casslab.lab import Lab, LabOptions
from casslab.tune.apply import apply_compaction, schema_compaction

from conftest import LAB3, make_lab
from labtools import casslab, leftovers

pytestmark = pytest.mark.integration

KS = "it_rf3"


@pytest.fixture(scope="module")
def table(lab3: Lab) -> str:
    with lab3.cql() as cql:
        cql.execute(f"CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}", consistency="ALL")
        cql.execute(f"CREATE TABLE IF NOT EXISTS {KS}.kv (k int PRIMARY KEY, v text)",
                    consistency="ALL")
    return f"{KS}.kv"


def test_writes_at_all_are_read_at_one_through_every_node(lab3: Lab, table: str) -> None:
    state = lab3.state()
    with lab3.cql() as cql:
        for k in range(20):
            cql.execute(f"INSERT INTO {table} (k, v) VALUES (%s, %s)", [k, f"v{k}"],
                        consistency="ALL")
        for node in state.nodes:
            rows = cql.execute(f"SELECT k, v FROM {table}", consistency="ONE",
                               host=node.address).rows
            assert sorted(rows) == sorted([k, f"v{k}"] for k in range(20)), node.name
            local = cql.execute("SELECT broadcast_address FROM system.local",
                                host=node.address).rows
            assert local == [[node.address]]


def test_tuner_alter_reaches_every_nodes_schema(lab3: Lab, table: str) -> None:
    hosts = [n.address for n in lab3.state().nodes]
    twcs = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"
    with lab3.cql() as cql:
        cql.execute(f"CREATE TABLE IF NOT EXISTS {KS}.ts (k int, t int, v float, PRIMARY KEY "
                    "(k, t)) WITH default_time_to_live = 7200 AND compaction = {'class': "
                    "'TimeWindowCompactionStrategy', 'compaction_window_size': 1, "
                    "'compaction_window_unit': 'MINUTES'}", consistency="ALL", timeout_s=60)
        want = {"class": twcs, "compaction_window_size": "35",
                "compaction_window_unit": "MINUTES", "max_threshold": "32",
                "min_threshold": "8"}
        stmt = apply_compaction(cql, hosts, KS, "ts", want)
        assert stmt.startswith(f"ALTER TABLE {KS}.ts WITH compaction = ")
        # apply_compaction waited for this; asked again node by node, each has the full map.
        for h in hosts:
            assert schema_compaction(cql, h, KS, "ts") == want, h


def test_profile_limits_are_in_every_nodes_cgroup_files(lab3: Lab) -> None:
    state = lab3.state()
    assert state.cgroup_version in (1, 2)
    for node in state.nodes:
        files = {}
        for d in node.cgroup_dirs:
            for f in Path(d).iterdir():
                if f.name in ("cpu.cfs_quota_us", "cpu.cfs_period_us", "memory.limit_in_bytes",
                              "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
                              "cpu.max", "memory.max", "io.max", "cgroup.procs"):
                    files[f.name] = f.read_text()
        assert str(node.pid) in files["cgroup.procs"].split(), node.name
        if state.cgroup_version == 1:
            assert files["cpu.cfs_quota_us"].strip() == "100000"  # rpi3 = 1.0 core
            assert files["cpu.cfs_period_us"].strip() == "100000"
            assert int(files["memory.limit_in_bytes"]) == 1024**3
            assert files["blkio.throttle.read_bps_device"].split()[1] == "22000000"
            assert files["blkio.throttle.write_bps_device"].split()[1] == "15000000"
        else:
            assert files["cpu.max"].split() == ["100000", "100000"]
            assert int(files["memory.max"]) == 1024**3
            assert "rbps=22000000" in files["io.max"]


def test_jvm_max_heap_is_the_profiles_heap(lab3: Lab) -> None:
    for node in lab3.state().nodes:
        flags = subprocess.run(["jcmd", str(node.pid), "VM.flags"], capture_output=True,
                               text=True, timeout=60, check=True).stdout
        match = re.search(r"-XX:MaxHeapSize=(\d+)", flags)
        assert match is not None, flags
        assert int(match.group(1)) == 512 * 1024**2, node.name  # rpi3: 1 GiB RAM -> 512 MiB


def test_status_shows_every_node_up_normal(lab3: Lab) -> None:
    rows = lab3.status()
    assert [r.state for r in rows] == ["UN", "UN", "UN"]
    assert all(r.pid and r.profile == "rpi3" for r in rows)
    res = casslab("lab", "status", "--name", LAB3)
    assert res.returncode == 0 and res.stdout.count(" UN ") == 3, res.stdout


def test_up_refuses_a_name_that_is_running(lab3: Lab) -> None:
    res = casslab("lab", "up", "--nodes", "1", "--name", LAB3)
    assert res.returncode == 1
    assert "is running (3 of 3 nodes up)" in res.stderr
    assert [r.state for r in lab3.status()] == ["UN", "UN", "UN"]


def test_exec_runs_inside_the_labs_namespace(lab3: Lab) -> None:
    res = casslab("lab", "exec", "--name", LAB3, "--", "ip", "-br", "addr", "show", "lo")
    assert res.returncode == 0
    for i in (1, 2, 3):
        assert f"127.0.1.{i}/32" in res.stdout
    assert casslab("lab", "exec", "--name", LAB3, "--", "false").returncode == 1


def test_cql_command_prints_rows(lab3: Lab, table: str) -> None:
    res = casslab("lab", "cql", "--name", LAB3, "--node", "2", "--cl", "ALL",
                  f"SELECT v FROM {table} WHERE k = 3")
    assert res.returncode == 0 and "v3" in res.stdout and "(1 rows)" in res.stdout
    bad = casslab("lab", "cql", "--name", LAB3, "SELEC nonsense")
    assert bad.returncode == 1 and bad.stderr.startswith("error: SyntaxException")


def test_with_one_node_down_one_and_quorum_work_and_all_fails(lab3: Lab, table: str) -> None:
    lab3.stop_node("3")
    try:
        assert [r.state for r in lab3.status()][2] == "DN"
        with lab3.cql() as cql:
            # A write at ONE is acknowledged by one live replica, so a read at ONE may
            # reach the other before the mutation lands; only the QUORUM write (both live
            # replicas) makes every later read see it, whatever level reads it.
            for level in ("ONE", "QUORUM"):
                cql.execute(f"INSERT INTO {table} (k, v) VALUES (100, %s)", [level],
                            consistency=level)
            for level in ("ONE", "QUORUM"):
                rows = cql.execute(f"SELECT v FROM {table} WHERE k = 100",
                                   consistency=level).rows
                assert rows == [["QUORUM"]], level
            with pytest.raises(CqlError) as err:
                cql.execute(f"SELECT v FROM {table} WHERE k = 100", consistency="ALL")
            assert err.value.kind == "Unavailable"
            assert "ALL" in err.value.message and "alive_replicas" in err.value.message
        res = casslab("lab", "cql", "--name", LAB3, "--cl", "ALL",
                      f"INSERT INTO {table} (k, v) VALUES (101, 'x')")
        assert res.returncode == 1 and res.stderr.startswith("error: Unavailable")
    finally:
        lab3.start_node("3")
    assert [r.state for r in lab3.status()] == ["UN", "UN", "UN"]
    with lab3.cql() as cql:
        assert cql.execute(f"SELECT v FROM {table} WHERE k = 100", consistency="ALL").rows


def test_a_second_lab_runs_beside_the_first(lab3: Lab) -> None:
    side = make_lab("itside")
    try:
        side.up(LabOptions(nodes=1, profile="container"))
        with side.cql() as cql:
            assert cql.execute("SELECT cluster_name FROM system.local").rows == [["casslab-itside"]]
        with lab3.cql() as cql:
            rows = cql.execute("SELECT cluster_name FROM system.local").rows
            assert rows == [[f"casslab-{LAB3}"]]
    finally:
        side.down(wipe=True)
    assert leftovers("itside") == []
    assert [r.state for r in lab3.status()] == ["UN", "UN", "UN"]
