"""Runtime netns: every node in its own namespace behind a veth on the lab's bridge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from casslab.core.paths import default_home

from labtools import CASSLAB, casslab, leftovers

LAB = "itnetns"


def _state() -> dict[str, object]:
    return json.loads((default_home() / "labs" / LAB / "lab.json").read_text())  # type: ignore[no-any-return]


def _netns_inode(path: str) -> int:
    return os.stat(path).st_ino


def _cql(statement: str, *args: str) -> str:
    res = casslab("lab", "cql", statement, "--name", LAB, *args)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _restart_node2_and_kill_casslab() -> None:
    """`lab start 2`, SIGKILLed once node2's JVM runs: casslab dies mid-operation."""
    assert casslab("lab", "stop", "2", "--name", LAB).returncode == 0
    proc = subprocess.Popen([CASSLAB, "lab", "start", "2", "--name", LAB],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _state()["nodes"][1]["pid"]:  # type: ignore[index]
            assert time.monotonic() < deadline, "node2 was not started again"
            time.sleep(0.1)
        time.sleep(2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_netns_lab_answers_at_rf2_from_separate_namespaces_and_goes_after_kill_9() -> None:
    try:
        res = casslab("lab", "up", "--nodes", "2", "--name", LAB, "--profile", "container",
                      "--runtime", "netns")
        assert res.returncode == 0, res.stderr
        state = _state()
        assert state["runtime"] == "netns"
        nodes: list[dict[str, object]] = state["nodes"]  # type: ignore[assignment]
        assert [n["address"] for n in nodes] == ["10.99.1.1", "10.99.1.2"]
        # Each JVM in its own namespace, none in the lab's (where the client runs).
        inodes = {_netns_inode(f"/proc/{n['pid']}/ns/net") for n in nodes}
        lab_inode = _netns_inode(f"/var/run/netns/{state['netns']}")
        assert len(inodes) == 2 and lab_inode not in inodes
        for n in nodes:
            assert _netns_inode(f"/proc/{n['pid']}/ns/net") == \
                _netns_inode(f"/var/run/netns/{n['netns']}")
            assert all(str(n["pid"]) in Path(d, "cgroup.procs").read_text().split()
                       for d in n["cgroup_dirs"])  # type: ignore[attr-defined]
        # RF 2 at ALL: both nodes must answer, over the bridge.
        _cql("CREATE KEYSPACE rt WITH replication = {'class': 'SimpleStrategy', "
             "'replication_factor': 2}")
        _cql("CREATE TABLE rt.t (k int PRIMARY KEY, v text)")
        _cql("INSERT INTO rt.t (k, v) VALUES (1, 'bridged')", "--cl", "ALL")
        assert "bridged" in _cql("SELECT v FROM rt.t WHERE k = 1", "--cl", "ALL", "--node", "2")
        # Link conditions are refused on this runtime, in one line.
        res = casslab("net", "set", "--name", LAB, "--profile", "wifi")
        assert res.returncode != 0
        assert res.stderr.strip() == ("error: lab 'itnetns': link conditions work on runtime "
                                      "process only, not on runtime netns")
        _restart_node2_and_kill_casslab()
        assert leftovers(LAB), "the killed start should have left a running lab to clean"
    finally:
        res = casslab("lab", "down", "--name", LAB, "--wipe")
    assert res.returncode == 0, res.stderr
    assert leftovers(LAB) == []
    assert not (default_home() / "labs" / LAB).exists()
