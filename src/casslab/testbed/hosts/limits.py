"""A node's hardware profile on its host: a systemd transient unit where systemd runs,
casslab's own cgroup (v1 or v2) where it does not, nothing for a profile without limits.

What to do is decided by pure functions (`plan_limits` from a probe of the host), so the
unit's properties and the cgroup writes are checked without a host; the shell lines that
carry them out run over SSH. The cgroups are the local lab's (`profiles.cgroups`):
`casslab/<lab>/<node>` under each hierarchy, with `limit_files`' values, so hosts that
share one kernel (the stand-in hosts of the tests) keep their nodes apart by lab and node.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath

from casslab.core.errors import CgroupError
from casslab.hardware.cgroups import (
    CgroupLayout,
    limit_files,
    parse_mountinfo,
    relative_dir,
)
from casslab.hardware.profiles import MIB, HardwareProfile

NONE, SYSTEMD, CGROUP_V1, CGROUP_V2 = "none", "systemd", "cgroup-v1", "cgroup-v2"
LIMITS_FILE = "limits.json"
_SEP = "--casslab--"

# Run on the host: the whole disk holding the data directory, as `MAJ:MIN`, or nothing
# (tmpfs, overlay): the same rule as profiles.cgroups.block_device_of, over there.
_DEVICE_PY = (
    "import os,sys\n"
    "s=os.stat(sys.argv[1]);M,m=os.major(s.st_dev),os.minor(s.st_dev)\n"
    "d='/sys/dev/block/%d:%d'%(M,m)\n"
    "if M==0 or not os.path.exists(d): print('')\n"
    "elif os.path.exists(d+'/partition'):\n"
    "  p=os.path.join(os.path.realpath(d),'..','dev')\n"
    "  print(open(p).read().strip() if os.path.exists(p) else '%d:%d'%(M,m))\n"
    "else: print('%d:%d'%(M,m))\n")


@dataclass(frozen=True)
class LimitPlan:
    """How one node is limited on its host; kept in the node's directory as limits.json
    so a later stop (another process) cleans up what this start made."""

    mode: str  # none | systemd | cgroup-v1 | cgroup-v2
    unit: str | None = None
    properties: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    writes: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> LimitPlan:
        raw = json.loads(text)
        return LimitPlan(mode=raw["mode"], unit=raw.get("unit"),
                         properties=tuple(raw.get("properties", ())),
                         dirs=tuple(raw.get("dirs", ())),
                         writes=tuple((str(p), str(v)) for p, v in raw.get("writes", ())))


NO_LIMITS = LimitPlan(NONE)


@dataclass(frozen=True)
class HostProbe:
    """What the host said about itself (see `probe_command`)."""

    systemd: bool  # PID 1 is systemd and systemd-run is there
    layout: CgroupLayout | None
    device: str | None  # MAJ:MIN of the data directory's disk


def unit_name(lab: str, node: str) -> str:
    return f"casslab-{lab}-{node}"


def systemd_properties(profile: HardwareProfile, data_dir: str) -> tuple[str, ...]:
    """`systemd-run -p` values for the profile (pure). CPUQuota is a percentage of one
    core, the bandwidths take the data directory (systemd finds its disk) and bytes/s."""
    props: list[str] = []
    if profile.cpu_cores is not None:
        props.append(f"CPUQuota={max(1, round(profile.cpu_cores * 100))}%")
    if profile.memory_mib is not None:
        props.append(f"MemoryMax={profile.memory_mib * MIB}")
    if profile.disk_read_mb_s is not None:
        props.append(f"IOReadBandwidthMax={data_dir} {round(profile.disk_read_mb_s * 1e6)}")
    if profile.disk_write_mb_s is not None:
        props.append(f"IOWriteBandwidthMax={data_dir} {round(profile.disk_write_mb_s * 1e6)}")
    return tuple(props)


def cgroup_plan(layout: CgroupLayout, lab: str, node: str, profile: HardwareProfile,
                device: str | None) -> LimitPlan:
    """The node's cgroup directories and the (file, value) writes, in order, that give
    them the profile's limits (pure). On v2 every ancestor first delegates the
    controllers the limits need, as profiles.cgroups does locally."""
    rel = relative_dir(lab, node)
    files = limit_files(profile, layout.version, device)
    dirs: list[str] = []
    writes: list[tuple[str, str]] = []
    if layout.version == 1:
        for ctrl, mount in sorted(layout.v1_mounts.items()):
            target = str(PurePosixPath(mount) / rel)
            if target not in dirs:
                dirs.append(target)
            writes += [(f"{target}/{name}", value)
                       for name, value in files.get(ctrl, {}).items()]
        return LimitPlan(CGROUP_V1, dirs=tuple(dirs), writes=tuple(writes))
    if layout.v2_mount is None:
        raise CgroupError("cgroup v2 layout without a mount point")
    root = PurePosixPath(layout.v2_mount)
    wanted = [c for c, key in (("cpu", "cpu.max"), ("memory", "memory.max"), ("io", "io.max"))
              if key in files[""]]
    current = root
    for part in rel.parts:
        writes += [(f"{current}/cgroup.subtree_control", f"+{c}") for c in wanted]
        current = current / part
        dirs.append(str(current))
    writes += [(f"{current}/{name}", value) for name, value in files[""].items()]
    # Only the node's own dir is joined and removed with the node; its parents are
    # removed once empty (see `cleanup_command`).
    return LimitPlan(CGROUP_V2, dirs=(str(current),), writes=tuple(writes))


def plan_limits(probe: HostProbe, lab: str, node: str, profile: HardwareProfile,
                data_dir: str) -> LimitPlan:
    """systemd where it runs, else casslab's cgroup; nothing for a profile without limits."""
    if not profile.has_limits:
        return NO_LIMITS
    if probe.systemd:
        return LimitPlan(SYSTEMD, unit=unit_name(lab, node),
                         properties=systemd_properties(profile, data_dir))
    if probe.layout is None:
        raise CgroupError(f"profile '{profile.name}' has limits but the host has neither "
                          "systemd nor a usable cgroup hierarchy")
    return cgroup_plan(probe.layout, lab, node, profile, probe.device)


