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

With `systemd=True` each host is also a machine whose PID 1 is systemd: an LXC system
container sharing the host's namespace, booted from a cached Debian root filesystem
(systemd, openssh-server, python3), in which systemd starts the sshd. That is the only
way here to run what casslab does on systemd hosts (transient units with the profile's
limits): this machine's PID 1 is not systemd. The machine's JDK is bind-mounted read-only
at its own path (`SshHost.java_home`, given to Ansible as `casslab_java_home`), the
host's directory read-write, so the install root has the same path inside and out.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casslab.core.errors import CommandError, NetnsError, PrerequisiteError, UsageError
from casslab.system import lxcbase, netns
from casslab.system.process import run

SSHD = Path("/usr/sbin/sshd")
# sshd refuses to start without its privilege separation directory (a compile-time path).
PRIVSEP_DIR = Path("/run/sshd")
PREFIX = "10.98"
CONTROLLER_HOST = 1
FIRST_HOST = 10
MAX_HOSTS = 200
# What a systemd host's machine needs beyond minbase: its init, the sshd it starts, the
# Python Ansible runs, and tools a shell on it uses.
SYSTEMD_PACKAGES = ("systemd", "systemd-sysv", "dbus", "openssh-server", "python3",
                    "iproute2", "procps")
SYSTEMD_FLAVOUR = "systemd"
STOP_TIMEOUT_S = 30
# Held from choosing a free subnet until this namespace has an address in it: two sets
# started at once (two pytest workers, two users) would otherwise pick the same one.
SUBNET_LOCK = Path("/run/lock/casslab-sshhosts.lock")


@dataclass(frozen=True)
class SshHost:
    name: str
    address: str
    namespace: str
    install_root: Path
    # Set on systemd hosts: the machine's JDK (bind-mounted) and the host's container.
    java_home: Path | None = None
    container: str | None = None


@dataclass(frozen=True)
class SshHosts:
    name: str
    hosts: tuple[SshHost, ...]
    key: Path  # private key; the public one is key + ".pub"
    known_hosts: Path
    directory: Path
    hub: str  # namespace holding the bridge
    controller_if: str  # this namespace's end of the veth to the bridge
    systemd: bool = False  # each host a systemd machine (an LXC system container)

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
            return {"hosts": {h.name: _host_vars(h) for h in hosts}}

        return {"all": {"vars": {"ansible_user": "root",
                                 "ansible_ssh_private_key_file": str(self.key),
                                 "ansible_ssh_common_args": self.ssh_args},
                        "children": {"nodes": group(self.hosts[:nodes]),
                                     "clients": group(self.hosts[nodes:nodes + clients])}}}


def _host_vars(host: SshHost) -> dict[str, str]:
    out = {"ansible_host": host.address, "casslab_install_root": str(host.install_root)}
    if host.java_home is not None:
        out["casslab_java_home"] = str(host.java_home)
    return out


def ensure_machine_rootfs(cache: Path, say: lxcbase.Say = lambda _: None) -> Path:
    """The systemd hosts' root filesystem under `cache`, built once (`make setup` does)."""
    return lxcbase.ensure_rootfs(cache, say, SYSTEMD_PACKAGES, flavour=SYSTEMD_FLAVOUR,
                                 purpose="systemd stand-in hosts")


def host_name(hosts_name: str, index: int) -> str:
    """Host `index`'s name, also its machine's container name (machine-wide unique)."""
    return f"{hosts_name}h{index}"


def host_namespace(hosts_name: str, index: int) -> str:
    return f"casslab-{hosts_name}-h{index}"


def check_name(name: str) -> str:
    # Interface names are at most 15 bytes: `<name>-c` must fit.
    if not name or len(name) > 10 or not all(c.isalnum() for c in name):
        raise UsageError(f"hosts name {name!r}: use 1-10 letters or digits")
    return name


