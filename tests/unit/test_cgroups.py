from pathlib import Path

from casslab.hardware import BUILTIN_PROFILES
from casslab.hardware.cgroups import limit_files, parse_mountinfo

V1_MOUNTINFO = """\
30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
31 25 0:27 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 25 0:32 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 25 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""

V2_MOUNTINFO = """\
25 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
"""

COMOUNTED_V1 = """\
30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
"""


def test_hybrid_machine_uses_v1_controllers() -> None:
    layout = parse_mountinfo(V1_MOUNTINFO)
    assert layout.version == 1
    assert str(layout.v1_mounts["memory"]) == "/sys/fs/cgroup/memory"
    assert str(layout.v1_mounts["blkio"]) == "/sys/fs/cgroup/blkio"
    assert str(layout.v2_mount) == "/sys/fs/cgroup/unified"  # identity cgroups live there


def test_pure_v2_machine_is_detected() -> None:
    layout = parse_mountinfo(V2_MOUNTINFO)
    assert layout.version == 2 and str(layout.v2_mount) == "/sys/fs/cgroup"


def test_comounted_cpu_and_cpuacct_share_one_dir() -> None:
    layout = parse_mountinfo(COMOUNTED_V1)
    assert layout.v1_mounts["cpu"] == layout.v1_mounts["cpuacct"]


def test_v1_limits_of_a_pi() -> None:
    files = limit_files(BUILTIN_PROFILES["rpi2"], 1, "254:0")
    assert files["cpu"] == {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "60000"}
    assert files["memory"] == {"memory.limit_in_bytes": str(1024**3)}
    assert files["blkio"] == {
        "blkio.throttle.read_bps_device": "254:0 18000000",
        "blkio.throttle.write_bps_device": "254:0 10000000",
    }


def test_v2_limits_of_a_pi() -> None:
    files = limit_files(BUILTIN_PROFILES["rpi2"], 2, "8:0")[""]
    assert files == {
        "cpu.max": "60000 100000",
        "memory.max": str(1024**3),
        "io.max": "8:0 rbps=18000000 wbps=10000000",
    }


def test_no_block_device_means_no_disk_limit() -> None:
    assert "io.max" not in limit_files(BUILTIN_PROFILES["rpi2"], 2, None)[""]
    assert limit_files(BUILTIN_PROFILES["rpi2"], 1, None)["blkio"] == {}


def test_container_profile_writes_no_limits() -> None:
    files = limit_files(BUILTIN_PROFILES["container"], 1, "254:0")
    assert all(v == {} for v in files.values())


def test_live_limits_are_cpu_and_disk_only() -> None:
    from casslab.hardware.cgroups import live_limit_files

    v1 = live_limit_files(BUILTIN_PROFILES["rpi2"], 1, "8:0")
    assert v1["memory"] == {}
    assert v1["cpu"]["cpu.cfs_quota_us"] == "60000"
    assert v1["blkio"]["blkio.throttle.read_bps_device"] == "8:0 18000000"
    v2 = live_limit_files(BUILTIN_PROFILES["rpi2"], 2, "8:0")
    assert set(v2[""]) == {"cpu.max", "io.max"}


def test_live_writes_go_into_the_nodes_existing_cgroup_dirs(tmp_path: Path) -> None:
    from casslab.hardware.cgroups import CgroupLayout, live_writes, relative_dir, write_files

    mounts = {c: tmp_path / c for c in ("cpu", "cpuacct", "memory", "blkio")}
    layout = CgroupLayout(1, v1_mounts=mounts)
    profile = BUILTIN_PROFILES["rpi3"]
    # Made without the controllers (a `host` node, or another runtime's cgroup): no writes.
    assert live_writes(layout, "lab", "node1", profile, None) is None
    for m in mounts.values():
        (m / relative_dir("lab", "node1")).mkdir(parents=True)
    writes = live_writes(layout, "lab", "node1", profile, None)
    assert writes is not None
    write_files(writes)
    quota = mounts["cpu"] / relative_dir("lab", "node1") / "cpu.cfs_quota_us"
    assert quota.read_text() == "100000"
    assert not (mounts["memory"] / relative_dir("lab", "node1") / "memory.limit_in_bytes").exists()
