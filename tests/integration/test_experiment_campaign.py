"""An example campaign end to end on a real lab: examples/004-containers/2-write.yaml (one
operation type) with its thread levels replaced by a peak search over closed-loop threads
and runs at 100 % and 66 % of the peak rate (seed 001's method), shrunk to a few seconds
per trial; then
`casslab experiment export` and `casslab report`, rendered by headless Chromium."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
import yaml

from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec
from casslab.store.records import Results

from labtools import casslab, leftovers

LAB = "itexp-example"
EXAMPLE = Path(__file__).parents[2] / "examples" / "004-containers" / "2-write.yaml"

pytestmark = pytest.mark.integration


def shrink(text: str) -> str:
    """The example with one profile and one workload, tiny search and trials."""
    d: dict[str, Any] = yaml.safe_load(text)
    d["name"] = "itexp-containers"
    d["workload"]["records"] = 500
    d["workload"]["options"] = {"pop": "uniform(1..500)"}
    d["factors"] = [{"name": "rate", "levels": ["100%", "66%"]}]
    d["search"] = {"vary": "threads", "start": 1, "multiply": 2, "max_steps": 3, "ops": 500,
                   "stop_when": {"throughput_drop_pct": 5, "p99_ms": 200}}
    d["design"] = {"trials": 2, "warmup_trials": 1}
    d["stop"] = {"duration_s": 3, "timeout_s": 60}
    d["metrics"] = {"interval_s": 0.5}
    # the study's numbers name the profiles and workloads dropped here
    d.pop("reference", None)
    # its figures and sizes name the factors replaced here
    d.pop("report", None)
    d.pop("scales", None)
    d["analysis"] = {"response": "p99_ms"}
    return yaml.safe_dump(d, sort_keys=False)


def test_example_campaign_end_to_end(tmp_path: Path) -> None:
    spec = parse_spec(shrink(EXAMPLE.read_text()), source="shrunk-004")
    results = tmp_path / "results"
    events: list[Event] = []
    try:
        outcome = CampaignRunner(spec, results, home=default_home(), cache=default_cache(),
                                 lab_name=LAB, on_event=events.append).run()
    finally:
        assert not leftovers(LAB)
    assert (outcome.done, outcome.failed) == (6, 0)
    assert len(outcome.peaks) == 1
    peak = next(iter(outcome.peaks.values()))
    assert peak.peak_ops_s > 0 and 1 <= len(peak.steps) <= 3
    assert any(e.kind == "search" for e in events)

    conn = sqlite3.connect(results / "results.db")
    rates = sorted({json.loads(p)["rate"] for (p,) in conn.execute(
        "SELECT params_json FROM trials WHERE status='done'")})
    assert rates == pytest.approx(sorted([round(peak.peak_ops_s * 0.66, 1),
                                          round(peak.peak_ops_s, 1)]))
    # How many samples fit in a trial depends on how busy the machine is; that every
    # kept trial has node metrics, and that they saw the node work, does not.
    cpu = conn.execute("SELECT max(cpu_user_pct + cpu_sys_pct), count(DISTINCT trial_id) "
                       "FROM node_metrics").fetchone()
    assert cpu[0] > 1.0 and cpu[1] >= 6, "node metrics in every trial"
    assert conn.execute("SELECT count(*) FROM sstables").fetchone()[0] > 0
    assert conn.execute("SELECT count(*) FROM table_metrics WHERE kind='write'").fetchone()[0] > 0
    assert conn.execute("SELECT max(data_mib) FROM node_metrics").fetchone()[0] > 0
    assert conn.execute("SELECT count(*) FROM search_steps").fetchone()[0] == len(peak.steps)
    conn.close()
    store, repo = Results.open(results)
    with store:
        kept = repo.kept_trials()
        assert len(kept) == 4
        for t in kept:
            # One operation type ran (stress-write): casslab-load's merged 'all' histogram
            # is that type's, so the ALL row must equal it, and both carry histograms.
            *ops, total = repo.op_summaries(t.trial_id)
            assert total.op == "ALL" and total.pct_source == "histogram"
            assert total.ops == sum(o.ops for o in ops)
            [live] = [o for o in ops if o.ops > 0]
            assert [total.p50_ms, total.p99_ms] == [live.p50_ms, live.p99_ms]
            assert total.latency_hist and total.service_hist and live.latency_hist
            ivs = [iv for iv in repo.intervals(t.trial_id) if iv.ops > 0]
            assert ivs and all(iv.pct_source == "histogram" and iv.p99_ms for iv in ivs)

    exp = casslab("experiment", "export", str(results), "--format", "parquet")
    assert exp.returncode == 0, exp.stderr
    assert pq.read_table(results / "export" / "trials.parquet").num_rows == 6

    rep = casslab("report", str(results))
    assert rep.returncode == 0, rep.stderr
    assert "report:" in rep.stdout and "rate=66%" in rep.stdout
    page = (results / "report.html").read_text()
    ids = re.findall(r"<figure id='fig-([a-z0-9-]+)'><img ", page)
    # As in a paper: each response's figures in its section, the search in its own, then
    # the figures over time and by percentile.
    assert ids == ["box-rate", "line-rate", "order", "search", "series-throughput",
                   "series-latency", "series-cpu", "series-space", "cdf"]
    shot = results / "report.png"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-quic", "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", f"--screenshot={shot}",
                        "--window-size=1280,4000", f"file://{results / 'report.html'}"],
                       check=True, capture_output=True, timeout=120)
    assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 100_000
