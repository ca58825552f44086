"""Enforce hardware profiles with cgroups, v1 (this machine) or v2 (most machines).

Every node gets `casslab/<lab>/<node>` under each hierarchy it needs. What to
write is computed by pure functions (`limit_files`) so it can be checked without
root; the functions that touch /sys only create, write, join and remove.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from casslab.core.errors import CgroupError
from casslab.hardware.profiles import MIB, HardwareProfile

CFS_PERIOD_US = 100_000
V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "blkio")
V2_CONTROLLERS = ("cpu", "memory", "io")


@dataclass(frozen=True)
class CgroupLayout:
    """Where the hierarchies are mounted. version 1: one mount per controller."""

    version: int
    v1_mounts: dict[str, Path] = field(default_factory=dict)
    v2_mount: Path | None = None


def parse_mountinfo(text: str) -> CgroupLayout:
    """Detect the cgroup layout from /proc/self/mountinfo text.

    v1 wins when the controllers we need are bound to v1 hierarchies (a hybrid
    system's unified mount then carries no controllers).
    """
    v1: dict[str, Path] = {}
    v2: Path | None = None
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 5 or len(rparts) < 3:
            continue
        mount_point, fstype, options = Path(parts[4]), rparts[0], rparts[2].split(",")
        if fstype == "cgroup2":
            v2 = mount_point
        elif fstype == "cgroup":
            for ctrl in V1_CONTROLLERS:
                if ctrl in options:
                    v1[ctrl] = mount_point
    if all(c in v1 for c in ("cpu", "memory")):
        # A hybrid machine's unified mount still gives every process a v2 cgroup,
        # which packet rules match on (see `identity_path`).
        return CgroupLayout(1, v1_mounts=v1, v2_mount=v2)
    if v2 is not None:
        return CgroupLayout(2, v2_mount=v2)
    raise CgroupError("no usable cgroup hierarchy found in /proc/self/mountinfo")


def detect_layout() -> CgroupLayout:
    """The layout of this machine."""
    return parse_mountinfo(Path("/proc/self/mountinfo").read_text())


def block_device_of(path: Path) -> str | None:
    """`MAJ:MIN` of the whole disk holding `path`, or None (tmpfs, overlay on no disk).

    Throttling rules take whole disks, so a partition is mapped to its parent.
    """
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    if major == 0:
        return None
    sysdir = Path(f"/sys/dev/block/{major}:{minor}")
    if not sysdir.exists():
        return None
    if (sysdir / "partition").exists():
        parent = sysdir.resolve().parent / "dev"
        if parent.exists():
            return parent.read_text().strip()
    return f"{major}:{minor}"


def limit_files(
    profile: HardwareProfile, version: int, device: str | None
) -> dict[str, dict[str, str]]:
    """Files to write per controller ('' is the v2 node dir) for a profile.

    Pure: no I/O. Bandwidth is MB/s (10^6 bytes/s) in the profile, bytes/s in cgroups.
    """
    cpu = memory = io = None
    if profile.cpu_cores is not None:
        cpu = str(max(1000, round(profile.cpu_cores * CFS_PERIOD_US)))
    if profile.memory_mib is not None:
        memory = str(profile.memory_mib * MIB)
    rbps = None if profile.disk_read_mb_s is None else str(round(profile.disk_read_mb_s * 1e6))
    wbps = None if profile.disk_write_mb_s is None else str(round(profile.disk_write_mb_s * 1e6))
    if device is not None and (rbps or wbps):
        io = (rbps, wbps)
    if version == 1:
        out: dict[str, dict[str, str]] = {c: {} for c in V1_CONTROLLERS}
        if cpu:
            out["cpu"] = {"cpu.cfs_period_us": str(CFS_PERIOD_US), "cpu.cfs_quota_us": cpu}
        if memory:
            out["memory"] = {"memory.limit_in_bytes": memory}
        if io:
            if io[0]:
                out["blkio"]["blkio.throttle.read_bps_device"] = f"{device} {io[0]}"
            if io[1]:
                out["blkio"]["blkio.throttle.write_bps_device"] = f"{device} {io[1]}"
        return out
    files: dict[str, str] = {}
    if cpu:
        files["cpu.max"] = f"{cpu} {CFS_PERIOD_US}"
    if memory:
        files["memory.max"] = memory
    if io:
        parts = [f"rbps={io[0]}"] if io[0] else []
        parts += [f"wbps={io[1]}"] if io[1] else []
        files["io.max"] = f"{device} {' '.join(parts)}"
    return {"": files}


@dataclass(frozen=True)
class NodeCgroup:
    """The directories one node's cgroup occupies (one per v1 controller, one on v2)."""

    version: int
    dirs: tuple[str, ...]

    @property
    def procs_files(self) -> list[str]:
        return [str(Path(d) / "cgroup.procs") for d in self.dirs]


def relative_dir(lab: str, node: str) -> Path:
    return Path("casslab") / lab / node


def identity_path(lab: str, node: str) -> str:
    """The node's cgroup v2 path, as `iptables -m cgroup --path` matches it.

    Every node is in this v2 cgroup (on v1 machines too, through the unified mount),
    so its sockets can be told apart whatever source address they use.
    """
    return str(relative_dir(lab, node))


def create_node_cgroup(
    layout: CgroupLayout, lab: str, node: str, profile: HardwareProfile, device: str | None
) -> NodeCgroup:
    """Create the node's cgroup(s) and write the profile's limits. Raises CgroupError.

    A profile without limits and without isolation (`host`) only gets the v2
    identity cgroup, which carries no controller.
    """
    rel = relative_dir(lab, node)
    files = limit_files(profile, layout.version, device)
    created: list[str] = []
    try:
        if layout.version == 1:
            if profile.isolated or profile.has_limits:
                for ctrl, mount in layout.v1_mounts.items():
                    target = mount / rel
                    target.mkdir(parents=True, exist_ok=True)
                    created.append(str(target))
                    for name, value in files.get(ctrl, {}).items():
                        _write(target / name, value)
            if layout.v2_mount is not None:
                target = layout.v2_mount / rel
                target.mkdir(parents=True, exist_ok=True)
                created.append(str(target))
        else:
            assert layout.v2_mount is not None
            _enable_v2_controllers(layout.v2_mount, rel)
            target = layout.v2_mount / rel
            target.mkdir(parents=True, exist_ok=True)
            created.append(str(target))
            for name, value in files[""].items():
                _write(target / name, value)
    except OSError as exc:
        remove_cgroup(NodeCgroup(layout.version, tuple(created)))
        raise CgroupError(f"cannot set up cgroup {rel}: {exc}") from exc
    return NodeCgroup(layout.version, tuple(created))


# Limit files a running node's cgroup takes as they are (see hardware.LIVE_FIELDS).
_LIVE_FILES = ("cpu.cfs_period_us", "cpu.cfs_quota_us", "blkio.throttle.read_bps_device",
               "blkio.throttle.write_bps_device", "cpu.max", "io.max")


def live_limit_files(profile: HardwareProfile, version: int,
                     device: str | None) -> dict[str, dict[str, str]]:
    """The CPU and disk part of `limit_files`: what changes on a live cgroup (pure)."""
    return {ctrl: {k: v for k, v in files.items() if k in _LIVE_FILES}
            for ctrl, files in limit_files(profile, version, device).items()}


def live_writes(layout: CgroupLayout, lab: str, node: str, profile: HardwareProfile,
                device: str | None) -> list[tuple[Path, str]] | None:
    """The (file, value) writes that give the node's existing cgroup the profile's CPU
    quota and disk bandwidth; None when a cgroup directory they need does not exist
    (the node was made without that controller, or by another runtime)."""
    rel = relative_dir(lab, node)
    out: list[tuple[Path, str]] = []
    for ctrl, files in live_limit_files(profile, layout.version, device).items():
        base = layout.v1_mounts.get(ctrl) if layout.version == 1 else layout.v2_mount
        if not files:
            continue
        if base is None or not (base / rel).is_dir():
            return None
        out += [(base / rel / name, value) for name, value in files.items()]
    return out


def write_files(writes: list[tuple[Path, str]]) -> None:
    """Write each value to its cgroup file; CgroupError names the first that fails."""
    for path, value in writes:
        _write(path, value)


def _enable_v2_controllers(root: Path, rel: Path) -> None:
    # v2 delegates a controller only if every ancestor enables it for its children.
    available = set((root / "cgroup.controllers").read_text().split())
    wanted = [c for c in V2_CONTROLLERS if c in available]
    current = root
    for part in rel.parts:
        _write(current / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        current = current / part
        current.mkdir(exist_ok=True)


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise CgroupError(f"cannot write '{value}' to {path}: {exc.strerror}") from exc


def pids_in(cg: NodeCgroup) -> set[int]:
    """Every process still in the node's cgroup(s)."""
    pids: set[int] = set()
    for f in cg.procs_files:
        try:
            pids.update(int(x) for x in Path(f).read_text().split())
        except OSError:
            continue
    return pids


def remove_cgroup(cg: NodeCgroup, *, timeout_s: float = 10.0) -> None:
    """Kill whatever is left inside, remove the node dirs and empty parents.

    Raises CgroupError when a directory cannot be removed in time.
    """
    for pid in pids_in(cg):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    remove_dirs([Path(d) for d in cg.dirs], timeout_s=timeout_s)


def remove_dirs(dirs: list[Path], *, timeout_s: float) -> None:
    """Remove cgroup dirs (waiting while the kernel still sees exiting tasks in them)
    and their `casslab/<lab>` and `casslab` parents once empty.

    Raises CgroupError when a directory stays busy past the timeout.
    """
    deadline = time.monotonic() + timeout_s
    for path in dirs:
        while path.exists():
            try:
                path.rmdir()
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise CgroupError(f"cannot remove cgroup {path}: {exc.strerror}") from exc
                time.sleep(0.05)
        _remove_empty_parents(path)


def _remove_empty_parents(path: Path) -> None:
    # Stop at the `casslab` dir's parent; a sibling lab keeps its parents busy.
    for parent in list(path.parents)[:2]:
        try:
            parent.rmdir()
        except OSError:
            return


# ---- CPU quota changed while the node runs (burstable profiles) --------------------------


def _dir_with(dirs: list[str] | tuple[str, ...], name: str) -> Path | None:
    # A node's dirs are one per v1 controller plus its v2 identity dir; the file names
    # tell them apart on either version.
    for d in dirs:
        if (Path(d) / name).exists():
            return Path(d)
    return None


def cpu_usage_s(dirs: list[str] | tuple[str, ...]) -> float | None:
    """CPU seconds the node's cgroup used so far (v1 cpuacct.usage, v2 cpu.stat
    usage_usec); None when neither file is there (the cgroup is gone)."""
    try:
        if (d := _dir_with(dirs, "cpuacct.usage")) is not None:
            return int((d / "cpuacct.usage").read_text()) / 1e9
        if (d := _dir_with(dirs, "cpu.max")) is not None:
            for line in (d / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
    except (OSError, ValueError):
        return None
    return None


def quota_us(cores: float) -> int:
    """CFS quota (per CFS_PERIOD_US) for a quota in cores; the kernel's minimum is 1 ms."""
    return max(1000, round(cores * CFS_PERIOD_US))


def set_cpu_quota(dirs: list[str] | tuple[str, ...], cores: float) -> None:
    """Set the node's CPU quota to `cores` (v1 cpu.cfs_quota_us, v2 cpu.max).
    Raises CgroupError when the node has no CPU controller dir or the write fails."""
    if (d := _dir_with(dirs, "cpu.cfs_quota_us")) is not None:
        _write(d / "cpu.cfs_quota_us", str(quota_us(cores)))
    elif (d := _dir_with(dirs, "cpu.max")) is not None:
        _write(d / "cpu.max", f"{quota_us(cores)} {CFS_PERIOD_US}")
    else:
        raise CgroupError(f"no CPU controller in the node's cgroup dirs {', '.join(dirs)}")


def cpu_quota_cores(dirs: list[str] | tuple[str, ...]) -> float | None:
    """The node's CPU quota in cores as the kernel holds it; None: unlimited or no dir."""
    try:
        if (d := _dir_with(dirs, "cpu.cfs_quota_us")) is not None:
            quota = (d / "cpu.cfs_quota_us").read_text().strip()
            period = (d / "cpu.cfs_period_us").read_text().strip()
        elif (d := _dir_with(dirs, "cpu.max")) is not None:
            quota, _, period = (d / "cpu.max").read_text().strip().partition(" ")
        else:
            return None
        return None if quota in ("-1", "max") else int(quota) / int(period)
    except (OSError, ValueError):
        return None
