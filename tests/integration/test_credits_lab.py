"""A burstable t2.micro node: its CPU quota follows its credits, time-scaled 1000x (a real
second is 16.7 model minutes): its 30 launch credits last ~2 s of a whole core, and
still well under a minute when other labs on this 2-core machine leave the node a
fifth of one (the lab cgroups share one weight against everything else)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from casslab.hardware import cgroups
from casslab.hardware.credits import BALANCE_FILE, read_balance_file
from casslab.lab import LabOptions
from casslab.system.process import is_same_process

from conftest import make_lab
from labtools import leftovers

# timing: waits for a CPU quota to fall within a deadline; run alone (make test runs these
# after the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

LAB = "itcred"


def test_a_busy_t2_micro_drops_to_its_baseline_quota_when_its_credits_run_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASSLAB_CREDIT_TIME_SCALE", "1000")
    lab = make_lab(LAB)
    state = lab.up(LabOptions(nodes=1, profile="t2.micro"))
    busy = None
    try:
        node = state.nodes[0]
        assert is_same_process(state.credit_controller_pid, state.credit_controller_ticks)
        assert any("1000x faster" in w for w in state.warnings)
        assert cgroups.cpu_quota_cores(node.cgroup_dirs) == 1.0
        assert lab.status()[0].cpu_credits is not None
        # Full load: a busy loop inside the node's cgroup, beside the JVM.
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for procs in cgroups.NodeCgroup(state.cgroup_version or 0,
                                        tuple(node.cgroup_dirs)).procs_files:
            Path(procs).write_text(str(busy.pid))
        deadline = time.monotonic() + 100
        while cgroups.cpu_quota_cores(node.cgroup_dirs) != pytest.approx(0.1):
            assert time.monotonic() < deadline, (
                f"quota still {cgroups.cpu_quota_cores(node.cgroup_dirs)} cores; credits "
                f"{read_balance_file(Path(state.directory) / BALANCE_FILE)}")
            time.sleep(0.5)
        cpu_dir = next(Path(d) for d in node.cgroup_dirs
                       if (Path(d) / "cpu.cfs_quota_us").exists() or
                       (Path(d) / "cpu.max").exists())
        quota_file = cpu_dir / ("cpu.cfs_quota_us" if state.cgroup_version == 1 else "cpu.max")
        assert quota_file.read_text().split()[0] == "10000"
        # Held to the baseline, it earns back at most 0.1 vCPU's worth (1.7 credits a real
        # second here; more only while other labs starve it) and bursts again at a tick's
        # cost at full speed (16.7 credits): the balance shown is below that.
        credits = lab.status()[0].cpu_credits
        assert credits is not None and 0.0 <= credits < 1000 / 60
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
        lab.down(wipe=True)
    assert not is_same_process(state.credit_controller_pid, state.credit_controller_ticks)
    assert not leftovers(LAB), f"lab down left: {leftovers(LAB)}"
