"""Runtimes netns and lxc: every node in its own network namespace (lxc: a container)
behind a veth on the lab's bridge; limits, CQL at RF 2, a 10 ms link delay measured from
inside a node and by `net check`, a pause and resume of the whole lab (design.labs:
keep), clean-up after kill -9."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from casslab.core.paths import default_cache, default_home
from casslab.testbed.netlab import open_lab

from labtools import CASSLAB, casslab, leftovers

# timing: measures TCP handshake times through a delayed link; run alone (make test runs
# these after the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

# rpi3: 1 core, 1 GiB; read back from the cgroup each node's JVM runs in.
CPU_QUOTA_US = 100_000
MEMORY_BYTES = 1024 * 1024 * 1024


def _state(lab: str) -> dict[str, Any]:
    return json.loads((default_home() / "labs" / lab / "lab.json").read_text())  # type: ignore[no-any-return]


def _proc_state(pid: int) -> str:
    """The /proc state letter of the whole process (T: stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _netns_inode(path: str) -> int:
    return os.stat(path).st_ino


def _cql(lab: str, statement: str, *args: str) -> str:
    res = casslab("lab", "cql", statement, "--name", lab, *args)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _limits_of(pid: int) -> tuple[int, int]:
    """(CPU quota µs per 100 ms, memory limit bytes) of the cgroup `pid` runs in."""
    paths = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            paths[c] = path.lstrip("/")
    root = Path("/sys/fs/cgroup")
    if "cpu" in paths and "memory" in paths:  # v1
        return (int((root / "cpu" / paths["cpu"] / "cpu.cfs_quota_us").read_text()),
                int((root / "memory" / paths["memory"] / "memory.limit_in_bytes").read_text()))
    d = root / paths[""]
    return (int((d / "cpu.max").read_text().split()[0]), int((d / "memory.max").read_text()))


_HANDSHAKES = """
import socket, sys, time
times = []
for _ in range(15):
    t = time.perf_counter()
    socket.create_connection((sys.argv[1], 9042), 5).close()
    times.append((time.perf_counter() - t) * 1e3)
print(sorted(times)[7])
"""


def _handshake_ms(netns_path: str, address: str) -> float:
    """Median TCP handshake time (ms) to `address`'s CQL port from the namespace at
    `netns_path`: one round trip."""
    out = subprocess.run(["nsenter", f"--net={netns_path}", "python3", "-c", _HANDSHAKES,
                          address], capture_output=True, text=True, check=True, timeout=60)
    return float(out.stdout)


def _checked_one_way_ms(lab: str) -> dict[str, float]:
    """`casslab net check` of node1->node2 and client->node1: link -> measured one-way
    p50 (ms), read from the table it prints."""
    res = casslab("net", "check", "--name", lab, "--link", "node1-to-node2", "--link",
                  "client-to-node1", "--pings", "50", "--loss-packets", "200",
                  env={**os.environ, "COLUMNS": "300"})
    assert res.returncode == 0, res.stderr
    out = {}
    for line in res.stdout.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line)]
        if len(cells) > 2 and "->" in cells[1]:
            out[cells[1]] = float(cells[2].split("/")[1])
    return out


