"""The local campaign lab never hands casslab-load an empty host list: with no node
running it refuses, naming each node and why it is not running (real processes, no
Cassandra)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from casslab.core.errors import LabStateError
from casslab.lab import node
from casslab.lab.state import LabState, NodeState
from casslab.load import LoadSpec
from casslab.system.process import is_same_process
from casslab.testbed.local import LocalTestbed


def _lab(tmp_path: Path, nodes: list[NodeState]) -> LocalTestbed:
    directory = tmp_path / "home" / "labs" / "dead"
    directory.mkdir(parents=True)
    LabState("dead", str(directory), "5.0.6", "host", None, None, 10, ["127.0.10.1"], {},
             nodes=nodes).save()
    return LocalTestbed("dead", home=tmp_path / "home", cache=tmp_path / "cache")


def _killed_node(tmp_path: Path) -> NodeState:
    n = NodeState(1, "127.0.10.1", str(tmp_path / "node1"))
    (tmp_path / "node1" / "logs").mkdir(parents=True)
    n.pid, n.start_ticks = node.spawn(["sleep", "60"], netns_prefix=[], cgroup_procs=[],
                                      stdout_log=tmp_path / "node1" / "logs" / "stdout.log")
    os.kill(n.pid, signal.SIGKILL)
    while is_same_process(n.pid, n.start_ticks):
        time.sleep(0.01)
    return n


def test_a_lab_whose_node_was_killed_names_it_instead_of_an_empty_host_list(
        tmp_path: Path) -> None:
    lab = _lab(tmp_path, [_killed_node(tmp_path)])
    want = r"lab 'dead' has no running node to connect to: node1 killed by signal 9 \(SIGKILL\)"
    with pytest.raises(LabStateError, match=want):
        lab.contact_points()
    with pytest.raises(LabStateError, match=want):
        lab.load(LoadSpec.of("ycsb-a", {"ops": 1}), guard=[], work_dir=tmp_path / "w")
    assert [d.name for d in lab.dead_nodes()] == ["node1"]


def test_a_lab_whose_nodes_were_stopped_says_so(tmp_path: Path) -> None:
    lab = _lab(tmp_path, [NodeState(1, "127.0.10.1", str(tmp_path / "n1")),
                          NodeState(2, "127.0.10.2", str(tmp_path / "n2"))])
    with pytest.raises(LabStateError, match="no running node to connect to: node1 was stopped "
                       r"\(casslab lab stop-node\); node2 was stopped"):
        lab.contact_points()
    assert lab.dead_nodes() == []
