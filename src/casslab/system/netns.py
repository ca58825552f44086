"""The lab's network namespace: its own loopback, its addresses, its packet rules.

Deleting the namespace removes every address, rule and queue the lab made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from casslab.core.errors import CommandError, NetnsError, PrerequisiteError
from casslab.system.process import kill_now, run

NETNS_DIR = Path("/var/run/netns")


def namespace_name(lab_system_name: str) -> str:
    return f"casslab-{lab_system_name}"


def can_use_namespaces() -> bool:
    """Namespaces need root (CAP_SYS_ADMIN) and the `ip` command."""
    return os.geteuid() == 0 and shutil.which("ip") is not None


def exists(ns: str) -> bool:
    return (NETNS_DIR / ns).exists()


def create(ns: str, addresses: list[str]) -> None:
    """Create the namespace with lo up and one /32 per node address on lo.

    Raises NetnsError when it exists already or `ip` fails.
    """
    if shutil.which("ip") is None:
        raise PrerequisiteError("`ip` not found: install iproute2")
    if exists(ns):
        raise NetnsError(f"network namespace {ns} already exists (run `casslab lab down`)")
    try:
        run(["ip", "netns", "add", ns])
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
        for address in addresses:
            run(["ip", "-n", ns, "addr", "add", f"{address}/32", "dev", "lo"])
    except CommandError as exc:
        delete(ns)
        raise NetnsError(f"cannot set up network namespace {ns}: {exc}") from exc


IDENTITY_CHAIN = "CASSLAB_ID"


def install_identity_marks(ns: str, identities: list[tuple[int, str]]) -> None:
    """Give every connection a node opens a conntrack mark equal to the node's number.

    Cassandra does not bind its outbound internode sockets to its listen address, so
    a packet's addresses do not tell which node sent it; the node's cgroup v2 path
    (`identities`: (node number, path)) does. The marks must be there before the
    nodes connect: Cassandra keeps its internode connections open for good, so rules
    added later (by `casslab net`) would never see them start.
    """
    if shutil.which("iptables") is None:
        raise PrerequisiteError("`iptables` not found: install iptables")
    lines = ["*mangle", f":{IDENTITY_CHAIN} - [0:0]"]
    for index, path in identities:
        lines.append(f"-A {IDENTITY_CHAIN} -m cgroup --path {path} -m conntrack --ctstate NEW "
                     f"-j CONNMARK --set-mark {index}")
    lines += [f"-A OUTPUT -j {IDENTITY_CHAIN}", "COMMIT", ""]
    proc = subprocess.run([*exec_prefix(ns), "iptables-restore", "--noflush"],
                          input="\n".join(lines), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NetnsError(f"cannot install node identity marks in {ns}: {proc.stderr.strip()}")


def enter_prefix(target: str | Path) -> list[str]:
    """The one way casslab enters a network namespace: `nsenter --net=<file>`, for a
    namespace name (under NETNS_DIR) or the path of any namespace file (a container's
    or a node's own stack).

    nsenter, not `ip netns exec`: the latter also remounts /sys, which hides this
    machine's cgroup tree (where LXC places its containers and where a stand-in host's
    nodes get their limits), and it forks a mount namespace per command for nothing.
    """
    path = target if isinstance(target, Path) else NETNS_DIR / target
    return ["nsenter", f"--net={path}"]


def exec_prefix(ns: str | None) -> list[str]:
    """Prefix that runs a command inside the namespace (empty without one)."""
    return enter_prefix(ns) if ns else []


def pids(ns: str) -> list[int]:
    """Processes whose network namespace is `ns`."""
    if not exists(ns):
        return []
    try:
        out = run(["ip", "netns", "pids", ns])
    except CommandError:
        return []
    return [int(p) for p in out.split()]


def delete(ns: str) -> None:
    """Kill every process left inside, then delete the namespace. Idempotent."""
    if not exists(ns):
        return
    for pid in pids(ns):
        kill_now(pid, None)
    try:
        run(["ip", "netns", "delete", ns])
    except CommandError as exc:
        raise NetnsError(f"cannot delete network namespace {ns}: {exc}") from exc


def add_bridge(ns: str, bridge: str, address_cidr: str) -> None:
    """A bridge inside namespace `ns`, up, holding `address_cidr` (e.g. 10.99.0.254/24):
    the lab's own address on the segment its nodes' veths join.

    Raises NetnsError when `ip` fails.
    """
    try:
        run(["ip", "-n", ns, "link", "add", bridge, "type", "bridge"])
        run(["ip", "-n", ns, "addr", "add", address_cidr, "dev", bridge])
        run(["ip", "-n", ns, "link", "set", bridge, "up"])
    except CommandError as exc:
        raise NetnsError(f"cannot create bridge {bridge} in {ns}: {exc}") from exc


def add_veth(ns: str, bridge: str, port: str, peer_ns: str, peer: str,
             address_cidr: str, *, isolated: bool = True) -> None:
    """A veth pair: end `port` in `ns` a port of `bridge` (isolated unless told not to),
    end `peer` in `peer_ns` holding `address_cidr`; both up, and lo of `peer_ns` up.

    Both ends go when either namespace is deleted, so the pair needs no clean-up of
    its own. Raises NetnsError when `ip` fails.
    """
    try:
        run(["ip", "-n", ns, "link", "add", port, "type", "veth", "peer", "name", peer,
             "netns", peer_ns])
        _bridge_port(ns, bridge, port, isolated=isolated)
        run(["ip", "-n", peer_ns, "addr", "add", address_cidr, "dev", peer])
        run(["ip", "-n", peer_ns, "link", "set", peer, "up"])
        run(["ip", "-n", peer_ns, "link", "set", "lo", "up"])
    except CommandError as exc:
        raise NetnsError(f"cannot join {peer_ns} to bridge {bridge} of {ns}: {exc}") from exc


def add_empty(ns: str) -> None:
    """A new namespace with nothing in it (lo down); NetnsError when it exists."""
    if exists(ns):
        raise NetnsError(f"network namespace {ns} already exists (run `casslab lab down`)")
    try:
        run(["ip", "netns", "add", ns])
    except CommandError as exc:
        raise NetnsError(f"cannot create network namespace {ns}: {exc}") from exc


def add_veth_pair(ns: str, bridge: str, port: str, peer: str, peer_ns: str) -> None:
    """A veth pair: `port` in `ns`, an isolated port of `bridge`, up; `peer` in `peer_ns`,
    left down for a container runtime to move into the container's namespace.
    NetnsError when `ip` fails."""
    try:
        run(["ip", "-n", ns, "link", "add", port, "type", "veth", "peer", "name", peer,
             "netns", peer_ns])
        _bridge_port(ns, bridge, port)
    except CommandError as exc:
        raise NetnsError(f"cannot add veth {port} to bridge {bridge} of {ns}: {exc}") from exc


def _bridge_port(ns: str, bridge: str, port: str, *, isolated: bool = True) -> None:
    # Isolated: the port reaches only the bridge itself, never another port, so
    # traffic between endpoints is routed by `ns` (see casslab.lab.bridge).
    run(["ip", "-n", ns, "link", "set", port, "master", bridge])
    if isolated:
        run(["ip", "-n", ns, "link", "set", "dev", port, "type", "bridge_slave", "isolated",
             "on"])
    run(["ip", "-n", ns, "link", "set", port, "up"])
