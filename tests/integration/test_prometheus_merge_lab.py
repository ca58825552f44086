"""A real Prometheus scrapes a 2-client `casslab run` and the shared 3-node lab's
exporter: the p99 PromQL reads from the clients' summed histogram buckets is within one
bucket (20 %) of the p99 of casslab-load's merged summary, and every node's Cassandra
figures (virtual tables) are scraped."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from casslab.lab import Lab

from labtools import get_in, prom_query

pytestmark = pytest.mark.integration

# Inside the lab's namespace (casslab-load runs there): its loopback is the test's own.
LOAD_PORT = 19480  # client I serves on LOAD_PORT + I
EXPORTER_ADDR = "127.0.0.1:19489"
PROM_ADDR = "127.0.0.1:19091"
CLI = [sys.executable, "-m", "casslab.cli.main"]
STEP = 1.2  # the buckets' ratio (casslab-load's bounds_us)


def _get(lab: Lab, url: str) -> str:
    return get_in(lab.exec_prefix(), url)


def _query(lab: Lab, promql: str) -> list[dict[str, object]]:
    return prom_query(lab.exec_prefix(), PROM_ADDR, promql)


def _wait_ready(lab: Lab, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            _get(lab, url)
            return
        except subprocess.CalledProcessError:
            assert proc.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, f"{url} not ready within 90 s"
            time.sleep(0.5)


@pytest.fixture
def scraped(lab3: Lab, tmp_path: Path) -> Iterator[None]:
    """The lab exporter and Prometheus, both in the lab's namespace."""
    cfg = tmp_path / "prometheus.yml"
    loads = ", ".join(f"'127.0.0.1:{LOAD_PORT + i}'" for i in range(2))
    cfg.write_text("global: {scrape_interval: 1s, scrape_timeout: 900ms}\n"
                   "scrape_configs:\n"
                   f"  - job_name: casslab-load\n    static_configs: [{{targets: [{loads}]}}]\n"
                   # Three nodes' virtual tables take over a second on a loaded
                   # slow machine: a longer scrape, so that timeouts do not pile up.
                   f"  - job_name: casslab-lab\n    scrape_interval: 3s\n"
                   f"    scrape_timeout: 3s\n    static_configs: [{{targets: "
                   f"['{EXPORTER_ADDR}']}}]\n")
    exp_log, prom_log = tmp_path / "exporter.log", tmp_path / "prometheus.log"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with exp_log.open("w") as out:
            procs.append(subprocess.Popen(
                [*lab3.exec_prefix(), *CLI, "lab", "metrics", "--name", lab3.name, "--serve",
                 EXPORTER_ADDR], stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy()))
        _wait_ready(lab3, f"http://{EXPORTER_ADDR}/metrics", procs[0], exp_log)
        with prom_log.open("w") as out:
            procs.append(subprocess.Popen(
                [*lab3.exec_prefix(), "prometheus", f"--config.file={cfg}",
                 f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address={PROM_ADDR}"],
                stdout=out, stderr=subprocess.STDOUT))
        _wait_ready(lab3, f"http://{PROM_ADDR}/-/ready", procs[1], prom_log)
        yield
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)


def test_promql_p99_of_two_clients_is_within_a_bucket_of_the_merged_summary(
        lab3: Lab, scraped: None) -> None:
    r = subprocess.run([*CLI, "run", "ycsb-a", "--name", lab3.name, "--phase", "both",
                        "--records", "2000", "--duration", "10s", "--rate", "400",
                        "--clients", "2", "--format", "json", "--", "--keyspace", "cvb_pmerge",
                        "--prometheus", f"127.0.0.1:{LOAD_PORT}", "--prometheus-linger", "4s"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["type"] == "summary"
    read_p99_s = summary["by_op"]["read"]["latency"]["p99_us"] / 1e6
    # The clients are gone: their last scrape is the counters' maximum within the range.
    sel = f'casslab_load_latency_seconds_bucket{{lab="{lab3.name}",op="read"}}'
    by_client = _query(lab3, f"sum by (client) (max_over_time({sel}[5m]))")
    assert sorted(str(x["metric"]["client"]) for x in by_client) == ["0", "1"]  # type: ignore[index]
    got = _query(lab3, f"histogram_quantile(0.99, sum by (le) (max_over_time({sel}[5m])))")
    prom_p99_s = float(str(got[0]["value"][1]))  # type: ignore[index]
    steps = abs(math.log(prom_p99_s / read_p99_s)) / math.log(STEP)
    print(f"read p99: PromQL {prom_p99_s * 1e3:.3f} ms, merged summary "
          f"{read_p99_s * 1e3:.3f} ms, {steps:.2f} buckets apart")
    assert steps <= 1.0, (prom_p99_s, read_p99_s)
    count = _query(lab3, f'sum(max_over_time(casslab_load_latency_seconds_count'
                         f'{{lab="{lab3.name}",op="read"}}[5m]))')
    read = summary["by_op"]["read"]
    timed = int(read["ok"]) + int(read["not_found"])  # what the latency histogram holds
    assert float(str(count[0]["value"][1])) == timed  # type: ignore[index]

    nodes = _query(lab3, f'max by (node) (max_over_time(casslab_node_cql_up{{lab="{lab3.name}"}}'
                         "[5m]))")
    assert {str(x["metric"]["node"]): str(x["value"][1]) for x in nodes} == {  # type: ignore[index]
        "node1": "1", "node2": "1", "node3": "1"}
    # Over the range, as cql_up above: a scrape that timed out on a busy machine marks
    # the series stale, and an instant query would then see no node at all.
    for metric in ("casslab_node_thread_pool_tasks", "casslab_node_compactions_pending",
                   "casslab_node_coordinator_requests_total"):
        per_node = _query(lab3, f"count by (node) (last_over_time({metric}"
                                f"{{lab=\"{lab3.name}\"}}[5m]))")
        assert len(per_node) == 3, (metric, per_node)
    writes = _query(lab3, "sum(max_over_time(casslab_node_coordinator_requests_total"
                          f'{{lab="{lab3.name}",kind="write",keyspace="cvb_pmerge"}}[5m]))')
    assert float(str(writes[0]["value"][1])) > 2000  # type: ignore[index]
