"""A profile's limits on a host: systemd properties and cgroup writes (pure), and the
shell lines that carry them out, run here with sh on temporary directories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casslab.core.errors import CgroupError
from casslab.hardware import BUILTIN_PROFILES
from casslab.hardware.cgroups import CgroupLayout, parse_mountinfo
from casslab.hardware.profiles import HardwareProfile
from casslab.testbed.hosts import limits
from casslab.testbed.hosts.limits import HostProbe, LimitPlan

RPI2 = BUILTIN_PROFILES["rpi2"]  # 0.6 cores, 1024 MiB, 18 MB/s read, 10 MB/s write
V1 = CgroupLayout(1, v1_mounts={c: Path(f"/cg/{c}") for c in ("cpu", "cpuacct", "memory",
                                                            "blkio")})
V2 = CgroupLayout(2, v2_mount=Path("/cg"))


def sh(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False)


def test_systemd_properties_carry_cpu_percent_memory_bytes_and_bandwidth_by_data_dir() -> None:
    assert limits.systemd_properties(RPI2, "/opt/casslab/node/data") == (
        "CPUQuota=60%", "MemoryMax=1073741824",
        "IOReadBandwidthMax=/opt/casslab/node/data 18000000",
        "IOWriteBandwidthMax=/opt/casslab/node/data 10000000")


def test_a_profile_without_limits_gets_no_unit_and_no_cgroup() -> None:
    probe = HostProbe(systemd=True, layout=V1, device="8:0")
    for name in ("host", "container"):
        plan = limits.plan_limits(probe, "lab", "node1", BUILTIN_PROFILES[name], "/d")
        assert plan == limits.NO_LIMITS


def test_systemd_hosts_get_a_transient_unit_named_by_lab_and_node() -> None:
    plan = limits.plan_limits(HostProbe(True, V1, None), "pis", "node2", RPI2, "/d")
    assert (plan.mode, plan.unit, plan.dirs) == ("systemd", "casslab-pis-node2", ())
    assert plan.properties[0] == "CPUQuota=60%"


def test_v1_plan_makes_one_dir_per_controller_with_the_local_labs_values() -> None:
    plan = limits.plan_limits(HostProbe(False, V1, "8:0"), "pis", "node1", RPI2, "/d")
    assert plan.mode == "cgroup-v1"
    assert plan.dirs == tuple(f"/cg/{c}/casslab/pis/node1"
                              for c in ("blkio", "cpu", "cpuacct", "memory"))
    assert dict(plan.writes) == {
        "/cg/blkio/casslab/pis/node1/blkio.throttle.read_bps_device": "8:0 18000000",
        "/cg/blkio/casslab/pis/node1/blkio.throttle.write_bps_device": "8:0 10000000",
        "/cg/cpu/casslab/pis/node1/cpu.cfs_period_us": "100000",
        "/cg/cpu/casslab/pis/node1/cpu.cfs_quota_us": "60000",
        "/cg/memory/casslab/pis/node1/memory.limit_in_bytes": "1073741824"}


def test_v1_plan_without_a_disk_device_has_no_bandwidth_writes() -> None:
    plan = limits.cgroup_plan(V1, "pis", "node1", RPI2, None)
    assert not [p for p, _ in plan.writes if "blkio" in p]


def test_v2_plan_delegates_controllers_down_the_tree_before_the_node_limits() -> None:
    profile = HardwareProfile("small", 1.0, 1536, None, None, None)
    plan = limits.cgroup_plan(V2, "pis", "node1", profile, "8:0")
    assert plan.dirs == ("/cg/casslab/pis/node1",)
    assert list(plan.writes) == [
        ("/cg/cgroup.subtree_control", "+cpu"), ("/cg/cgroup.subtree_control", "+memory"),
        ("/cg/casslab/cgroup.subtree_control", "+cpu"),
        ("/cg/casslab/cgroup.subtree_control", "+memory"),
        ("/cg/casslab/pis/cgroup.subtree_control", "+cpu"),
        ("/cg/casslab/pis/cgroup.subtree_control", "+memory"),
        ("/cg/casslab/pis/node1/cpu.max", "100000 100000"),
        ("/cg/casslab/pis/node1/memory.max", str(1536 * 1024 * 1024))]


def test_limits_without_systemd_or_cgroups_are_refused_by_profile_name() -> None:
    with pytest.raises(CgroupError, match="profile 'rpi2' has limits"):
        limits.plan_limits(HostProbe(False, None, None), "pis", "node1", RPI2, "/d")


def test_the_probe_run_here_finds_this_machines_cgroups_and_no_systemd(tmp_path: Path) -> None:
    out = sh(limits.probe_command(str(tmp_path / "data")))
    assert out.returncode == 0, out.stderr
    probe = limits.parse_probe(out.stdout)
    assert probe.layout == parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    assert probe.systemd == (Path("/proc/1/comm").read_text().strip() == "systemd")
    assert (tmp_path / "data").is_dir()


def test_parse_probe_sees_systemd_only_with_systemd_run() -> None:
    sep = "--casslab--\n"
    with_run = f"systemd\n{sep}/usr/bin/systemd-run\n{sep}\n{sep}8:0\n"
    without = f"systemd\n{sep}\n{sep}\n{sep}\n"
    assert limits.parse_probe(with_run) == HostProbe(True, None, "8:0")
    assert limits.parse_probe(without) == HostProbe(False, None, None)
    with pytest.raises(CgroupError, match="limits probe"):
        limits.parse_probe("bash: no such file")


def test_setup_writes_the_values_and_keeps_the_plan(tmp_path: Path) -> None:
    node = tmp_path / "cpu" / "casslab" / "lab" / "node1"
    plan = LimitPlan("cgroup-v1", dirs=(str(node),),
                     writes=((str(node / "cpu.cfs_quota_us"), "60000"),))
    record = tmp_path / "limits.json"
    out = sh(limits.setup_command(plan, str(record)))
    assert out.returncode == 0, out.stderr
    assert (node / "cpu.cfs_quota_us").read_text() == "60000"
    assert LimitPlan.from_json(record.read_text()) == plan


def test_a_started_process_joins_its_cgroups_before_it_runs(tmp_path: Path) -> None:
    dirs = (tmp_path / "cpu", tmp_path / "memory")
    for d in dirs:
        d.mkdir()
    plan = LimitPlan("cgroup-v1", dirs=tuple(str(d) for d in dirs))
    out = sh(limits.wrap_start(plan, ["sh", "-c", "echo $$ > ran"], str(tmp_path),
                               "out.log", "pid"))
    pid = out.stdout.split()[-1]
    for _ in range(100):
        if (tmp_path / "ran").exists() and (tmp_path / "ran").read_text().strip():
            break
        subprocess.run(["sleep", "0.05"], check=True)
    # One process all along: the pid printed, the pid file, both cgroups and the program.
    assert (tmp_path / "pid").read_text().strip() == pid
    assert [(d / "cgroup.procs").read_text().strip() for d in dirs] == [pid, pid]
    assert (tmp_path / "ran").read_text().strip() == pid


def test_cleanup_removes_the_node_dirs_and_empty_parents(tmp_path: Path) -> None:
    node = tmp_path / "cpu" / "casslab" / "lab" / "node1"
    node.mkdir(parents=True)
    out = sh(limits.cleanup_command(LimitPlan("cgroup-v1", dirs=(str(node),))))
    assert out.returncode == 0, out.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["cpu"]
    assert not (tmp_path / "cpu" / "casslab").exists()


def test_cleanup_names_a_cgroup_that_stays(tmp_path: Path) -> None:
    node = tmp_path / "casslab" / "lab" / "node1"
    node.mkdir(parents=True)
    (node / "busy").write_text("")  # rmdir fails as on a cgroup with tasks in it
    out = sh(limits.cleanup_command(LimitPlan("cgroup-v2", dirs=(str(node),)),
                                    timeout_s=0.2))
    assert out.returncode != 0
    assert out.stderr.strip() == f"cannot remove cgroup {node}"


def test_cleanup_of_a_unit_stops_and_forgets_it() -> None:
    cmd = limits.cleanup_command(LimitPlan("systemd", unit="casslab-pis-node1"))
    assert "systemctl stop casslab-pis-node1" in cmd
    assert "systemctl reset-failed casslab-pis-node1" in cmd


def test_cleanup_kills_what_is_left_in_the_cgroup_first(tmp_path: Path) -> None:
    node = tmp_path / "casslab" / "lab" / "node1"
    node.mkdir(parents=True)
    left = subprocess.Popen(["sleep", "60"])
    (node / "cgroup.procs").write_text(f"{left.pid}\n")
    out = sh(limits.cleanup_command(LimitPlan("cgroup-v2", dirs=(str(node),)),
                                    timeout_s=0.2))
    assert left.wait(timeout=5) == -9
    # A plain directory keeps its file, so rmdir fails here as on a busy cgroup.
    assert out.returncode != 0


def test_without_limits_the_process_starts_detached_as_before(tmp_path: Path) -> None:
    out = sh(limits.wrap_start(limits.NO_LIMITS, ["sh", "-c", "echo $$ > ran; echo hi"],
                               str(tmp_path), "out.log", "pid"))
    pid = out.stdout.split()[-1]
    for _ in range(100):
        if (tmp_path / "ran").exists() and (tmp_path / "out.log").read_text():
            break
        subprocess.run(["sleep", "0.05"], check=True)
    assert (tmp_path / "pid").read_text().strip() == pid
    assert (tmp_path / "ran").read_text().strip() == pid
    assert (tmp_path / "out.log").read_text() == "hi\n"


def test_under_systemd_the_jvm_is_the_units_main_process() -> None:
    plan = limits.plan_limits(HostProbe(True, None, None), "pis", "node1", RPI2, "/n/data")
    line = limits.wrap_start(plan, ["java", "-Xmx1g"], "/n", "logs/stdout.log",
                             "cassandra.pid")
    assert line.startswith("cd /n && systemd-run --quiet --collect --unit casslab-pis-node1 "
                           "-p WorkingDirectory=/n -p CPUQuota=60% -p MemoryMax=1073741824 ")
    # The shell it starts becomes the JVM (exec), so MainPID is the JVM's pid.
    assert "'exec \"$@\" > \"$0\" 2>&1 < /dev/null' logs/stdout.log java -Xmx1g" in line
    assert line.endswith("pid=$(systemctl show -p MainPID --value casslab-pis-node1) && "
                         "echo $pid > cassandra.pid && echo $pid")
