"""A campaign spec with `lab: {backend: hosts, inventory}` runs on stand-in hosts as it
runs on the local lab: the playbook provisions three node hosts and two client hosts, a
3-node cluster starts over SSH, the trials run from the client hosts, and the lab comes
down leaving no JVM, sshd or record behind."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import load_spec
from casslab.load import LoadSpec
from casslab.report.html import build_report
from casslab.store.db import Store
from casslab.store.records import Results
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts.lab import HostsTestbed
from casslab.testbed.hosts.record import list_hosts_labs

sys.path.insert(0, str(Path(__file__).parent.parent))
from labtools import casslab

pytestmark = pytest.mark.integration

LAB = "hcamp"
PROFILE = Path(__file__).parents[2] / "crates" / "load" / "profiles" / "sensor-readings.yaml"
DELAY_MS = 10
# Enough for every percentile the test reads, split over two client hosts.
OPS = 1000


@pytest.fixture(scope="module")
def five_hosts(stand_in_hosts: SshHosts) -> SshHosts:
    """The run's shared stand-in hosts (conftest), all five: 3 nodes and 2 clients."""
    assert len(stand_in_hosts.hosts) >= 5
    return stand_in_hosts


def _jvms(hosts: SshHosts) -> list[str]:
    out = subprocess.run(["pgrep", "-af", "CassandraDaemon"], capture_output=True, text=True,
                         check=False).stdout
    return [ln for ln in out.splitlines() if str(hosts.directory) in ln]


def _write_campaign(hosts: SshHosts, tmp_path: Path) -> Path:
    doc = hosts.ansible_inventory(nodes=3, clients=2)
    doc["all"]["vars"]["casslab_profile"] = "rpi3"  # heap 512 MiB on this shared machine
    (tmp_path / "hosts.yaml").write_text(yaml.safe_dump(doc))
    spec = {
        "name": "hosts-campaign",
        "lab": {"backend": "hosts", "inventory": "hosts.yaml", "timeout_s": 400,
                # 10 ms each way between the client hosts and every node
                "network": {"client": {"delay_ms": DELAY_MS}}},
        "workload": {"name": "stress-write", "records": 500, "clients": 2,
                     "options": {"rf": 3, "in-flight": 8}},
        "factors": [{"name": "cl", "levels": ["one", "quorum"]}],
        "design": {"trials": 1},
        "stop": {"ops": OPS, "timeout_s": 300},
        "metrics": {"interval_s": 1.0},
    }
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_campaign_runs_unchanged_on_hosts_and_leaves_nothing(
        five_hosts: SshHosts, tmp_path: Path) -> None:
    spec = load_spec(_write_campaign(five_hosts, tmp_path))
    assert spec.lab.nodes == 3
    events: list[Event] = []
    runner = CampaignRunner(spec, tmp_path / "results", home=default_home(),
                            cache=default_cache(), lab_name=LAB, on_event=events.append)
    outcome = runner.run()
    assert (outcome.done, outcome.failed) == (2, 0), [e.message for e in events]
    with Store(tmp_path / "results", create=False) as store:
        trials = Results(store).trials()
        commands = [str(r[0]) for r in store.conn.execute(
            "SELECT command FROM trials ORDER BY seq").fetchall()]
    assert [(t.status, t.ops) for t in trials] == [("done", OPS), ("done", OPS)]
    for t in trials:
        # Every request crosses the conditioned link both ways.
        assert t.p50_ms is not None and t.p50_ms >= 2 * DELAY_MS, t
    assert (tmp_path / "results" / "inventory.yaml").read_text() == \
        (tmp_path / "hosts.yaml").read_text()
    for command in commands:
        # The load ran on the client hosts (the first one's command is kept), reaching
        # the nodes over the bridge.
        assert "-m casslab.testbed.hosts.sshrun ssh " in command, command
        assert f"root@{five_hosts.hosts[3].address}" in command
        assert "--client 0/2" in command
    with Store(tmp_path / "results", create=False) as store:
        for t in trials:
            clients = store.conn.execute(
                "SELECT ops, p99_ms FROM client_summaries WHERE trial_id=? AND op='ALL' "
                "ORDER BY client", (t.trial_id,)).fetchall()
            # One summary per client host; the merged run is their sum, its p99 between
            # theirs (percentiles of the histograms added by absolute time).
            assert len(clients) == 2 and all(ops > 0 for ops, _ in clients), clients
            assert t.ops == sum(ops for ops, _ in clients)
            low, high = sorted(p99 for _, p99 in clients)
            assert t.p99_ms is not None and low <= t.p99_ms <= high
        cpu = store.conn.execute(
            "SELECT COUNT(DISTINCT node), MAX(cpu_user_pct + cpu_sys_pct) FROM node_metrics"
        ).fetchone()
        per_host = store.conn.execute(
            "SELECT COUNT(DISTINCT host), MIN(load1) FROM host_load").fetchone()
    page = build_report(tmp_path / "results").path.read_text()
    assert "<h2 id='clients'>Load clients</h2>" in page and "client 2</td>" in page
    assert cpu[0] == 3 and cpu[1] > 0, "each node host's sampler reported CPU"
    assert per_host[0] == 3 and per_host[1] is not None, "each node host's own samples"
    assert not _jvms(five_hosts), "a node JVM outlived the campaign"
    for host in five_hosts.hosts:  # link conditions cleared on every host
        rules = subprocess.run(["ip", "netns", "exec", host.namespace, "iptables-save"],
                               capture_output=True, text=True, check=False).stdout
        assert "NFQUEUE" not in rules, host.name
    assert not [r for r in list_hosts_labs(default_home()) if r.name == LAB]


