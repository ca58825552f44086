"""Stand-in hosts: each namespace answers SSH with the run's key only, has its own address
and install root, reaches the others, and nothing of them is left after stop."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.system import netns, sshhosts

pytestmark = pytest.mark.integration


@pytest.fixture
def hosts(ssh_hosts: sshhosts.SshHosts) -> sshhosts.SshHosts:
    return ssh_hosts


def _ssh(hosts: sshhosts.SshHosts, host: sshhosts.SshHost, *cmd: str,
         key: Path | None = None) -> subprocess.CompletedProcess[str]:
    argv = hosts.ssh_command(host, *cmd)
    if key is not None:
        argv[argv.index(str(hosts.key))] = str(key)
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def test_each_host_answers_ssh_in_its_own_namespace(hosts: sshhosts.SshHosts) -> None:
    for host in hosts.hosts:
        proc = _ssh(hosts, host, "ip -o -4 addr show dev eth0; echo $CASSLAB_INSTALL_ROOT")
        assert proc.returncode == 0, proc.stderr
        assert f"inet {host.address}/24" in proc.stdout
        assert str(host.install_root) in proc.stdout


def test_hosts_reach_each_other(hosts: sshhosts.SshHosts) -> None:
    a, b = hosts.hosts
    proc = _ssh(hosts, a, f"timeout 5 bash -c 'echo > /dev/tcp/{b.address}/22'")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_another_key_is_refused(hosts: sshhosts.SshHosts, tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)],
                   check=True)
    proc = _ssh(hosts, hosts.hosts[0], "true", key=other)
    assert proc.returncode == 255
    assert "Permission denied" in proc.stderr


def test_a_bad_name_is_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="hosts name 'no-dash'"):
        sshhosts.start("no-dash", 1, tmp_path)


def test_stop_leaves_no_namespace_sshd_or_veth(tmp_path: Path) -> None:
    made = sshhosts.start("gone", 1, tmp_path)
    pids = netns.pids(made.hosts[0].namespace)
    assert pids, "sshd runs in the host's namespace"
    sshhosts.stop(made)
    assert not netns.exists(made.hub) and not netns.exists(made.hosts[0].namespace)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert f" {made.controller_if}@" not in links
    assert [p for p in pids if _running(p)] == []


def _running(pid: int) -> bool:
    # A killed daemon stays a zombie until PID 1 reaps it; only a live one counts.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
