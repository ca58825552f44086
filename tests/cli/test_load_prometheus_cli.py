"""casslab-load --prometheus on a busy port: one error line naming the address, before
any connection is tried; and the dashboard only asks for metrics that are served."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

from casslab.load.runner import find_binary
from casslab.testbed.exporter import METRIC_HELP

REPO = Path(__file__).resolve().parents[2]


def test_a_busy_prometheus_port_is_one_error_naming_it() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        addr = f"127.0.0.1:{s.getsockname()[1]}"
        r = subprocess.run([find_binary(), "ycsb", "-w", "a", "--hosts", "127.0.0.1:1",
                            "--prometheus", addr], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1, r.stderr
    assert "--prometheus" in r.stderr and addr in r.stderr, r.stderr


def test_the_dashboard_asks_only_for_served_metrics() -> None:
    dash = json.loads((REPO / "dashboards" / "casslab-load.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    used = {m for e in exprs for m in re.findall(r"\b(casslab_[a-z_]+)", e)}
    load = {"casslab_load_operations_total", "casslab_load_errors_total",
            "casslab_load_latency_seconds_bucket", "casslab_load_latency_seconds_sum",
            "casslab_load_latency_seconds_count"}
    assert used and used <= load | set(METRIC_HELP), used - load - set(METRIC_HELP)
    # Node panels (Cassandra's own figures) and the merged histogram are there.
    assert {"casslab_node_coordinator_latency_seconds", "casslab_node_thread_pool_tasks",
            "casslab_node_compactions_pending", "casslab_load_latency_seconds_bucket"} <= used
    assert all("quantile=" not in e for e in exprs if "casslab_load_" in e)
