"""Stand-in hosts on this machine: network namespaces on one bridge, each with its own sshd.

The hosts backend (issue "Scale-out") drives real machines over SSH. Here, to test it for
real without other machines, each "host" is a network namespace with its own address, its
own sshd (Debian's openssh-server, started by us, never as a system service), a host key
and an install root of its own; a per-run key pair is the only way in. The controller
reaches them through a veth from this namespace to their bridge, so every packet stays
between namespaces created here.

    hosts = start("t1", 3, Path("/tmp/hosts"))
    ... ssh -i hosts.key root@hosts.hosts[0].address ...
    stop(hosts)

Deleting the namespaces kills their sshd; `stop` also removes the controller's veth.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casslab.core.errors import CommandError, NetnsError, PrerequisiteError, UsageError
from casslab.system import netns
from casslab.system.process import run

SSHD = Path("/usr/sbin/sshd")
# sshd refuses to start without its privilege separation directory (a compile-time path).
PRIVSEP_DIR = Path("/run/sshd")
PREFIX = "10.98"
CONTROLLER_HOST = 1
FIRST_HOST = 10
MAX_HOSTS = 200


@dataclass(frozen=True)
class SshHost:
    name: str
    address: str
    namespace: str
    install_root: Path


@dataclass(frozen=True)
class SshHosts:
    name: str
    hosts: tuple[SshHost, ...]
    key: Path  # private key; the public one is key + ".pub"
    known_hosts: Path
    directory: Path
    hub: str  # namespace holding the bridge
    controller_if: str  # this namespace's end of the veth to the bridge

    def ssh_command(self, host: SshHost, *command: str) -> list[str]:
        """An `ssh` command line that runs `command` on `host` as root with the run's key."""
        return ["ssh", "-i", str(self.key), "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                "-o", "ConnectTimeout=5", f"root@{host.address}", *command]


    @property
    def ssh_args(self) -> str:
        """OpenSSH options that trust exactly these hosts' keys (for Ansible)."""
        return (f"-o UserKnownHostsFile={self.known_hosts} -o StrictHostKeyChecking=yes "
                "-o BatchMode=yes")

    def ansible_inventory(self, nodes: int, clients: int = 0) -> dict[str, Any]:
        """An Ansible YAML inventory (as a dict): the first `nodes` hosts in group
        `nodes`, the next `clients` in group `clients`."""
        if nodes + clients > len(self.hosts):
            raise UsageError(f"{nodes} nodes + {clients} clients: only {len(self.hosts)} "
                             "stand-in hosts")

        def group(hosts: tuple[SshHost, ...]) -> dict[str, Any]:
            return {"hosts": {h.name: {"ansible_host": h.address,
                                       "casslab_install_root": str(h.install_root)}
                              for h in hosts}}

        return {"all": {"vars": {"ansible_user": "root",
                                 "ansible_ssh_private_key_file": str(self.key),
                                 "ansible_ssh_common_args": self.ssh_args},
                        "children": {"nodes": group(self.hosts[:nodes]),
                                     "clients": group(self.hosts[nodes:nodes + clients])}}}


def check_name(name: str) -> str:
    # Interface names are at most 15 bytes: `<name>-c` must fit.
    if not name or len(name) > 10 or not all(c.isalnum() for c in name):
        raise UsageError(f"hosts name {name!r}: use 1-10 letters or digits")
    return name


def _free_subnet() -> int:
    used = run(["ip", "-o", "-4", "addr", "show"], check=False)
    for third in range(1, 255):
        if f" {PREFIX}.{third}." not in used:
            return third
    raise NetnsError(f"no free {PREFIX}.x.0/24 subnet for stand-in hosts")


def _prerequisites() -> None:
    if not netns.can_use_namespaces():
        raise PrerequisiteError("stand-in hosts need root and `ip` (iproute2)")
    for tool, package in ((str(SSHD), "openssh-server"), ("ssh-keygen", "openssh-client")):
        if shutil.which(tool) is None:
            raise PrerequisiteError(f"`{tool}` not found: install {package} "
                                    "(`make setup` does, without starting a system sshd)")


def _keygen(path: Path, comment: str) -> None:
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])


def _sshd_config(host: SshHost, host_dir: Path, authorized: Path,
                 session_path: str | None = None) -> str:
    return "\n".join([
        f"ListenAddress {host.address}",
        "Port 22",
        f"HostKey {host_dir / 'host_key'}",
        f"PidFile {host_dir / 'sshd.pid'}",
        f"AuthorizedKeysFile {authorized}",
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        # The run's directory is under /tmp; sshd's ownership checks would refuse it.
        "StrictModes no",
        "Subsystem sftp internal-sftp",
        f"SetEnv CASSLAB_INSTALL_ROOT={host.install_root}" + (
            f" PATH={session_path}" if session_path else ""),
        "LogLevel ERROR",
        "",
    ])


