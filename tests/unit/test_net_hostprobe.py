"""The hosts' link probe, two real processes on two loopback addresses: each answers the
other's pings and the pinger times round trips; loss is known per direction."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from casslab.net import hostprobe
from casslab.net.spec import NetSpec
from casslab.testbed.hosts.inventory import parse
from casslab.testbed.hosts.linkrules import host_links
from casslab.testbed.hosts.links import link_checks, probe_plan

PORT = 47177


def _start(job: dict[str, object]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, hostprobe.__file__, json.dumps(job)],
                            stdout=subprocess.PIPE, text=True)


def test_two_probes_ping_and_echo_each_other_and_report_rows() -> None:
    common = {"port": PORT, "count": 20, "interval_ms": 2, "start_s": 0.3, "duration_s": 1.0}
    a = _start({**common, "address": "127.0.0.1", "peers": ["127.0.0.2"]})
    b = _start({**common, "address": "127.0.0.2", "peers": []})
    ra, rb = (json.loads(p.communicate(timeout=10)[0]) for p in (a, b))
    assert ra["sent"] == {"127.0.0.2": 20}
    assert len(ra["rtt_ms"]["127.0.0.2"]) == 20 and max(ra["rtt_ms"]["127.0.0.2"]) < 50
    assert rb["echoed"] == {"127.0.0.1": 20}

    inv = parse("all:\n  children:\n    nodes:\n      hosts:\n"
                "        h1: {ansible_host: 127.0.0.1}\n        h2: {ansible_host: 127.0.0.2}\n",
                "hosts.yaml")
    links = host_links(inv, NetSpec(links=(("h1-h2", {"delay_ms": 3}),)))
    plan = probe_plan(links)
    assert plan == {"h1": ["h2"]}
    rows = {(r.src, r.dst): r for r in link_checks(links, plan, {"h1": ra, "h2": rb})}
    assert rows[("h1", "h2")].loss_pct == 0.0 and rows[("h2", "h1")].loss_pct == 0.0
    assert rows[("h1", "h2")].rtt_configured_ms == 6.0
    assert rows[("h2", "h1")].rtt_p50_ms == rows[("h1", "h2")].rtt_p50_ms


def test_loss_is_split_by_direction_from_the_echo_count() -> None:
    inv = parse("all:\n  children:\n    nodes:\n      hosts:\n"
                "        h1: {ansible_host: 10.0.0.1}\n        h2: {ansible_host: 10.0.0.2}\n",
                "hosts.yaml")
    links = host_links(inv, NetSpec())
    # h1 sent 100 pings, h2 got 80 of them, h1 got 60 replies back.
    results = {"h1": {"sent": {"10.0.0.2": 100}, "rtt_ms": {"10.0.0.2": [1.0] * 60},
                      "echoed": {}},
               "h2": {"sent": {}, "rtt_ms": {}, "echoed": {"10.0.0.1": 80}}}
    rows = {(r.src, r.dst): r for r in link_checks(links, probe_plan(links), results)}
    there, back = rows[("h1", "h2")], rows[("h2", "h1")]
    assert there.loss_pct == pytest.approx(20.0) and there.loss_packets == 100
    assert back.loss_pct == pytest.approx(25.0) and back.loss_packets == 80
    assert rows[("h1", "h2")].one_way_p50_ms is None
