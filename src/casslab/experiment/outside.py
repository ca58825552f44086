"""Outside noise: how much CPU the machine spent outside the lab during a trial, and the
steal time (a VM's host taking its cores), for `design.guard`.

Counted from two snapshots around the trial's load run:
- /proc/stat's first line: busy time (user, nice, system, irq, softirq; guest time is
  already inside user), steal time, and all time (busy + idle + iowait + steal), in
  USER_HZ ticks of every core together;
- the lab's CPU seconds: its nodes' cgroups (cgroup v1 cpuacct.usage, v2 cpu.stat
  usage_usec, casslab.hardware.cgroups.cpu_usage_s);
- this process's own CPU and that of its waited-for children (os.times): the runner,
  its sampler threads and the load clients, which are part of the trial.
outside = busy - lab - own, as % of all time (all cores = 100 %), clamped at 0 (the
counters are read a few ms apart). The packet-delay daemon (casslab-netem) is neither
a node nor a child of this process: its CPU counts as outside (BENCHMARKS.md has its
cost, well under a percent of a core at this lab's rates).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuSnapshot:
    busy_s: float  # every core's busy time since boot
    steal_s: float
    total_s: float
    lab_s: float | None  # the lab's nodes' CPU seconds (None: not measurable)
    own_s: float  # this process and its waited-for children


@dataclass(frozen=True)
class OutsideNoise:
    outside_cpu_pct: float | None  # None when the lab's CPU could not be read
    steal_pct: float


def parse_proc_stat(text: str, hz: float) -> tuple[float, float, float]:
    """(busy, steal, total) seconds from /proc/stat's aggregate `cpu` line."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            f = [float(x) for x in line.split()[1:]]
            f += [0.0] * (8 - len(f))
            user, nice, system, idle, iowait, irq, softirq, steal = f[:8]
            busy = user + nice + system + irq + softirq
            return busy / hz, steal / hz, (busy + idle + iowait + steal) / hz
    raise ValueError("no aggregate `cpu` line in /proc/stat")


def snapshot(lab_cpu_s: float | None) -> CpuSnapshot:
    """The counters now (lab_cpu_s: the lab's nodes' CPU seconds, read by the caller)."""
    busy, steal, total = parse_proc_stat(PROC_STAT.read_text(),
                                         float(os.sysconf("SC_CLK_TCK")))
    t = os.times()
    own = t.user + t.system + t.children_user + t.children_system
    return CpuSnapshot(busy, steal, total, lab_cpu_s, own)


def between(a: CpuSnapshot, b: CpuSnapshot) -> OutsideNoise:
    """Outside CPU and steal time from `a` to `b`, % of all cores' time."""
    total = b.total_s - a.total_s
    if total <= 0:
        return OutsideNoise(None, 0.0)
    steal = 100.0 * max(0.0, b.steal_s - a.steal_s) / total
    if a.lab_s is None or b.lab_s is None:
        return OutsideNoise(None, steal)
    outside = (b.busy_s - a.busy_s) - (b.lab_s - a.lab_s) - (b.own_s - a.own_s)
    return OutsideNoise(max(0.0, 100.0 * outside / total), steal)


def over_guard(noise: OutsideNoise, max_pct: float) -> bool:
    """Whether a trial was disturbed beyond design.guard (unmeasured: not over)."""
    return noise.outside_cpu_pct is not None and noise.outside_cpu_pct > max_pct
