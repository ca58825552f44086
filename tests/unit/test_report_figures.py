"""Declared figures drawn from fixture databases (built with the store, no lab): every
kind, facets, nothing pooled or dropped silently, percentiles from the stored
HdrHistograms, stage boundaries; and the page in headless Chromium: every figure has an
image, no console errors, CSV links that hold the figure's numbers."""

from __future__ import annotations

import base64
import csv
import io
import json
import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from hdrh.histogram import HdrHistogram

from casslab.metrics.samples import HostSample, NodeSample, TrialMetrics
from casslab.report.html import build_report
from casslab.store.db import Store

FACTORS = [{"name": "nodes", "kind": "lab", "label": "nodes", "levels": [1, 3]},
           {"name": "ram", "kind": "lab", "label": "ram", "levels": ["1GB", "2GB"]},
           {"name": "workload", "kind": "schema", "label": "workload", "levels": ["a", "e"]}]
ALL_KINDS = """
report:
  figures:
    - {kind: box, id: fig13, x: nodes, colour: ram, facet: workload}
    - {kind: line, x: nodes, colour: ram, facet: workload}
    - {kind: bar, x: workload, colour: ram, response: node_cpu_pct.sum}
    - {kind: series, metric: throughput, window: 3, facet: workload}
    - {kind: series, metric: data_mib}
    - {kind: order}
    - {kind: cdf, facet: workload}
"""


def latency_hist(rng: random.Random, median_us: float, stall_us: int = 0) -> str:
    """Like casslab-load's (auto-resized): its range ends at its own largest value, so a
    trial with a stall has a wider histogram than the others."""
    values = [int(rng.lognormvariate(0, 0.3) * median_us) for _ in range(500)]
    values += [stall_us] if stall_us else []
    h = HdrHistogram(1, max(values) + 1, 3)
    for v in values:
        h.record_value(v)
    return str(h.encode().decode())


def summary(runtime_s: float, hist: str | None) -> dict[str, object]:
    p = {"mean_us": 900.0, "p50_us": 800, "p95_us": 1500, "p99_us": 2500, "p999_us": 4000,
         "max_us": 9000, "min_us": 100}
    op: dict[str, object] = {"ops": 1000, "ops_s": 1000 / runtime_s, "errors": 0,
                             "latency": p, "service": p}
    if hist:
        op["hist"] = {"latency": hist, "service": hist}
    return {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": runtime_s, "ops": 1000,
            "ops_s": 1000 / runtime_s, "errors": 0, "by_op": {"read": op}}