@contextlib.contextmanager
def _subnet_lock() -> Iterator[None]:
    SUBNET_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with SUBNET_LOCK.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
          session_path: str | None = None, systemd: bool = False,
          cache: Path | None = None) -> SshHosts:
    """`count` stand-in hosts named `<name>h1..`, files under `directory` (created).

    session_path: the PATH of every SSH session instead of sshd's default; a PATH without
    /usr/bin makes hosts that have neither Java nor apt (the hosts share this machine's
    files, so that is the way to take tools away).
    systemd: each host a systemd machine (module docstring); its root filesystem is
    built once under `cache` (mmdebstrap, about 30 s and 260 MB).

    On failure everything made so far is removed before the error is raised.
    """
    check_name(name)
    if not 1 <= count <= MAX_HOSTS:
        raise UsageError(f"hosts count {count}: use 1-{MAX_HOSTS}")
    if systemd and session_path is not None:
        raise UsageError("stand-in hosts: session_path takes tools away from hosts that "
                         "share this machine's files; systemd hosts have their own")
    _prerequisites()
    rootfs = None
    if systemd:
        if cache is None:
            raise UsageError("systemd stand-in hosts need a cache directory for their root "
                             "filesystem")
        rootfs = ensure_machine_rootfs(cache)
    directory.mkdir(parents=True, exist_ok=True)
    hub = f"casslab-{name}-hub"
    hosts = SshHosts(name=name, hosts=(), key=directory / "id_ed25519",
                     known_hosts=directory / "known_hosts", directory=directory, hub=hub,
                     controller_if=f"{name}-c", systemd=systemd)
    try:
        return _start(hosts, count, timeout_s, session_path, rootfs)
    except BaseException:
        stop(hosts, count=count)
        raise


def _start(hosts: SshHosts, count: int, timeout_s: float,
           session_path: str | None, rootfs: Path | None) -> SshHosts:
    with _subnet_lock():
        subnet = f"{PREFIX}.{_free_subnet()}"
        _add_bridge(hosts, subnet)
    _keygen(hosts.key, f"casslab-{hosts.name}")
    authorized = hosts.directory / "authorized_keys"
    shutil.copyfile(hosts.key.with_name(hosts.key.name + ".pub"), authorized)
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    java_home = _java_home() if rootfs is not None else None
    made: list[SshHost] = []
    known: list[str] = []
    for i in range(1, count + 1):
        name = host_name(hosts.name, i)
        host_dir = hosts.directory / f"h{i}"
        host = SshHost(name=name, address=f"{subnet}.{FIRST_HOST + i - 1}",
                       namespace=host_namespace(hosts.name, i),
                       install_root=host_dir / "root",
                       java_home=java_home, container=name if rootfs is not None else None)
        host.install_root.mkdir(parents=True, exist_ok=True)
        _keygen(host_dir / "host_key", host.name)
        keys = authorized
        if rootfs is not None:  # the machine sees only its host's directory
            keys = host_dir / "authorized_keys"
            shutil.copyfile(authorized, keys)
        sshd_config = _sshd_config(host, host_dir, keys, session_path)
        netns.add_empty(host.namespace)
        made.append(host)
        # Not isolated: hosts talk to each other directly, as machines on one switch.
        netns.add_veth(hosts.hub, "br0", f"h{i}", host.namespace, "eth0",
                       f"{host.address}/24", isolated=False)
        if rootfs is not None:
            _boot_machine(hosts, host, host_dir, rootfs, sshd_config)
        else:
            _start_sshd(host, host_dir, sshd_config)
        public = (host_dir / "host_key.pub").read_text().split()
        known.append(f"{host.address} {public[0]} {public[1]}")
    hosts.known_hosts.write_text("\n".join(known) + "\n")
    for host in made:
        _wait_listening(host.address, timeout_s)
    return SshHosts(name=hosts.name, hosts=tuple(made), key=hosts.key,
                    known_hosts=hosts.known_hosts, directory=hosts.directory, hub=hosts.hub,
                    controller_if=hosts.controller_if, systemd=hosts.systemd)


def _add_bridge(hosts: SshHosts, subnet: str) -> None:
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


def _enter(host_namespace: str) -> list[str]:
    return netns.enter_prefix(host_namespace)


