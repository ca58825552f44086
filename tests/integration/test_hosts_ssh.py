"""The SSH driver against stand-in hosts: commands and copies on every host at once, and
each way a host can fail is one error naming it."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts.inventory import Host
from casslab.testbed.hosts.ssh import Fleet, HostError

pytestmark = pytest.mark.integration


def _hosts(ssh_hosts: SshHosts, key: Path | None = None) -> list[Host]:
    return [Host(name=h.name, address=h.address, roles=("nodes",), key_file=key or ssh_hosts.key,
                 install_root=str(h.install_root)) for h in ssh_hosts.hosts]


def test_a_command_runs_on_every_host_at_once(ssh_hosts: SshHosts) -> None:
    async def go() -> dict[str, str]:
        async with Fleet(_hosts(ssh_hosts), known_hosts=ssh_hosts.known_hosts) as fleet:
            results = await fleet.run("ip -o -4 addr show dev eth0")
        return {name: r.stdout for name, r in results.items()}

    out = asyncio.run(go())
    for h in ssh_hosts.hosts:
        assert f"inet {h.address}/24" in out[h.name]


def test_a_pushed_file_arrives_intact_on_every_host(ssh_hosts: SshHosts, tmp_path: Path) -> None:
    payload = tmp_path / "payload.bin"
    payload.write_bytes(bytes(range(256)) * 4096)
    hosts = _hosts(ssh_hosts)

    async def go() -> None:
        async with Fleet(hosts, known_hosts=ssh_hosts.known_hosts) as fleet:
            for h in hosts:
                await fleet.push(payload, f"{h.install_root}/bin/payload.bin", hosts=[h],
                                 mode=0o755)

    asyncio.run(go())
    for h in ssh_hosts.hosts:
        copy = h.install_root / "bin" / "payload.bin"
        assert copy.read_bytes() == payload.read_bytes()
        assert copy.stat().st_mode & 0o777 == 0o755


def test_a_failing_command_names_the_host_and_its_error(ssh_hosts: SshHosts) -> None:
    async def go() -> None:
        async with Fleet(_hosts(ssh_hosts)[:1], known_hosts=ssh_hosts.known_hosts) as fleet:
            await fleet.run("echo broken >&2; exit 3")

    first = re.escape(ssh_hosts.hosts[0].name)
    with pytest.raises(HostError, match=rf"^{first} \(10\.98\.\d+\.10\): `.*` exited 3: "
                       r"broken$"):
        asyncio.run(go())


def test_a_wrong_key_is_permission_denied_naming_the_host(ssh_hosts: SshHosts,
                                                          tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)],
                   check=True)

    async def go() -> None:
        async with Fleet(_hosts(ssh_hosts, other), known_hosts=ssh_hosts.known_hosts):
            pass

    first = re.escape(ssh_hosts.hosts[0].name)
    with pytest.raises(HostError, match=rf"{first} .*permission denied for root with key "):
        asyncio.run(go())


def test_an_unreachable_host_is_one_line_naming_it(ssh_hosts: SshHosts) -> None:
    good = _hosts(ssh_hosts)[0]
    gone = dataclasses.replace(good, name="ghost", address=good.address.rsplit(".", 1)[0]
                               + ".99")

    async def go() -> None:
        async with Fleet([good, gone], known_hosts=ssh_hosts.known_hosts,
                         connect_timeout_s=3):
            pass

    with pytest.raises(HostError, match=r"^ghost \(10\.98\.\d+\.99\): ") as info:
        asyncio.run(go())
    assert "\n" not in str(info.value)