def fabricate(directory: Path, *, report: str = "", factors: list[dict[str, object]] | None
              = None, trials: int = 3, hists: bool = True,
              responses: str = "runtime_s, node_cpu_pct.sum") -> None:
    """A campaign of every combination of `factors`' levels, one warm-up and `trials`
    kept trials per cell, each with staged intervals (load, run) and node samples."""
    rng = random.Random(5)
    factors = factors or FACTORS
    store = Store(directory)
    spec_yaml = "name: fixture\nworkload: {name: ycsb-a}\n" + report
    cid, _ = store.open_campaign(name="fixture", digest="d1", spec_yaml=spec_yaml,
                                 response=responses, factors=factors)
    cells: list[dict[str, object]] = [{}]
    for f in factors:
        cells = [{**c, str(f["name"]): lv} for c in cells for lv in f["levels"]]  # type: ignore[attr-defined]
    plan, seq = [], 0
    for ci, params in enumerate(cells):
        key = ",".join(f"{k}={v}" for k, v in params.items())
        for t in range(trials + 1):
            seq += 1
            plan.append((seq, ci, key, params, t + 1, t == 0, "none"))
    status = store.ensure_plan(cid, plan)
    for s, ci, _key, params, trial_no, _w, _r in plan:
        nodes = int(params.get("nodes", 1))  # type: ignore[call-overload]
        runtime = 2.0 + 0.5 * nodes + 0.3 * (params.get("ram") == "1GB") + rng.gauss(0, 0.05)
        m = TrialMetrics()
        for i in range(1, 13):
            for node in range(1, nodes + 1):
                m.nodes.append(NodeSample(float(i), f"node{node}", 40 + 5 * rng.random(), 8.0,
                                          5.0, 300.0, 800.0, 10.0 + i, 0, 0))
            m.host.append(HostSample(float(i), 60.0, 15.0, 1.0, 10.0, 500.0))
        intervals = [{"t_s": float(i), "stage": "load" if i <= 4 else "run",
                      "recorded": i > 4, "ops": 80, "ops_s": 400 + 40 * rng.random() - 10 * ci,
                      "errors": 0, "by_op": {}, "interval_s": 1.0} for i in range(1, 13)]
        stall = 900_000 if trial_no == 3 else 0  # the second kept trial of each cell
        hist = latency_hist(rng, 800 + 400 * nodes, stall) if hists else None
        store.commit_trial(status[s][0], summary=summary(runtime, hist), intervals=intervals,
                           metrics=m, command=["casslab-load"])
    store.close()


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_every_declared_kind_is_drawn_in_order_with_its_data(tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS)
    rep = build_report(tmp_path)
    assert [f.id for f in rep.figures] == ["fig13", "line-2", "bar-3", "series-4", "series-5",
                                           "order-6", "cdf-7"]
    for f in rep.figures:
        assert len(base64.b64decode(f.png_b64)) > 10_000, f.id
        assert len(rows_of(f.csv)) > 0 and f.left_out == "", f.id
    box = rows_of(rep.figures[0].csv)
    # seed 000 Figs 13-16: x nodes, colour ram, one panel per workload; 8 cells x 3 trials
    assert {r["panel"] for r in box} == {"workload=a", "workload=e"}
    assert {r["group"] for r in box} == {"ram=1GB", "ram=2GB"}
    assert len(box) == 24
    bar = rep.figures[2]
    assert "95 % confidence interval of the mean" in bar.caption
    assert "also split by nodes (not pooled)" in bar.caption
    order = rows_of(rep.figures[5].csv)
    assert len(order) == 32 and sum(r["warmup"] == "1" for r in order) == 8


def test_a_factor_the_figure_does_not_name_splits_the_boxes(tmp_path: Path) -> None:
    fabricate(tmp_path, report="report: {figures: [{kind: box, x: nodes}]}\n")
    fig = build_report(tmp_path).figures[0]
    groups = {r["group"] for r in rows_of(fig.csv)}
    assert groups == {"ram=1GB, workload=a", "ram=1GB, workload=e", "ram=2GB, workload=a",
                      "ram=2GB, workload=e"}
    assert "also split by ram, workload (not pooled)" in fig.caption


def test_groups_beyond_the_drawing_limit_are_counted_and_in_the_csv(tmp_path: Path) -> None:
    many = [{"name": "threads", "kind": "load", "label": "threads",
             "levels": list(range(1, 26))}]
    fabricate(tmp_path, factors=many, trials=1, responses="runtime_s",
              report="report: {figures: [{kind: series, metric: node_cpu_pct}]}\n")
    rep = build_report(tmp_path)
    fig = rep.figures[0]
    assert fig.left_out == "5 groups left out of the drawing: their numbers are in the CSV"
    assert len({r["cell"] for r in rows_of(fig.csv)}) == 25
    assert "Not drawn: 5 groups left out" in rep.path.read_text()


def test_percentiles_come_from_the_merged_histograms(tmp_path: Path) -> None:
    fabricate(tmp_path, report="report: {figures: [{kind: cdf}]}\n")
    fig = build_report(tmp_path).figures[0]
    assert "HdrHistograms merged" in fig.caption
    rows = rows_of(fig.csv)
    p50 = {r["cell"]: float(r["latency_ms"]) for r in rows if r["percentile"] == "50.0"}
    # lognormal around 0.8 + 0.4 * nodes ms
    assert 1.1 < p50["nodes=1,ram=1GB,workload=a"] < 1.3
    assert 1.9 < p50["nodes=3,ram=2GB,workload=e"] < 2.1
    assert {r["source"] for r in rows} == {"histogram"}
    top = {r["cell"]: float(r["latency_ms"]) for r in rows if r["percentile"] == "99.999"}
    assert all(899 < v < 901 for v in top.values())  # each cell's 0.9 s stall


