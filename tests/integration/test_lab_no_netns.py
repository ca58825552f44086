"""A lab without its own namespace: nodes reachable from this host, still in cgroups."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.cassandra.cql import CqlClient
from casslab.lab import LabOptions

from conftest import make_lab
from labtools import leftovers

pytestmark = pytest.mark.integration


def test_lab_without_namespace_is_reachable_from_the_host_and_cleaned_up() -> None:
    lab = make_lab("ithost")
    try:
        state = lab.up(LabOptions(nodes=1, profile="container", own_namespace=False))
        node = state.nodes[0]
        assert state.netns is None
        assert node.address.startswith("127.0.") and not node.address.startswith("127.0.1.")
        assert any("no namespace" in w for w in state.warnings)
        assert lab.exec_prefix() == []
        assert node.cgroup_dirs and all(
            str(node.pid) in Path(d, "cgroup.procs").read_text().split()
            for d in node.cgroup_dirs)
        # Straight from this process's namespace, no `ip netns exec`.
        with CqlClient([node.address], netns=None) as cql:
            rows = cql.execute("SELECT rpc_address FROM system.local").rows
        assert rows == [[node.address]]
    finally:
        lab.down(wipe=True)
    assert leftovers("ithost") == []
