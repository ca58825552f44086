"""The credit controller's accounting tick, and the cgroup files it reads and writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.hardware import cgroups
from casslab.hardware.profiles import BUILTIN_PROFILES
from casslab.lab.credits import BurstNode, Controller, ControllerConfig, burst_nodes
from casslab.lab.state import LabState, NodeState


def _config(scale: float, *nodes: BurstNode) -> ControllerConfig:
    return ControllerConfig(time_scale=scale, tick_s=1.0, nodes=nodes)


MICRO = BurstNode("node1", "t2.micro", 1.0, ("/nowhere",))


def test_a_busy_micro_drops_to_its_baseline_when_its_launch_credits_are_gone() -> None:
    # Scale 60: a real second is a model minute; busy = 1 core = 1 vCPU = 1 credit/min,
    # earning 0.1/min: 30 launch credits last 30 / 0.9 = 33.3 ticks.
    ctl = Controller(_config(60.0, MICRO))
    assert ctl.tick(0.0, {"node1": 0.0}) == {}
    drops = [t for t in range(1, 40) if ctl.tick(1.0, {"node1": float(t)})]
    assert drops == [34]
    assert ctl.rows()[0].quota_cores == pytest.approx(0.1)
    assert ctl.rows()[0].credits == 0.0 and not ctl.rows()[0].bursting


def test_a_node_at_its_baseline_bursts_again_after_idling() -> None:
    ctl = Controller(_config(60.0, MICRO))
    ctl.tick(0.0, {"node1": 0.0})
    used = 0.0
    for _ in range(40):  # 34 ticks at full speed, then at the baseline
        used += 1.0 if ctl.rows()[0].bursting else 0.1
        ctl.tick(1.0, {"node1": used})
    assert ctl.rows()[0].credits == pytest.approx(0.0, abs=1e-9)
    # Idle ticks of 1.5 s earn 0.15 credit each; a tick at full speed costs 1 credit.
    back = [t for t in range(1, 20) if ctl.tick(1.5, {"node1": used})]
    assert back == [7]
    assert ctl.rows()[0].quota_cores == 1.0


def test_usage_is_counted_in_vcpus_of_the_profile_scale() -> None:
    # A t2.medium given 1.0 core here: 0.5 core-s of use is one vCPU-second.
    node = BurstNode("node2", "t2.medium", 1.0, ("/nowhere",))
    ctl = Controller(_config(1.0, node))
    ctl.tick(0.0, {"node2": 0.0})
    ctl.tick(60.0, {"node2": 30.0})
    # 60 vCPU-s spent (1 credit) against 24/h x 1 min = 0.4 earned, from 60 launch credits.
    assert ctl.rows()[0].credits == pytest.approx(60.0 - 1.0 + 0.4)


def test_an_unreadable_node_is_skipped_for_that_tick() -> None:
    ctl = Controller(_config(60.0, MICRO))
    ctl.tick(0.0, {"node1": 0.0})
    ctl.tick(1.0, {"node1": None})
    assert ctl.rows()[0].credits == 30.0


def test_only_burstable_nodes_with_a_cgroup_are_controlled(tmp_path: Path) -> None:
    state = LabState("x", str(tmp_path), "5.0.2", "t2.micro", None, 1, 1, [], {}, nodes=[
        NodeState(1, "127.0.1.1", "d1", cgroup_dirs=["/sys/fs/cgroup/cpu/x/node1"]),
        NodeState(2, "127.0.1.2", "d2"),
        NodeState(3, "127.0.1.3", "d3", cgroup_dirs=["/sys/fs/cgroup/cpu/x/node3"])])
    nodes, warnings = burst_nodes(state, {"node1": BUILTIN_PROFILES["t2.micro"],
                                          "node2": BUILTIN_PROFILES["t2.small"],
                                          "node3": BUILTIN_PROFILES["rpi3"]})
    assert [(n.node, n.instance, n.full_cores) for n in nodes] == [("node1", "t2.micro", 1.0)]
    assert warnings == ["node2 (profile t2.small) has no cgroup here: its CPU credits are not "
                        "modelled, its CPU stays fixed"]


def test_the_config_round_trips(tmp_path: Path) -> None:
    config = _config(100.0, MICRO)
    config.save(tmp_path / "c.json")
    assert ControllerConfig.load(tmp_path / "c.json") == config


def test_v1_quota_and_usage_files(tmp_path: Path) -> None:
    cpu, acct = tmp_path / "cpu", tmp_path / "cpuacct"
    for d, files in ((cpu, {"cpu.cfs_quota_us": "100000", "cpu.cfs_period_us": "100000"}),
                     (acct, {"cpuacct.usage": "2500000000"})):
        d.mkdir()
        for name, text in files.items():
            (d / name).write_text(text)
    dirs = (str(cpu), str(acct))
    assert cgroups.cpu_usage_s(dirs) == 2.5
    cgroups.set_cpu_quota(dirs, 0.1)
    assert (cpu / "cpu.cfs_quota_us").read_text() == "10000"
    assert cgroups.cpu_quota_cores(dirs) == pytest.approx(0.1)


def test_v2_quota_and_usage_files(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("max 100000")
    (tmp_path / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\n")
    dirs = (str(tmp_path),)
    assert cgroups.cpu_quota_cores(dirs) is None
    assert cgroups.cpu_usage_s(dirs) == 1.5
    cgroups.set_cpu_quota(dirs, 0.4)
    assert (tmp_path / "cpu.max").read_text() == "40000 100000"


def test_a_node_without_cpu_files_has_no_usage_and_refuses_a_quota(tmp_path: Path) -> None:
    assert cgroups.cpu_usage_s((str(tmp_path),)) is None
    with pytest.raises(cgroups.CgroupError, match="no CPU controller"):
        cgroups.set_cpu_quota((str(tmp_path),), 1.0)