def test_without_histograms_the_stored_percentiles_are_plotted_and_said_so(
        tmp_path: Path) -> None:
    fabricate(tmp_path, hists=False, report="report: {figures: [{kind: cdf}]}\n")
    fig = build_report(tmp_path).figures[0]
    assert "from the stored percentiles only" in fig.caption
    assert [r["percentile"] for r in rows_of(fig.csv)][:4] == ["50.0", "95.0", "99.0", "99.9"]


def test_staged_series_marks_the_stage_boundaries(tmp_path: Path) -> None:
    fabricate(tmp_path, responses="runtime_s")
    rep = build_report(tmp_path)  # no declarations: the design's defaults
    tput = next(f for f in rep.figures if f.id == "series-throughput")
    assert "stage boundaries" in tput.caption and "Moving mean over 5" in tput.caption
    rows = rows_of(tput.csv)
    cell = [r for r in rows if r["cell"] == "nodes=1,ram=1GB,workload=a"]
    assert [float(r["t_s"]) for r in cell] == [float(t) for t in range(1, 13)]
    assert all(float(r["min"]) <= float(r["mean"]) <= float(r["max"]) for r in cell)


def test_page_has_contents_versions_spec_and_a_reproduction_section(tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS)
    page = build_report(tmp_path).path.read_text()
    toc = re.search(r"<nav id='toc'>(.*?)</nav>", page)
    assert toc is not None
    targets = ("design", "response-1", "figures", "reproduction", "versions", "spec")
    for target in targets:
        assert f"href='#{target}'" in toc.group(1) and f"id='{target}'" in page
    # a paper's order: design, results, reproduction, appendices
    at = [page.index(f"<h2 id='{t}'>") for t in targets]
    assert at == sorted(at)
    # every figure is listed in the contents, under its section
    for fid in re.findall(r"<figure id='([^']+)'", page):
        assert f"href='#{fid}'" in toc.group(1)
    assert "versions and machine" in page and "matplotlib" in page
    assert "http://" not in page and "https://" not in page


HOOK = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push('error: ' + e.message), true);
const origError = console.error;
console.error = (...a) => { window.__errors.push('console: ' + a.join(' '));
                            origError.apply(console, a); };
