"""The HTML report on a synthetic campaign: every expected figure is there, tables are
there, and headless Chromium renders it (screenshot non-trivial)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from casslab.metrics.samples import HostSample, NodeSample, TrialMetrics
from casslab.report.html import build_report
from casslab.store.db import Store

FACTORS = [{"name": "nodes", "kind": "lab", "label": "nodes", "levels": [1, 3]},
           {"name": "workload", "kind": "schema", "label": "workload",
            "levels": ["ycsb-a", "ycsb-i"]}]


def summary(runtime_s: float) -> dict[str, object]:
    p = {"mean_us": 900.0, "p50_us": 800, "p95_us": 1500, "p99_us": 2500, "p999_us": 4000,
         "max_us": 9000, "min_us": 100}
    return {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": runtime_s, "ops": 1000,
            "ops_s": 1000 / runtime_s, "errors": 0,
            "by_op": {"read": {"ops": 1000, "ops_s": 1000 / runtime_s, "errors": 0,
                               "latency": p, "service": p}}}


def fabricate(directory: Path, *, with_search: bool = True,
              response: str = "runtime_s") -> None:
    rng = random.Random(3)
    store = Store(directory)
    cid, _ = store.open_campaign(name="synthetic", digest="d1", spec_yaml="name: synthetic\n",
                                 response=response, factors=FACTORS)
    plan = []
    seq = 0
    for ci, (n, w) in enumerate([(1, "ycsb-a"), (1, "ycsb-i"), (3, "ycsb-a"), (3, "ycsb-i")]):
        for t in range(1, 7):
            seq += 1
            plan.append((seq, ci, f"nodes={n},workload={w}", {"nodes": n, "workload": w}, t,
                         t == 1, "none"))
    status = store.ensure_plan(cid, plan)
    for s, ci, _key, params, _t, _w, _r in plan:
        base = 2.0 + 0.8 * (params["nodes"] == 3) + 0.3 * (params["workload"] == "ycsb-i")
        runtime = base + rng.gauss(0, 0.1)
        m = TrialMetrics()
        for i in range(1, 13):
            for node in range(1, params["nodes"] + 1):
                m.nodes.append(NodeSample(float(i), f"node{node}", 40 + 10 * rng.random() + ci,
                                          8.0, 5.0, 300 + 50 * rng.random(), 800.0,
                                          10.0 + i * 0.5, 0, 0))
            m.host.append(HostSample(float(i), 60 + 5 * rng.random(), 15.0, 1.0, 10.0, 500.0))
        intervals = [{"t_s": float(i), "stage": "run", "recorded": True, "ops": 80,
                      "ops_s": 400 + 40 * rng.random() - 20 * ci, "errors": 0, "by_op": {}}
                     for i in range(1, 13)]
        store.commit_trial(status[s][0], summary=summary(runtime), intervals=intervals,
                           metrics=m, command=["casslab-load"])
    if with_search:
        for i, (lvl, ops) in enumerate([(1, 300), (2, 550), (4, 800), (8, 850), (16, 700)]):
            store.add_search_step(cid, "workload=ycsb-a", i + 1, "in_flight", lvl, ops, 3.0, 1,
                                  "throughput fell" if i == 4 else None)
    store.close()


EXPECTED = ["box-nodes", "box-workload", "line-nodes", "order", "series-throughput",
            "series-latency", "series-cpu", "series-space", "cdf", "search"]


def test_report_has_every_figure_and_table(tmp_path: Path) -> None:
    fabricate(tmp_path)
    rep = build_report(tmp_path)
    page = rep.path.read_text()
    assert [f.id for f in rep.figures] == EXPECTED
    assert page.count("<img ") == len(EXPECTED)
    assert len(re.findall(r"src='data:image/png;base64,[A-Za-z0-9+/=]{2000,}'", page)) == \
        len(EXPECTED)
    for fid in EXPECTED:
        assert f"id='fig-{fid}'" in page
    for heading in ("Cells", "Factors", "Pairwise comparisons", "Scaling", "Peak search"):
        assert heading in page
    assert "4 warm-up (dropped)" in page and "20 kept" in page
    # the drift table: the fixture's noise has no trend, so no warning
    assert "<h2 id='drift'>Drift across the campaign</h2>" in page
    assert a_drift_row(page) and "! Drift." not in page
    assert "never settled" not in page  # 12 s trials: too short to classify, not marked
    assert "http://" not in page and "https://" not in page  # self-contained
    a = rep.analysis
    assert len(a.cells) == 4 and all(c.stats.n == 5 for c in a.cells)
    nodes = next(f for f in a.factors if f.name == "nodes")
    assert nodes.anova.p < 0.001 and nodes.kruskal.p < 0.001


def a_drift_row(page: str) -> bool:
    m = re.search(r"<h2 id='drift'>.*?<tbody>(.*?)</tbody>", page, re.S)
    return m is not None and "run time (s)" in m.group(1) and "% per trial" not in m.group(1)


def test_each_response_gets_its_own_sections_and_figures(tmp_path: Path) -> None:
    fabricate(tmp_path, with_search=False, response="runtime_s, node_cpu_pct.sum")
    rep = build_report(tmp_path)
    page = rep.path.read_text()
    assert [a.response for a in rep.analyses] == ["runtime_s", "node_cpu_pct.sum"]
    assert [f.id for f in rep.figures][:7] == [
        "box-nodes-runtime_s", "box-workload-runtime_s", "line-nodes-runtime_s",
        "box-nodes-node_cpu_pct-sum", "bar-nodes-node_cpu_pct-sum",
        "box-workload-node_cpu_pct-sum", "line-nodes-node_cpu_pct-sum"]
    assert "Results 1 of 2: run time (s)" in page
    assert "Results 2 of 2: node_cpu_pct.sum (% of one core)" in page
    # each response's figures sit in its own section, before the next response's
    second = page.index("<h2 id='response-2'>")
    assert page.index("id='fig-box-nodes-runtime_s'") < second
    assert page.index("id='fig-bar-nodes-node_cpu_pct-sum'") > second
    assert page.count(">Cells</h3>") == 2
    assert "sum over the nodes" in page and "from casslab-load&#x27;s summary" in page
    # node CPU (user 40-50 + ci, system 8) summed over 1 or 3 nodes
    cpu = {c.key: c.stats.median for c in rep.analyses[1].cells}
    assert 48 < cpu["nodes=1,workload=ycsb-a"] < 58
    assert 3 * 50 < cpu["nodes=3,workload=ycsb-i"] < 3 * 61


def test_trials_without_the_response_are_left_out_and_counted(tmp_path: Path) -> None:
    fabricate(tmp_path, with_search=False, response="runtime_s, insert.mean_ms")
    rep = build_report(tmp_path)  # the fabricated trials ran reads only
    insert = rep.analyses[1]
    assert insert.cells == [] and insert.counts["no_value"] == 20
    assert "20 finished without a value for this response (left out)" in \
        rep.path.read_text()


def test_report_shows_the_factorial_anova_and_honest_intervals(tmp_path: Path) -> None:
    fabricate(tmp_path)
    rep = build_report(tmp_path)
    page, a = rep.path.read_text(), rep.analysis
    assert a.factorial is not None
    terms = {t.name: t for t in a.factorial.terms}
    assert set(terms) == {"nodes", "workload", "nodes x workload", "residual"}
    assert terms["nodes"].p < 0.001 and terms["residual"].df == 16
    for text in ("Factors (factorial ANOVA)", "nodes x workload", "Assumption checks",
                 "Shapiro-Wilk", "Brown-Forsythe", "Rank-transform ANOVA",
                 "within each level of the others", "order statistics", "93.8%",
                 "95 % CI (mean, t)", "batch means",
                 "Too few trials for a 95 % CI of the median in 4 of 4 cells",
                 "95 % needs n &gt;= 6"):
        assert text in page, text
    # n = 5 per cell: [min, max] covers 93.8 %, flagged as short of 95 %
    assert all(c.stats.ci_warning and c.stats.ci_low == c.stats.minimum for c in a.cells)
    # every trial's 12 per-second samples, in batches of 1 or 2
    assert all(len(c.within) == 5 and all(b.batches * b.batch_size == 12 for b in c.within)
               for c in a.cells)


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    assert shutil.which("chromium"), "chromium missing: `make setup` installs it (APT_PACKAGES)"
    fabricate(tmp_path)
    rep = build_report(tmp_path)
    shot = tmp_path / "report.png"
    screenshot(rep.path, shot)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 100_000, "a blank page compresses to a few kB"


def screenshot(html: Path, png: Path, height: int = 4000) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-quic", "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", f"--screenshot={png}",
                        f"--window-size=1280,{height}", f"file://{html}"],
                       check=True, capture_output=True, timeout=120)


def test_report_of_a_schema_1_database_says_its_percentiles_are_not_merged(
        tmp_path: Path) -> None:
    fixture = Path(__file__).parent.parent / "fixtures" / "results_v1.db"
    shutil.copy(fixture, tmp_path / "results.db")
    rep = build_report(tmp_path)
    page = rep.path.read_text()
    assert "3 kept trials were written by schema 1" in page
    assert [c.key for c in rep.analysis.cells] == ["nodes=1", "nodes=3"]
    assert rep.analysis.cells[1].values == [40.6]  # p50 response, as schema 1 stored it


def test_report_of_merged_percentiles_has_no_schema_1_note(tmp_path: Path) -> None:
    fabricate(tmp_path, with_search=False)
    assert "written by schema 1" not in build_report(tmp_path).path.read_text()