def _user_profile_runs_from_the_client_host(inventory: Path, tmp_path: Path) -> None:
    """A cassandra-stress user profile on the controller is copied to the client host
    and runs there: its load phase, then reads of what it wrote."""
    profile = tmp_path / "sensors.yaml"
    shutil.copyfile(PROFILE, profile)
    lab = HostsTestbed("hcli", inventory, home=default_home(), cache=default_cache())
    try:
        loaded = lab.load(LoadSpec.of(str(profile), {"phase": "load", "records": 40}),
                          guard=[])
        ran = lab.load(LoadSpec.of(str(profile), {"ops": 200}, ["--mix", "latest=1"]),
                       guard=[])
    finally:
        lab.close()
    assert loaded.summary.ops > 0 and loaded.summary.errors == 0, loaded.summary.raw
    assert "/run/profiles/" in " ".join(ran.command) and str(profile) not in ran.command
    assert (ran.summary.ops, ran.summary.errors) == (200, 0), ran.summary.raw


def test_lab_up_inventory_by_hand_then_list_status_and_down(five_hosts: SshHosts,
                                                           tmp_path: Path) -> None:
    doc = five_hosts.ansible_inventory(nodes=1, clients=1)
    doc["all"]["vars"]["casslab_profile"] = "rpi3"
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(yaml.safe_dump(doc))
    up = casslab("lab", "up", "--name", "hcli", "--inventory", str(inventory), timeout_s=600)
    try:
        assert up.returncode == 0, up.stderr
        first = five_hosts.hosts[0].name
        assert f"up on hosts: 1 nodes ({first})" in up.stdout
        listed = casslab("lab", "list")
        assert "hcli" in listed.stdout and f"hosts: {first}" in listed.stdout
        status = casslab("lab", "status", "--name", "hcli")
        assert status.returncode == 0, status.stderr
        assert f"node1 ({first})" in status.stdout and "UN" in status.stdout
        _user_profile_runs_from_the_client_host(inventory, tmp_path)
    finally:
        down = casslab("lab", "down", "--name", "hcli")
    assert down.returncode == 0, down.stderr
    assert not _jvms(five_hosts)
    assert "hcli" not in casslab("lab", "list").stdout