def _host_links() -> list[str]:
    """Devices in this host's own namespace with the names a lab gives its veths and
    bridge inside its namespaces: any here escaped them."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                         check=True).stdout
    names = [ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines()]
    return [n for n in names if re.fullmatch(r"(veth|ceth)[0-9]+|vethc|casslab0", n)]


def _restart_node2_and_kill_casslab(lab: str) -> None:
    """`lab start 2`, SIGKILLed once node2's JVM runs: casslab dies mid-operation."""
    assert casslab("lab", "stop", "2", "--name", lab).returncode == 0
    proc = subprocess.Popen([CASSLAB, "lab", "start", "2", "--name", lab],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _state(lab)["nodes"][1]["pid"]:
            assert time.monotonic() < deadline, "node2 was not started again"
            time.sleep(0.1)
        time.sleep(2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


@pytest.mark.parametrize("runtime", ["netns", "lxc"])
def test_lab_answers_at_rf2_from_separate_namespaces_and_goes_after_kill_9(
        runtime: str) -> None:
    lab = f"it{runtime}"
    try:
        # A long wait: 1-core nodes start slowly on a machine others load too.
        res = casslab("lab", "up", "--nodes", "2", "--name", lab, "--profile", "rpi3",
                      "--runtime", runtime, "--timeout", "600s", timeout_s=900)
        assert res.returncode == 0, res.stderr
        state = _state(lab)
        assert state["runtime"] == runtime
        nodes = state["nodes"]
        assert [n["address"] for n in nodes] == ["10.99.1.1", "10.99.1.2"]
        # Each JVM in a network namespace of its own, none in the lab's (the client's).
        inodes = {_netns_inode(f"/proc/{n['pid']}/ns/net") for n in nodes}
        assert len(inodes) == 2
        assert _netns_inode(f"/var/run/netns/{state['netns']}") not in inodes
        for n in nodes:
            assert _limits_of(n["pid"]) == (CPU_QUOTA_US, MEMORY_BYTES)
            if runtime == "lxc":  # the container's own root, pid and mount namespaces
                assert _netns_inode(f"/proc/{n['pid']}/ns/mnt") != _netns_inode(
                    "/proc/self/ns/mnt")
                nspid = next(ln for ln in Path(f"/proc/{n['pid']}/status").read_text()
                             .splitlines() if ln.startswith("NSpid:")).split()[1:]
                assert nspid == [str(n["pid"]), "1"]  # the JVM is the container's init
        # RF 2 at ALL: both nodes must answer, over the bridge.
        _cql(lab, "CREATE KEYSPACE rt WITH replication = {'class': 'SimpleStrategy', "
             "'replication_factor': 2}")
        _cql(lab, "CREATE TABLE rt.t (k int PRIMARY KEY, v text)")
        _cql(lab, "INSERT INTO rt.t (k, v) VALUES (1, 'bridged')", "--cl", "ALL")
        assert "bridged" in _cql(lab, "SELECT v FROM rt.t WHERE k = 1", "--cl", "ALL",
                                 "--node", "2")
        # Paused (design.labs: keep) longer than Cassandra's 5 s local-pause threshold,
        # both JVMs stopped; resumed, both answer at ALL again (no peer marked down).
        kept = open_lab(lab, home=default_home(), cache=default_cache())
        assert kept.pause() == 2
        assert {_proc_state(n["pid"]) for n in nodes} == {"T"}
        time.sleep(7)
        assert kept.resume() == 2
        assert {_proc_state(n["pid"]) for n in nodes} <= {"S", "R"}
        assert "bridged" in _cql(lab, "SELECT v FROM rt.t WHERE k = 1", "--cl", "ALL",
                                 "--node", "1")
        # A 10 ms link between the nodes, each way: measured from inside node1's own
        # namespace, a TCP handshake with node2 takes one round trip.
        node1_net = f"/proc/{nodes[0]['pid']}/ns/net"
        assert _handshake_ms(node1_net, "10.99.1.2") < 5
        res = casslab("net", "set", "--name", lab, "--link", "node1-node2:delay=10ms")
        assert res.returncode == 0, res.stderr
        assert 19.5 < _handshake_ms(node1_net, "10.99.1.2") < 30
        # `net check` sends node1's probes from node1's own stack, the client's from the
        # lab's: only node1 -> node2 is slow.
        checked = _checked_one_way_ms(lab)
        assert 9.5 < checked["node1->node2"] < 15, checked
        assert checked["client->node1"] < 3, checked
        _cql(lab, "INSERT INTO rt.t (k, v) VALUES (2, 'delayed')", "--cl", "ALL")
        assert casslab("net", "clear", "--name", lab).returncode == 0
        assert _handshake_ms(node1_net, "10.99.1.2") < 5
        _restart_node2_and_kill_casslab(lab)
        assert leftovers(lab), "the killed start should have left a running lab to clean"
    finally:
        res = casslab("lab", "down", "--name", lab, "--wipe")
    assert res.returncode == 0, res.stderr
    assert leftovers(lab) == []
    assert _host_links() == []
    assert not (default_home() / "labs" / lab).exists()