def _wait_listening(address: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((address, 22), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise NetnsError(f"sshd of stand-in host {address} did not listen within "
                                 f"{timeout_s:g} s") from None
            time.sleep(0.1)


def start(name: str, count: int, directory: Path, *, timeout_s: float = 20.0,
          session_path: str | None = None) -> SshHosts:
    """`count` stand-in hosts named `<name>h1..`, files under `directory` (created).

    session_path: the PATH of every SSH session instead of sshd's default; a PATH without
    /usr/bin makes hosts that have neither Java nor apt (the hosts share this machine's
    files, so that is the way to take tools away).

    On failure everything made so far is removed before the error is raised.
    """
    check_name(name)
    if not 1 <= count <= MAX_HOSTS:
        raise UsageError(f"hosts count {count}: use 1-{MAX_HOSTS}")
    _prerequisites()
    directory.mkdir(parents=True, exist_ok=True)
    hub = f"casslab-{name}-hub"
    hosts = SshHosts(name=name, hosts=(), key=directory / "id_ed25519",
                     known_hosts=directory / "known_hosts", directory=directory, hub=hub,
                     controller_if=f"{name}-c")
    try:
        return _start(hosts, count, timeout_s, session_path)
    except BaseException:
        stop(hosts, count=count)
        raise


def _start(hosts: SshHosts, count: int, timeout_s: float,
           session_path: str | None) -> SshHosts:
    third = _free_subnet()
    subnet = f"{PREFIX}.{third}"
    netns.add_empty(hosts.hub)
    try:
        run(["ip", "-n", hosts.hub, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", hosts.hub, "link", "set", "br0", "up"])
        # This namespace's way in: a veth whose far end is a port of the bridge.
        run(["ip", "link", "add", hosts.controller_if, "type", "veth", "peer", "name", "ctl",
             "netns", hosts.hub])
        run(["ip", "-n", hosts.hub, "link", "set", "ctl", "master", "br0"])
        run(["ip", "-n", hosts.hub, "link", "set", "ctl", "up"])
        run(["ip", "addr", "add", f"{subnet}.{CONTROLLER_HOST}/24", "dev", hosts.controller_if])
        run(["ip", "link", "set", hosts.controller_if, "up"])
    except CommandError as exc:
        raise NetnsError(f"cannot create the stand-in hosts' bridge: {exc}") from exc
    _keygen(hosts.key, f"casslab-{hosts.name}")
    authorized = hosts.directory / "authorized_keys"
    shutil.copyfile(hosts.key.with_name(hosts.key.name + ".pub"), authorized)
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    made: list[SshHost] = []
    known: list[str] = []
    for i in range(1, count + 1):
        host = SshHost(name=f"{hosts.name}h{i}", address=f"{subnet}.{FIRST_HOST + i - 1}",
                       namespace=f"casslab-{hosts.name}-h{i}",
                       install_root=hosts.directory / f"h{i}" / "root")
        host_dir = hosts.directory / f"h{i}"
        host.install_root.mkdir(parents=True, exist_ok=True)
        _keygen(host_dir / "host_key", host.name)
        config = host_dir / "sshd_config"
        config.write_text(_sshd_config(host, host_dir, authorized, session_path))
        netns.add_empty(host.namespace)
        made.append(host)
        # Not isolated: hosts talk to each other directly, as machines on one switch.
        netns.add_veth(hosts.hub, "br0", f"h{i}", host.namespace, "eth0",
                       f"{host.address}/24", isolated=False)
        # nsenter, not `ip netns exec`: the latter remounts /sys, which hides this
        # machine's cgroup tree, where a host's nodes get their profile's limits.
        enter = ["nsenter", f"--net={netns.NETNS_DIR / host.namespace}"]
        proc = subprocess.run([*enter, str(SSHD), "-f", str(config),
                               "-E", str(host_dir / "sshd.log")],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise NetnsError(f"sshd of stand-in host {host.name} did not start: "
                             f"{(proc.stderr or proc.stdout).strip()}")
        public = (host_dir / "host_key.pub").read_text().split()
        known.append(f"{host.address} {public[0]} {public[1]}")
    hosts.known_hosts.write_text("\n".join(known) + "\n")
    for host in made:
        _wait_listening(host.address, timeout_s)
    return SshHosts(name=hosts.name, hosts=tuple(made), key=hosts.key,
                    known_hosts=hosts.known_hosts, directory=hosts.directory, hub=hosts.hub,
                    controller_if=hosts.controller_if)


def stop(hosts: SshHosts, *, count: int | None = None) -> None:
    """Kill every sshd and process of the hosts, delete their namespaces and the veth.
    Idempotent; `count` covers hosts that a failed start had not recorded yet."""
    n = count if count is not None else len(hosts.hosts)
    for i in range(1, max(n, len(hosts.hosts)) + 1):
        netns.delete(f"casslab-{hosts.name}-h{i}")
    netns.delete(hosts.hub)  # takes the controller's veth with it
    run(["ip", "link", "delete", hosts.controller_if], check=False)