def _start_sshd(host: SshHost, host_dir: Path, sshd_config: str) -> None:
    config = host_dir / "sshd_config"
    config.write_text(sshd_config)
    proc = subprocess.run([*_enter(host.namespace), str(SSHD), "-f", str(config),
                           "-E", str(host_dir / "sshd.log")],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NetnsError(f"sshd of stand-in host {host.name} did not start: "
                         f"{(proc.stderr or proc.stdout).strip()}")


def _java_home() -> Path | None:
    java = shutil.which("java")
    return Path(java).resolve().parent.parent if java else None


def machine_binds(host_dir: Path, java_home: Path | None) -> list[tuple[Path, bool]]:
    """(path, writable) bind-mounted at the same path into a systemd host's machine: its
    directory (keys, sshd settings, install root) and the machine's JDK with the /etc
    files Debian's JDK links to."""
    return [(host_dir, True), *(lxcbase.jdk_binds(java_home) if java_home else [])]


def machine_config(*, name: str, rootfs: Path, upper: Path,
                   binds: list[tuple[Path, bool]], log: Path) -> str:
    """The LXC config of a systemd host's machine (pure). No network of its own: started
    inside the host's namespace, it shares it. Writable cgroups, so systemd can make
    its units' cgroups and write their limits."""
    lines = [
        f"lxc.uts.name = {name}",
        f"lxc.rootfs.path = overlay:{rootfs}:{upper}",
        "lxc.mount.auto = proc:mixed sys:mixed cgroup:rw:force",
        *lxcbase.mount_entries(binds),
    ]
    lines += [
        "lxc.net.0.type = none",
        "lxc.init.cmd = /lib/systemd/systemd",
        # lxc-stop asks systemd for an orderly halt with the signal systemd takes for it.
        "lxc.signal.halt = SIGRTMIN+3",
        "lxc.autodev = 1",
        "lxc.tty.max = 0",
        "lxc.pty.max = 16",
        "lxc.console.path = none",
        f"lxc.log.file = {log}",
        "lxc.log.level = WARN",
    ]
    return "\n".join(lines) + "\n"


def _machines_dir(hosts: SshHosts) -> Path:
    return hosts.directory / "machines"


def _boot_machine(hosts: SshHosts, host: SshHost, host_dir: Path, rootfs: Path,
                  sshd_config: str) -> None:
    assert host.container is not None
    machine = _machines_dir(hosts) / host.container
    upper = machine / "upper"
    (upper / "etc" / "ssh").mkdir(parents=True, exist_ok=True)
    # systemd's ssh.service reads the machine's own sshd_config.
    (upper / "etc" / "ssh" / "sshd_config").write_text(sshd_config)
    (machine / "config").write_text(machine_config(
        name=host.container, rootfs=rootfs, upper=upper,
        binds=machine_binds(host_dir, host.java_home), log=host_dir / "lxc.log"))
    try:
        run([*_enter(host.namespace), "lxc-start", "-n", host.container,
             "-P", str(_machines_dir(hosts)), "-d"])
    except CommandError as exc:
        raise NetnsError(f"stand-in host {host.name}: its systemd machine did not start: "
                         f"{exc}; see {host_dir / 'lxc.log'}") from exc


def _halt_machine(hosts: SshHosts, index: int) -> list[str]:
    """Halt host `index`'s machine (systemd stops its units), kill it if that takes
    longer than STOP_TIMEOUT_S, and remove the cgroups LXC leaves."""
    container = host_name(hosts.name, index)
    namespace = host_namespace(hosts.name, index)
    if not (_machines_dir(hosts) / container / "config").exists():
        return []
    if netns.exists(namespace):
        subprocess.run([*_enter(namespace), "lxc-stop", "-n", container, "-P",
                        str(_machines_dir(hosts)), "-t", str(STOP_TIMEOUT_S)],
                       capture_output=True, check=False, timeout=STOP_TIMEOUT_S + 30)
    return lxcbase.remove_container_cgroups(container)


def stop(hosts: SshHosts, *, count: int | None = None) -> None:
    """Kill every sshd and process of the hosts, delete their namespaces and the veth.
    Idempotent; `count` covers hosts that a failed start had not recorded yet."""
    n = count if count is not None else len(hosts.hosts)
    errors: list[str] = []
    for i in range(1, max(n, len(hosts.hosts)) + 1):
        if hosts.systemd:
            errors += _halt_machine(hosts, i)
        netns.delete(host_namespace(hosts.name, i))
    netns.delete(hosts.hub)  # takes the controller's veth with it
    run(["ip", "link", "delete", hosts.controller_if], check=False)
    if errors:
        raise NetnsError("; ".join(errors))
