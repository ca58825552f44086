"""`casslab lab up --inventory` refuses bad input with one line naming the host, exits
non-zero, and leaves nothing running on the other hosts (no JVM, no lab record)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from casslab.core.paths import default_home
from casslab.system import sshhosts
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts.record import list_hosts_labs

sys.path.insert(0, str(Path(__file__).parent.parent))
from labtools import casslab, hosts_name

pytestmark = pytest.mark.integration

LAB = "hbad"


@pytest.fixture(scope="module")
def bare_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHosts]:
    """A host with neither Java nor apt: its sessions' PATH holds every tool of /usr/bin
    except those (the stand-in hosts share this machine's files)."""
    if not sshhosts.SSHD.exists():
        pytest.skip("openssh-server is installed by `make setup`")
    directory = tmp_path_factory.mktemp("bare")
    tools = directory / "bin"
    tools.mkdir()
    for tool in Path("/usr/bin").iterdir():
        if not tool.name.startswith(("apt", "java", "dpkg")):
            (tools / tool.name).symlink_to(tool)
    made = sshhosts.start(hosts_name("hb"), 1, directory / "hosts", session_path=str(tools))
    yield made
    sshhosts.stop(made)


def _up(tmp_path: Path, doc: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(doc))
    return casslab("lab", "up", "--name", LAB, "--inventory", str(path), "--timeout", "120s",
                   timeout_s=600)


def _assert_one_line_and_nothing_left(run: subprocess.CompletedProcess[str], host: str,
                                      hosts: SshHosts) -> None:
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and host in lines[0], run.stderr
    jvms = subprocess.run(["pgrep", "-af", "CassandraDaemon"], capture_output=True, text=True,
                          check=False).stdout
    assert str(hosts.directory) not in jvms
    assert LAB not in [r.name for r in list_hosts_labs(default_home())]


def test_an_unreachable_host_is_named(ssh_hosts: SshHosts, tmp_path: Path) -> None:
    doc = ssh_hosts.ansible_inventory(nodes=1)
    ghost = ssh_hosts.hosts[0].address.rsplit(".", 1)[0] + ".250"
    doc["all"]["children"]["nodes"]["hosts"]["ghost"] = {"ansible_host": ghost}
    _assert_one_line_and_nothing_left(_up(tmp_path, doc), "ghost", ssh_hosts)


def test_a_wrong_key_is_named(ssh_hosts: SshHosts, tmp_path: Path) -> None:
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    doc = ssh_hosts.ansible_inventory(nodes=2)
    second = ssh_hosts.hosts[1].name
    doc["all"]["children"]["nodes"]["hosts"][second]["ansible_ssh_private_key_file"] = str(other)
    _assert_one_line_and_nothing_left(_up(tmp_path, doc), second, ssh_hosts)


def test_a_node_without_java_and_without_apt_is_named(bare_host: SshHosts,
                                                      tmp_path: Path) -> None:
    doc = bare_host.ansible_inventory(nodes=1)
    run = _up(tmp_path, doc)
    _assert_one_line_and_nothing_left(run, bare_host.hosts[0].name, bare_host)
    assert "no Java" in run.stderr and "no apt" in run.stderr


def test_a_duplicate_address_is_named(ssh_hosts: SshHosts, tmp_path: Path) -> None:
    doc = ssh_hosts.ansible_inventory(nodes=1)
    doc["all"]["children"]["nodes"]["hosts"]["twin"] = {
        "ansible_host": ssh_hosts.hosts[0].address}
    _assert_one_line_and_nothing_left(_up(tmp_path, doc), "twin", ssh_hosts)


def test_an_inventory_without_a_node_is_refused(ssh_hosts: SshHosts, tmp_path: Path) -> None:
    doc = ssh_hosts.ansible_inventory(nodes=0, clients=1)
    run = _up(tmp_path, doc)
    _assert_one_line_and_nothing_left(run, "nodes", ssh_hosts)
