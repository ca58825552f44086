"""Outside noise: the machine's busy time minus the lab's and this process's, as % of all
cores; steal time; the guard's test."""

from __future__ import annotations

import pytest

from casslab.experiment.outside import CpuSnapshot, between, over_guard, parse_proc_stat, snapshot


def test_outside_cpu_is_busy_time_minus_the_lab_and_this_process() -> None:
    busy, steal, total = parse_proc_stat(
        "cpu  100 0 50 800 40 5 5 10 0 0\ncpu0 1 2 3 4\n", 100.0)
    assert (busy, steal, total) == (1.6, 0.1, 10.1)
    a = CpuSnapshot(10.0, 1.0, 100.0, 2.0, 1.0)
    b = CpuSnapshot(16.0, 1.5, 120.0, 5.0, 2.0)  # 6 s busy: 3 lab, 1 own, 2 outside
    noise = between(a, b)
    assert noise.outside_cpu_pct == pytest.approx(10.0) and noise.steal_pct == 2.5
    assert over_guard(noise, 5.0) and not over_guard(noise, 10.0)
    unmeasured = between(CpuSnapshot(10.0, 1.0, 100.0, None, 1.0), b)
    assert unmeasured.outside_cpu_pct is None and not over_guard(unmeasured, 0.1)


def test_snapshot_reads_this_machine() -> None:
    a = snapshot(0.0)
    b = snapshot(0.0)
    assert b.total_s >= a.total_s > 0 and b.busy_s >= a.busy_s
