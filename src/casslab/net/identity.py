"""Which node a connection belongs to: the nodes' cgroup v2 identity cgroups.

Every lab node runs in `casslab/<lab system name>/node<i>` on the cgroup v2 hierarchy
(the unified mount on cgroup-v1 machines), see `casslab.hardware.cgroups.identity_path`.
Packet rules match a socket's cgroup there (`iptables -m cgroup --path`), so the link
probes of `casslab net check` create a node's sockets inside that node's cgroup.

Bare namespaces (tests, benchmarks: no Cassandra) create and remove these cgroups
themselves with `create_bare` / `remove_bare`.
"""

from __future__ import annotations

import os
from pathlib import Path

from casslab.core.errors import CgroupError
from casslab.hardware.cgroups import detect_layout, identity_path, remove_dirs
from casslab.net.errors import NetError

NETNS_PREFIX = "casslab-"


def system_name_of(netns: str) -> str:
    """The lab system name behind a lab namespace name (`casslab-<system name>`); a
    namespace without the prefix (bare test namespaces) stands for itself."""
    return netns.removeprefix(NETNS_PREFIX)


def v2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, or None."""
    try:
        return detect_layout().v2_mount
    except (CgroupError, OSError):
        return None


def node_paths(system_name: str, node_count: int) -> dict[str, str]:
    """node name -> cgroup v2 path (relative to the v2 root) for every node."""
    return {f"node{i}": identity_path(system_name, f"node{i}")
            for i in range(1, node_count + 1)}


def existing(system_name: str, node_count: int) -> dict[str, str]:
    """Like `node_paths`, only the nodes whose identity cgroup exists now."""
    mount = v2_mount()
    if mount is None:
        return {}
    return {n: p for n, p in node_paths(system_name, node_count).items()
            if (mount / p).is_dir()}


def own_cgroup_dir(mount: Path) -> Path:
    """This process's cgroup v2 directory (from /proc/self/cgroup's `0::` line)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return mount / line[3:].strip().lstrip("/")
    raise NetError("this process has no cgroup v2 membership (no 0:: line in "
                   "/proc/self/cgroup)")


def create_bare(system_name: str, node_count: int) -> list[Path]:
    """Create the identity cgroups of a namespace without a lab (tests, benchmarks).

    Returns the created directories; raises NetError without a cgroup v2 mount.
    """
    mount = v2_mount()
    if mount is None:
        raise NetError("no cgroup v2 hierarchy mounted: node identity cgroups need one")
    made: list[Path] = []
    try:
        for p in node_paths(system_name, node_count).values():
            d = mount / p
            d.mkdir(parents=True, exist_ok=True)
            made.append(d)
    except OSError as exc:
        remove_bare(made)
        raise NetError(f"cannot create identity cgroups under {mount}: {exc}") from exc
    return made


def remove_bare(dirs: list[Path], timeout_s: float = 5.0) -> None:
    """Remove identity cgroups made by `create_bare`, and their parents once empty
    (`casslab/<name>`, `casslab`; a parent still used by a lab stays).

    Raises NetError when a directory stays busy (a process is still inside).
    """
    try:
        remove_dirs(dirs, timeout_s=timeout_s)
    except CgroupError as exc:
        raise NetError(str(exc)) from exc


def open_procs(dirs: dict[str, Path]) -> dict[str, int]:
    """Open each cgroup's `cgroup.procs` for writing (before entering a namespace:
    the command may run where /sys/fs/cgroup is hidden). The caller closes the descriptors."""
    fds: dict[str, int] = {}
    try:
        for name, d in dirs.items():
            fds[name] = os.open(d / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError as exc:
        for fd in fds.values():
            os.close(fd)
        raise NetError(f"cannot open {d / 'cgroup.procs'}: {exc.strerror}") from exc
    return fds
