"""A real Prometheus server scrapes casslab-load --prometheus during a run against a
real 1-node lab; its query returns the run's operation count, the summary's."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from casslab.lab import Lab
from casslab.load import LoadSpec, run_load

from labtools import get_in, prom_query

pytestmark = pytest.mark.integration

LOAD_ADDR = "127.0.0.1:19470"
PROM_ADDR = "127.0.0.1:19090"


@pytest.fixture(scope="module")
def lab(lab1: Lab) -> Lab:
    """The run's shared 1-node lab (conftest; no CPU quota); the run writes a keyspace
    of its own (cvb_prom)."""
    return lab1


def _get(lab: Lab, url: str) -> str:
    return get_in(lab.exec_prefix(), url)


def _query(lab: Lab, promql: str) -> list[dict[str, object]]:
    return prom_query(lab.exec_prefix(), PROM_ADDR, promql)


@pytest.fixture
def prometheus(lab: Lab, tmp_path: Path) -> Iterator[None]:
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global: {scrape_interval: 500ms, scrape_timeout: 400ms}\n"
                   "scrape_configs:\n"
                   "  - job_name: casslab-load\n"
                   f"    static_configs: [{{targets: ['{LOAD_ADDR}']}}]\n")
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen([*lab.exec_prefix(), "prometheus", f"--config.file={cfg}",
                             f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address={PROM_ADDR}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(lab, f"http://{PROM_ADDR}/-/ready")
                break
            except subprocess.CalledProcessError:
                assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
                assert time.monotonic() < deadline, "prometheus not ready within 60 s"
                time.sleep(0.5)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_prometheus_scrapes_the_runs_operation_count(lab: Lab, prometheus: None) -> None:
    hosts = [f"{n.address}:9042" for n in lab.state().nodes]
    spec = LoadSpec.of("ycsb-a", {"phase": "both", "records": 500, "duration": "4s",
                                  "rate": 300}, ["--keyspace", "cvb_prom", "--prometheus",
                                                 LOAD_ADDR, "--prometheus-linger", "3s"])
    s = run_load(spec, hosts=hosts, prefix=lab.exec_prefix()).summary
    assert s.ops > 500
    # Counters survive the target going away only inside a range: max over the last minute.
    got = _query(lab, "sum(max_over_time(casslab_load_operations_total[1m]))")
    assert got and float(str(got[0]["value"][1])) == s.ops  # type: ignore[index]
    by_op = _query(lab, "max_over_time(casslab_load_latency_seconds_count[1m])")
    assert {str(r["metric"]["op"]) for r in by_op} >= {"read", "update"}  # type: ignore[index]
