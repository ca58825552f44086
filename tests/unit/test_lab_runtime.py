"""Node runtimes: names, addresses, commands, and the netns runtime's real network."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.hardware import cgroups
from casslab.hardware.profiles import resolve_profile
from casslab.lab.lxc import cgroup_keys, render_config
from casslab.lab.runtime import NetnsRuntime, ProcessRuntime, runtime_for
from casslab.lab.state import LabState, NodeState
from casslab.system import netns


def _state(tmp_path: Path, runtime: str, lab_netns: str | None, count: int = 2) -> LabState:
    rt = runtime_for(runtime)
    addresses = rt.addresses(1, count)
    return LabState(name="rt", directory=str(tmp_path), cassandra_version="5.0.6",
                    profile="host", netns=lab_netns, cgroup_version=None, subnet=1,
                    seeds=[addresses[0]], overrides={},
                    nodes=[NodeState(i, a, str(tmp_path / f"node{i}"),
                                     netns=rt.node_netns(lab_netns, i))
                           for i, a in enumerate(addresses, start=1)],
                    runtime=runtime)


def test_an_unknown_runtime_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(UsageError) as info:
        runtime_for("docker")
    assert str(info.value) == "--runtime docker: unknown runtime; valid: process, netns, lxc"


def test_process_runtime_keeps_loopback_addresses_and_the_lab_namespace_prefix(
        tmp_path: Path) -> None:
    state = _state(tmp_path, "process", "casslab-x")
    assert [n.address for n in state.nodes] == ["127.0.1.1", "127.0.1.2"]
    assert all(n.netns is None for n in state.nodes)
    # The exact prefix the lab used before runtimes existed.
    assert ProcessRuntime().node_prefix(state, state.nodes[1]) == netns.exec_prefix("casslab-x")
    assert ProcessRuntime().node_prefix(_state(tmp_path, "process", None),
                                        state.nodes[0]) == []


def test_netns_runtime_gives_each_node_its_own_namespace_and_routable_address(
        tmp_path: Path) -> None:
    state = _state(tmp_path, "netns", "casslab-x")
    assert [n.address for n in state.nodes] == ["10.99.1.1", "10.99.1.2"]
    assert [n.netns for n in state.nodes] == ["casslab-x-n1", "casslab-x-n2"]
    assert NetnsRuntime().node_prefix(state, state.nodes[1]) == [
        "nsenter", "--net=/var/run/netns/casslab-x-n2"]


@pytest.mark.parametrize(("own", "can", "needs"), [(False, True, "--no-netns"),
                                                   (True, False, "root")])
def test_netns_runtime_refuses_a_lab_without_namespaces(own: bool, can: bool,
                                                        needs: str) -> None:
    with pytest.raises(UsageError, match=f"--runtime netns: needs .*{needs}"):
        NetnsRuntime().check(own_namespace=own, can_use_namespaces=can)
    ProcessRuntime().check(own_namespace=own, can_use_namespaces=can)


def test_the_runtime_survives_the_state_file_and_old_files_mean_process(
        tmp_path: Path) -> None:
    state = _state(tmp_path, "netns", "casslab-x")
    state.save()
    assert LabState.load(tmp_path) == state
    raw = json.loads((tmp_path / "lab.json").read_text())
    del raw["runtime"]
    for n in raw["nodes"]:
        del n["netns"]
    (tmp_path / "lab.json").write_text(json.dumps(raw))
    old = LabState.load(tmp_path)
    assert old.runtime == "process" and old.nodes[0].netns is None


def _links(ns: str) -> str:
    return subprocess.run(["ip", "-n", ns, "-o", "link"], capture_output=True, text=True,
                          check=True).stdout


_SERVER = """
import socket, sys
s = socket.create_server((sys.argv[1], 7999))
print("ready", flush=True)
conn, peer = s.accept()
print(peer[0], flush=True)
"""


def _tcp_source(client_ns: str | None, server_ns: str | None, address: str) -> str:
    """Connect from `client_ns` to `address` in `server_ns`; the source address seen."""
    server = subprocess.Popen([*netns.exec_prefix(server_ns), "python3", "-c", _SERVER,
                               address], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline() == "ready\n"
        subprocess.run([*netns.exec_prefix(client_ns), "python3", "-c",
                        f"import socket; socket.create_connection(('{address}', 7999), 3)"],
                       check=True, timeout=10)
        return server.stdout.readline().strip()
    finally:
        server.kill()
        server.wait()


@pytest.mark.skipif(not netns.can_use_namespaces(), reason="needs root and ip")
def test_netns_network_joins_nodes_over_the_bridge_and_goes_without_a_trace(
        tmp_path: Path) -> None:
    lab_ns = f"casslab-ut{os.getpid()}"
    state = _state(tmp_path, "netns", lab_ns)
    rt = NetnsRuntime()
    try:
        rt.create_network(state)
        router = f"{lab_ns}-gw"
        assert all(x in _links(router) for x in ("casslab0", "veth2", "vethc"))
        subprocess.run([*netns.exec_prefix(router), "iptables", "-t", "mangle", "-A",
                        "PREROUTING", "-s", "10.99.1.0/24", "-d", "10.99.1.2"], check=True)
        # node1 -> node2 across the bridge, and the lab namespace (the client) -> node2;
        # node2 sees each connection come from the sender's own address.
        assert _tcp_source(state.nodes[0].netns, state.nodes[1].netns, "10.99.1.2") == \
            "10.99.1.1"
        assert _tcp_source(lab_ns, state.nodes[1].netns, "10.99.1.2") == "10.99.1.254"
        # Both connections were routed by the router namespace, not bridged past it.
        counted = subprocess.run([*netns.exec_prefix(router), "iptables", "-t", "mangle",
                                  "-L", "PREROUTING", "-v", "-x", "-n"], capture_output=True,
                                 text=True, check=True).stdout.splitlines()[-1]
        assert int(counted.split()[0]) >= 2 * 3  # two handshakes, at least
    finally:
        rt.delete_network(state)
    assert not netns.exists(lab_ns) and not netns.exists(f"{lab_ns}-gw")
    assert not any(netns.exists(str(n.netns)) for n in state.nodes)


def test_lxc_limits_become_the_cgroup_keys_of_the_hierarchy_version() -> None:
    rpi2 = resolve_profile("rpi2")
    v1 = cgroup_keys(1, cgroups.limit_files(rpi2, 1, "8:0"))
    assert "lxc.cgroup.cpu.cfs_quota_us = 60000" in v1
    assert "lxc.cgroup.memory.limit_in_bytes = 1073741824" in v1
    assert "lxc.cgroup.blkio.throttle.write_bps_device = 8:0 10000000" in v1
    v2 = cgroup_keys(2, cgroups.limit_files(rpi2, 2, None))
    assert v2 == ["lxc.cgroup2.cpu.max = 60000 100000", "lxc.cgroup2.memory.max = 1073741824"]


def test_lxc_config_mounts_the_host_paths_read_only_and_the_node_directory_writable(
        tmp_path: Path) -> None:
    text = render_config(name="a-n1", rootfs=Path("/c/rootfs"), upper=tmp_path / "upper",
                         binds=[(Path("/usr/lib/jvm/j17"), False)], node_dir=Path("/h/node1"),
                         address="10.99.1.1", veth_peer="ceth1", limits=["lxc.cgroup.x = 1"],
                         init_script=Path("/h/node1/lxc-init.sh"), log=Path("/h/lxc.log"))
    lines = text.splitlines()
    assert f"lxc.rootfs.path = overlay:/c/rootfs:{tmp_path / 'upper'}" in lines
    assert "lxc.mount.entry = /usr/lib/jvm/j17 usr/lib/jvm/j17 none ro,bind,create=dir 0 0" \
        in lines
    assert "lxc.mount.entry = /h/node1 h/node1 none rw,bind,create=dir 0 0" in lines
    assert "lxc.net.0.ipv4.address = 10.99.1.1/24" in lines and "lxc.cgroup.x = 1" in lines
    assert "lxc.init.cmd = /bin/sh /h/node1/lxc-init.sh" in lines


def test_the_state_modules_runtime_names_are_the_runtimes() -> None:
    # `lab --help` and spec validation read the names from lab.state without importing
    # the runtimes; a runtime added in one place only would be refused or unlisted.
    from casslab.lab.runtime import RUNTIMES
    from casslab.lab.state import DEFAULT_RUNTIME, RUNTIME_NAMES

    assert tuple(RUNTIMES) == RUNTIME_NAMES
    assert DEFAULT_RUNTIME in RUNTIME_NAMES
