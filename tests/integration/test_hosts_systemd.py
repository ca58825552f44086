"""A node on a systemd host. This machine's PID 1 is not systemd, so the stand-in host is
a machine whose PID 1 is: an LXC system container booted with systemd, sharing the
host's namespace, its sshd started by systemd. casslab then starts the node as users'
systemd hosts get it, a transient unit with the profile's limits (1 core, 1536 MiB,
40 MB/s of disk reads, 20 MB/s of writes): the unit's cgroups, read from this machine,
hold them; CQL answers; stop removes the unit; stopping the host leaves no container,
cgroup or namespace."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casslab.cassandra.cql import CqlClient
from casslab.core.paths import default_cache
from casslab.hardware.cgroups import CgroupLayout, block_device_of, detect_layout
from casslab.system import lxcbase, netns, sshhosts
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts import limits

sys.path.insert(0, str(Path(__file__).parent.parent))
from labtools import hosts_name, provision_small

LAB = "sd"
MEMORY_MIB = 1536
READ_MB_S, WRITE_MB_S = 40, 20

pytestmark = [pytest.mark.integration, pytest.mark.skipif(
    not (netns.can_use_namespaces() and sshhosts.SSHD.exists()
         and shutil.which("lxc-start") and shutil.which("mmdebstrap")),
    reason="needs root, openssh-server, lxc and mmdebstrap (`make setup`)")]


def _ssh(hosts: SshHosts, *command: str) -> str:
    return subprocess.run(hosts.ssh_command(hosts.hosts[0], *command), capture_output=True,
                          text=True, check=True, timeout=30).stdout.strip()


def _inside(container: str, unit: str) -> Path:
    """A unit's cgroup as this machine sees it, relative to a hierarchy: under LXC's
    cgroup of the host's machine, where systemd made it."""
    return Path(f"lxc.payload.{container}") / "system.slice" / unit


def _unit_cgroups(layout: CgroupLayout, container: str, unit: str) -> tuple[Path, Path]:
    """The unit's cpu and memory cgroups."""
    inside = _inside(container, unit)
    if layout.version == 1:
        return layout.v1_mounts["cpu"] / inside, layout.v1_mounts["memory"] / inside
    assert layout.v2_mount is not None
    return layout.v2_mount / inside, layout.v2_mount / inside


def _io_limits(layout: CgroupLayout, container: str, unit: str) -> dict[str, str]:
    inside = _inside(container, unit)
    if layout.version == 1:
        blkio = layout.v1_mounts["blkio"] / inside
        return {way: (blkio / f"blkio.throttle.{way}_bps_device").read_text().strip()
                for way in ("read", "write")}
    assert layout.v2_mount is not None
    device, *values = (layout.v2_mount / inside / "io.max").read_text().split()
    given = dict(v.split("=") for v in values)
    return {"read": f"{device} {given['rbps']}", "write": f"{device} {given['wbps']}"}


def _limits_of(layout: CgroupLayout, cpu: Path, memory: Path) -> tuple[str, int]:
    if layout.version == 1:
        return ((cpu / "cpu.cfs_quota_us").read_text().strip(),
                int((memory / "memory.limit_in_bytes").read_text()))
    quota = (cpu / "cpu.max").read_text().split()[0]
    return str(int(quota) * 100_000 // int((cpu / "cpu.max").read_text().split()[1])), \
        int((memory / "memory.max").read_text())


def test_a_node_on_a_systemd_host_is_a_transient_unit_holding_the_profiles_limits(
        tmp_path: Path) -> None:
    hosts = sshhosts.start(hosts_name("sd"), 1, tmp_path / "hosts", systemd=True,
                           cache=default_cache())
    host = hosts.hosts[0]
    assert host.container is not None
    try:
        assert _ssh(hosts, "cat", "/proc/1/comm") == "systemd"
        run = provision_small(hosts, tmp_path, nodes=1, lab=LAB, profile={
            "cpu_cores": 1.0, "memory_mib": MEMORY_MIB, "disk_read_mb_s": READ_MB_S,
            "disk_write_mb_s": WRITE_MB_S})
        run.start()
        started = run.started[0]
        try:
            assert started.limits.mode == limits.SYSTEMD
            unit = f"{started.limits.unit}.service"
            assert _ssh(hosts, "systemctl", "show", "-p", "MainPID", "--value",
                        unit) == str(started.pid)
            layout = detect_layout()
            cpu, memory = _unit_cgroups(layout, host.container, unit)
            assert _limits_of(layout, cpu, memory) == ("100000", MEMORY_MIB << 20)
            # The disk bandwidths on the data directory's whole disk, as the local lab
            # limits it.
            device = block_device_of(tmp_path)
            assert _io_limits(layout, host.container, unit) == {
                "read": f"{device} {READ_MB_S * 10**6}",
                "write": f"{device} {WRITE_MB_S * 10**6}"}
            with CqlClient([host.address], netns=None) as cql:
                cql.execute("CREATE KEYSPACE sd WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
                cql.execute("CREATE TABLE sd.t (k int PRIMARY KEY, v text)")
                cql.execute("INSERT INTO sd.t (k, v) VALUES (1, 'on systemd')")
                assert cql.execute("SELECT v FROM sd.t WHERE k = 1").rows == [["on systemd"]]
        finally:
            run.stop()
        assert _ssh(hosts, "systemctl", "show", "-p", "LoadState", "--value",
                    unit) == "not-found"
        assert not cpu.exists() and not memory.exists()
    finally:
        sshhosts.stop(hosts)
    assert lxcbase.container_cgroups(host.container) == []
    assert not netns.exists(host.namespace) and not netns.exists(hosts.hub)
    assert subprocess.run(["pgrep", "-f", f" {host.container}$"],
                          capture_output=True).returncode == 1

