"""Per-node profiles and profile factors on real labs: a mixed lab gives each node its own
cgroup limits (read back from the cgroup files its JVM runs in), CPU limits change live,
and a memory factor rebuilds the lab once per level."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec
from casslab.testbed import open_lab
from casslab.testbed.local import LocalTestbed

from labtools import casslab, leftovers

pytestmark = pytest.mark.integration

MIB = 1024 * 1024


def limits_of(pid: int) -> tuple[int, int]:
    """(CPU quota µs per 100 ms period, memory limit bytes) of the cgroup `pid` runs in."""
    paths = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            paths[c] = path.lstrip("/")
    root = Path("/sys/fs/cgroup")
    if "cpu" in paths and "memory" in paths:  # v1
        return (int((root / "cpu" / paths["cpu"] / "cpu.cfs_quota_us").read_text()),
                int((root / "memory" / paths["memory"] / "memory.limit_in_bytes").read_text()))
    d = root / paths[""]
    return (int((d / "cpu.max").read_text().split()[0]), int((d / "memory.max").read_text()))


def test_a_mixed_lab_applies_each_nodes_own_limits_and_changes_cpu_live() -> None:
    lab = "itmixed"
    up = casslab("lab", "up", "--name", lab, "--nodes", "3", "--profile", "rpi3",
                 "--node-profile", "node3=t2.medium", "--heap-mib", "384",
                 "--timeout", "600s", timeout_s=900)
    try:
        assert up.returncode == 0, up.stderr
        assert "profile rpi3 (node3: t2.medium)" in up.stdout
        state = json.loads((default_home() / "labs" / lab / "lab.json").read_text())
        pids = [n["pid"] for n in state["nodes"]]
        # rpi3: 1 core, 1 GiB; t2.medium: 2 cores, 4 GiB.
        assert [limits_of(p) for p in pids] == [(100_000, 1024 * MIB), (100_000, 1024 * MIB),
                                                 (200_000, 4096 * MIB)]
        assert [n["profile"] for n in state["nodes"]] == [None, None, "t2.medium"]
        status = casslab("lab", "status", "--name", lab)
        assert status.returncode == 0, status.stderr
        rows = [ln for ln in status.stdout.splitlines() if "node" in ln and "127." in ln]
        assert ["t2.medium" in r for r in rows] == [False, False, True]

        # A CPU field over every node's profile goes onto the live cgroups: same JVMs.
        assert open_lab(lab, home=default_home(), cache=default_cache()).update_limits(
            {"cpu_cores": 0.5})
        assert [limits_of(p) for p in pids] == [(50_000, 1024 * MIB), (50_000, 1024 * MIB),
                                                 (50_000, 4096 * MIB)]
        status = casslab("lab", "status", "--name", lab)
        assert "cpu_cores=0.5" in status.stdout
    finally:
        down = casslab("lab", "down", "--name", lab, "--wipe")
        assert down.returncode == 0, down.stderr
        assert not leftovers(lab)


SPEC = """\
name: itprofile-factors
lab: {nodes: 1, profile: rpi3, timeout_s: 600}
workload: {name: stress-write, records: 200}
factors:
  - {name: profile.memory_mib, levels: [1024, 1536]}
  - {name: profile.cpu_cores, levels: [0.5, 1]}
design: {trials: 1}
stop: {ops: 200, timeout_s: 60}
metrics: {interval_s: 0.5, cql: false}
"""


def test_a_memory_factor_rebuilds_once_per_level_and_cpu_changes_live(tmp_path: Path) -> None:
    lab = "itprofile"
    seen: list[tuple[str, int, int]] = []
    events: list[Event] = []
    runner: CampaignRunner

    def on_event(e: Event) -> None:
        events.append(e)
        if e.kind == "trial-start":  # the lab is set up for the trial: read its limits
            local = runner.lab
            assert isinstance(local, LocalTestbed)
            node = local.lab.state().nodes[0]
            seen.append((e.cell, *limits_of(node.pid)))

    runner = CampaignRunner(parse_spec(SPEC), tmp_path / "results", home=default_home(),
                            cache=default_cache(), lab_name=lab, on_event=on_event)
    try:
        outcome = runner.run()
    finally:
        assert not leftovers(lab)
    assert (outcome.done, outcome.failed) == (4, 0)
    builds = [e for e in events if e.kind == "lab" and e.message.startswith("building lab")]
    assert len(builds) == 2
    assert sum(e.kind == "lab" and e.message.startswith("profile limits") for e in events) == 2
    want: list[Any] = [
        ("profile.memory_mib=1024,profile.cpu_cores=0.5", 50_000, 1024 * MIB),
        ("profile.memory_mib=1024,profile.cpu_cores=1.0", 100_000, 1024 * MIB),
        ("profile.memory_mib=1536,profile.cpu_cores=0.5", 50_000, 1536 * MIB),
        ("profile.memory_mib=1536,profile.cpu_cores=1.0", 100_000, 1536 * MIB),
    ]
    assert seen == want