def probe_command(data_dir: str) -> str:
    """A shell line whose output `parse_probe` reads: PID 1's name, systemd-run's path,
    the mount table and the data directory's disk."""
    d = shlex.quote(data_dir)
    return (f"mkdir -p {d}; cat /proc/1/comm; echo {_SEP}; command -v systemd-run; "
            f"echo {_SEP}; cat /proc/self/mountinfo; echo {_SEP}; "
            f"python3 -c {shlex.quote(_DEVICE_PY)} {d} 2>/dev/null || true")


def parse_probe(text: str) -> HostProbe:
    """The host's answer to `probe_command` (pure)."""
    parts = text.split(_SEP + "\n")
    if len(parts) != 4:
        raise CgroupError(f"unexpected answer to the limits probe: {text[:200]!r}")
    pid1, systemd_run, mountinfo, device = (p.strip() for p in parts)
    try:
        layout: CgroupLayout | None = parse_mountinfo(mountinfo)
    except CgroupError:
        layout = None
    return HostProbe(systemd=pid1 == "systemd" and bool(systemd_run), layout=layout,
                     device=device or None)


def setup_command(plan: LimitPlan, record: str) -> str:
    """Shell lines that make the plan's cgroups, write their limits and keep the plan in
    `record` (the node's limits.json); a systemd unit is made by the start itself."""
    lines = [f"mkdir -p {shlex.quote(d)}" for d in plan.dirs]
    lines += [f"printf '%s' {shlex.quote(v)} > {shlex.quote(p)}" for p, v in plan.writes]
    lines.append(f"printf '%s\\n' {shlex.quote(plan.to_json())} > {shlex.quote(record)}")
    return "set -e; " + "; ".join(lines)


def wrap_start(plan: LimitPlan, argv: list[str], directory: str, stdout_log: str,
               pid_file: str) -> str:
    """The shell line that starts `argv` under the plan, detached, and prints its pid.

    The process joins its cgroups before it becomes the JVM (`exec`), so the memory
    limit holds from its first byte; under systemd the unit's main process is the JVM.
    """
    d, log, pids = shlex.quote(directory), shlex.quote(stdout_log), shlex.quote(pid_file)
    if plan.mode == SYSTEMD:
        assert plan.unit is not None
        props = " ".join(f"-p {shlex.quote(p)}" for p in plan.properties)
        inner = shlex.join(["sh", "-c", 'exec "$@" > "$0" 2>&1 < /dev/null', stdout_log,
                            *argv])
        unit = shlex.quote(plan.unit)
        return (f"cd {d} && systemd-run --quiet --collect --unit {unit} "
                f"-p WorkingDirectory={d} {props} {inner} >/dev/null && "
                f"pid=$(systemctl show -p MainPID --value {unit}) && "
                f"echo $pid > {pids} && echo $pid")
    if plan.dirs:
        join = "; ".join(f'echo $$ > "{p}/cgroup.procs"' for p in plan.dirs)
        argv = ["sh", "-c", f'{join}; exec "$@"', "casslab-node", *argv]
    return (f"cd {d} && (setsid nohup {shlex.join(argv)} > {log} 2>&1 < /dev/null & "
            f"echo $! > {pids}; echo $!)")


def cleanup_command(plan: LimitPlan, *, timeout_s: float = 10.0) -> str:
    """Shell lines that undo the plan once its process is gone: stop the unit, or kill
    what is left in the node's cgroups (as the local lab does) and remove them (waiting
    while the kernel still counts exiting tasks in them) and their `casslab/<lab>` and
    `casslab` parents once empty. Exits non-zero naming a cgroup that stays."""
    if plan.mode == SYSTEMD and plan.unit:
        unit = shlex.quote(plan.unit)
        return (f"systemctl stop {unit} 2>/dev/null; "
                f"systemctl reset-failed {unit} 2>/dev/null; true")
    tries = max(1, int(timeout_s * 10))
    lines = []
    for d in plan.dirs:
        q = shlex.quote(d)
        procs = shlex.quote(f"{d}/cgroup.procs")
        lines.append(f"for p in $(cat {procs} 2>/dev/null); do kill -KILL $p 2>/dev/null; "
                     "done")
        lines.append(f"i=0; while [ -d {q} ] && ! rmdir {q} 2>/dev/null; do i=$((i+1)); "
                     f"[ $i -ge {tries} ] && {{ echo 'cannot remove cgroup {d}' >&2; "
                     "exit 1; }; sleep 0.1; done")
        parent = PurePosixPath(d).parent
        lines.append(f"rmdir {shlex.quote(str(parent))} {shlex.quote(str(parent.parent))} "
                     "2>/dev/null || true")
    return "; ".join(lines) if lines else "true"
