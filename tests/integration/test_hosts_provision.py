"""casslab's playbook provisions stand-in hosts over SSH: Cassandra's jars, casslab's
binaries and each node's own cassandra.yaml land in the host's install root; a failing
step is one line naming the host and the step. Then the nodes start over SSH, form one
cluster, take writes at RF 2, and stop leaving no JVM."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import yaml

from casslab.cassandra.cql import CqlClient
from casslab.cassandra.distribution import DEFAULT_VERSION, resolve
from casslab.core.paths import default_cache
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts import cluster
from casslab.testbed.hosts import inventory as inv
from casslab.testbed.hosts.provision import RemoteNode, provision
from casslab.testbed.hosts.ssh import Fleet, HostError

sys.path.insert(0, str(Path(__file__).parent.parent))
from labtools import wipe_node_data

pytestmark = pytest.mark.integration

BIN = Path(__file__).resolve().parents[2] / "target" / "release"


def _write(tmp_path: Path, doc: dict[str, object]) -> tuple[Path, inv.Inventory]:
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path, inv.load(path)


@pytest.fixture(scope="module")
def provisioned(ssh_hosts: SshHosts, tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[inv.Inventory, list[RemoteNode]]:
    tmp_path = tmp_path_factory.mktemp("prov")
    path, inventory = _write(tmp_path, ssh_hosts.ansible_inventory(nodes=2))
    nodes = provision(path, inventory, resolve(DEFAULT_VERSION, default_cache()), BIN,
                      tmp_path / "staging", default_cache(), lab_name="prov",
                      overrides={"concurrent_writes": 8}, ssh_args=ssh_hosts.ssh_args)
    return inventory, nodes


def test_the_playbook_installs_jars_binaries_and_each_nodes_config(
        ssh_hosts: SshHosts, provisioned: tuple[inv.Inventory, list[RemoteNode]]) -> None:
    dist = resolve(DEFAULT_VERSION, default_cache())
    nodes = provisioned[1]
    jars = sorted(p.name for p in dist.lib_dir.glob("*.jar"))
    seed = ssh_hosts.hosts[0].address
    for node, host in zip(nodes, ssh_hosts.hosts, strict=True):
        root = host.install_root
        assert sorted(p.name for p in (root / "cassandra" / "lib").glob("*.jar")) == jars
        assert (root / "bin" / "casslab-load").stat().st_mode & 0o111
        conf = yaml.safe_load((root / "node" / "conf" / "cassandra.yaml").read_text())
        assert conf["listen_address"] == host.address == node.layout.address
        assert conf["seed_provider"][0]["parameters"][0]["seeds"].startswith(seed + ":")
        assert conf["concurrent_writes"] == 8
        assert conf["data_file_directories"] == [str(root / "node" / "data")]


def test_a_failing_step_names_the_host_and_the_step(ssh_hosts: SshHosts,
                                                    tmp_path: Path) -> None:
    doc = ssh_hosts.ansible_inventory(nodes=1)
    host = ssh_hosts.hosts[0].name
    # /proc refuses new directories: the install root cannot be made.
    doc["all"]["children"]["nodes"]["hosts"][host]["casslab_install_root"] = "/proc/casslab"  # type: ignore[index]
    path, inventory = _write(tmp_path, doc)
    dist = resolve(DEFAULT_VERSION, default_cache())
    with pytest.raises(HostError, match=rf"^{host}: Install root: ") as info:
        provision(path, inventory, dist, BIN, tmp_path / "staging", default_cache(),
                  lab_name="prov", overrides={}, ssh_args=ssh_hosts.ssh_args)
    assert "\n" not in str(info.value)


def test_nodes_start_over_ssh_form_one_cluster_and_stop(
        ssh_hosts: SshHosts, provisioned: tuple[inv.Inventory, list[RemoteNode]]) -> None:
    inventory, nodes = provisioned
    dist = resolve(DEFAULT_VERSION, default_cache())

    async def up() -> list[cluster.Started]:
        async with Fleet(inventory.hosts, known_hosts=ssh_hosts.known_hosts) as fleet:
            started = await cluster.start(fleet, nodes, dist, heap_mib=512)
            await cluster.wait_cql(fleet, started, timeout_s=240)
            return started

    async def down() -> None:
        async with Fleet(inventory.hosts, known_hosts=ssh_hosts.known_hosts) as fleet:
            await cluster.stop(fleet, nodes)

    try:
        started = asyncio.run(up())
        cluster.wait_all_normal(nodes, timeout_s=120)
        addresses = [n.layout.address for n in nodes]
        with CqlClient(addresses, netns=None) as cql:
            cql.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
            cql.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
            cql.execute("INSERT INTO ks.t (k, v) VALUES (1, 'x')", consistency="ALL")
            rows = cql.execute("SELECT v FROM ks.t WHERE k = 1", consistency="ALL",
                               host=addresses[1]).rows
        assert rows == [["x"]]
    finally:
        asyncio.run(down())
        wipe_node_data(ssh_hosts)
    assert all(not Path(f"/proc/{s.pid}/cmdline").exists()
               or b"casslab.node" not in Path(f"/proc/{s.pid}/cmdline").read_bytes()
               for s in started)