window.addEventListener('load', () => {
  const figs = [...document.querySelectorAll('figure')];
  const drawn = figs.filter(f => { const i = f.querySelector('img');
                                   return i && i.complete && i.naturalWidth > 100; });
  const out = document.createElement('pre');
  out.id = '__check';
  out.textContent = JSON.stringify({figures: figs.length, drawn: drawn.length,
                                    errors: window.__errors});
  document.body.appendChild(out);
});
</script>"""


def check_in_chromium(page: Path) -> dict[str, object]:
    """Load the page (a copy with an error hook first in <head>) in headless Chromium and
    return what the hook found after the load event."""
    hooked = page.with_name("hooked.html")
    hooked.write_text(page.read_text().replace("<head>", "<head>" + HOOK, 1))
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                              "--no-first-run", "--disable-background-networking",
                              "--disable-component-update", "--disable-sync",
                              f"--user-data-dir={profile}", "--dump-dom",
                              f"file://{hooked}"],
                             check=True, capture_output=True, text=True, timeout=120)
    m = re.search(r"<pre id=\"__check\">(.*?)</pre>", out.stdout, re.S)
    assert m, out.stdout[-2000:]
    result: dict[str, object] = json.loads(m.group(1).replace("&quot;", '"'))
    return result


def test_every_figure_has_an_image_and_no_console_errors_in_chromium(tmp_path: Path) -> None:
    assert shutil.which("chromium"), "chromium missing: `make setup` installs it"
    fabricate(tmp_path, report=ALL_KINDS)
    rep = build_report(tmp_path)
    got = check_in_chromium(rep.path)
    assert got == {"figures": 7, "drawn": 7, "errors": []}


def test_chromium_check_sees_a_broken_image_and_a_script_error(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><html><head></head><body><figure><img "
                    "src='data:image/png;base64,AAAA'></figure><script>nope();</script>"
                    "</body></html>")
    got = check_in_chromium(page)
    assert got["figures"] == 1 and got["drawn"] == 0
    assert any("nope" in str(e) for e in got["errors"])  # type: ignore[attr-defined]


def test_csv_links_hold_each_figures_numbers(tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS)
    rep = build_report(tmp_path)
    page = rep.path.read_text()
    links = re.findall(r"<a download='([^']+)' href='data:text/csv;base64,([^']+)'>", page)
    # in page order (each figure in its section), one per figure
    assert sorted(name for name, _ in links) == sorted(f"{f.id}.csv" for f in rep.figures)
    by_name = dict(links)
    for f in rep.figures:
        assert base64.b64decode(by_name[f"{f.id}.csv"]).decode() == f.csv


EDGE_FACTORS = [
    {"name": "network", "kind": "network", "label": "edge delays",
     "levels": [{"client": {"delay_ms": 10}, "groups": {"edge": {"n1-n2": 5, "n2-n3": 10}}},
                {"client": {"delay_ms": 10}, "groups": {"edge": {"n1-n2": 15, "n2-n3": 20}}}]},
    {"name": "workload", "kind": "schema", "label": "workload", "levels": ["a", "e"]}]
EDGE_FIGURES = """report:
  figures:
    - {kind: box, x: network, colour: workload}
    - {kind: bar, x: workload, facet: network, response: node_cpu_pct.sum}
    - {kind: order}
"""


def test_mapping_levels_show_as_short_labels_and_in_full_in_the_csv(tmp_path: Path) -> None:
    fabricate(tmp_path, report=EDGE_FIGURES, factors=EDGE_FACTORS)
    rep = build_report(tmp_path)
    page = rep.path.read_text()
    box = rows_of(rep.figures[0].csv)
    assert {r["network"] for r in box} == {"edge=5/10", "edge=15/20"}
    assert {json.loads(r["network (level)"])["groups"]["edge"]["n1-n2"] for r in box} == {5, 15}
    assert {r["panel"] for r in rows_of(rep.figures[1].csv)} == {"network=edge=5/10",
                                                                 "network=edge=15/20"}
    assert {r["cell"] for r in rows_of(rep.figures[2].csv)} >= {
        "network={'client': {'delay_ms': 10}, 'groups': {'edge': {'n1-n2': 5, 'n2-n3': 10}}}"
        ",workload=a"}
    assert [c.label for c in rep.analyses[0].cells][:2] == ["network=edge=5/10,workload=a",
                                                            "network=edge=5/10,workload=e"]
    # tables print the labels; the level in full only in the design table and the spec
    design = page[page.index("id='design'"):page.index("id='response-1'")]
    assert "edge=5/10 <small>= {&quot;client&quot;" in design
    results = page[page.index("id='response-1'"):page.index("id='reproduction'")]
    assert "delay_ms" not in results
    assert check_in_chromium(rep.path) == {"figures": 3, "drawn": 3, "errors": []}


def test_declared_labels_name_the_levels_on_every_figure(tmp_path: Path) -> None:
    levels = json.dumps(EDGE_FACTORS[0]["levels"])
    labels = f"factors:\n  - {{name: network, levels: {levels}, labels: [near, far]}}\n"
    fabricate(tmp_path, report=labels + EDGE_FIGURES, factors=EDGE_FACTORS)
    rep = build_report(tmp_path)
    assert {r["network"] for r in rows_of(rep.figures[0].csv)} == {"near", "far"}
    assert {r["group"] for r in rows_of(rep.figures[2].csv)} == {
        "network=near, workload=a", "network=near, workload=e", "network=far, workload=a",
        "network=far, workload=e"}
    assert "network=far,workload=e" in rep.path.read_text()
