"""The report's Reproduction section from a fixture database (no lab): the study's values
beside the lab's with their ratio, each finding's verdict with its test and p value, the
values drawn on the figures of their response, and the page clean in headless Chromium."""

from __future__ import annotations

import base64
import csv
import io
import re
import shutil
from pathlib import Path

from test_report_figures import ALL_KINDS, check_in_chromium, fabricate

from casslab.analysis.findings import FAILS, HOLDS, UNDETECTABLE
from casslab.report.html import build_report

# The fixture's run time is 2.0 + 0.5 * nodes + 0.3 s on 1GB, sd 0.05 s (3 trials a cell)
REFERENCE = """reference:
  study: fixture study
  values:
    - {response: runtime_s, at: {nodes: 1, ram: 2GB, workload: a}, value: 2000, unit: ms,
       source: "Table 3, p. 26"}
    - {response: runtime_s, at: {nodes: 3}, value: 4.0, unit: s, source: Fig. 23}
    - {response: runtime_s, at: {nodes: 6}, value: 9.0, unit: s, source: Fig. 23}
  findings:
    - {claim: more nodes take longer, factor: nodes, expect: higher, source: Table 3}
    - {claim: more RAM is slower, factor: ram, from: 1GB, to: 2GB, expect: higher,
       where: {nodes: 1}}
    - {claim: a and e alike, factor: workload, expect: no difference, where: {nodes: 1}}
    - {claim: half a second per node, factor: nodes, expect: slope, slope: 0.5,
       tolerance: 0.1, where: {ram: 2GB}}
"""


def test_reference_table_and_verdicts_are_in_the_page(tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS + REFERENCE)
    rep = build_report(tmp_path)
    r = rep.reproduction
    # a and e alike on 1 node: the interval lies within what 3 trials a side can detect
    assert [v.verdict for v in r.verdicts] == [HOLDS, FAILS, UNDETECTABLE, HOLDS]
    assert all(v.test.endswith("95 % simultaneous over 4 findings (Bonferroni, each "
                               "98.75 %), alpha 0.05") for v in r.verdicts)
    slope = r.verdicts[3]
    assert slope.fit is not None and 0.45 < slope.fit.slope < 0.55
    one, pooled = r.values
    assert one.lab.n == 3 and 2.35 < one.lab.median < 2.65 and 1.1 < one.ratio < 1.35
    assert pooled.lab.n == 12 and pooled.pooled == ("ram", "workload")
    assert r.reference.absent == ("reference.values[2] (nodes=6)",)
    page = rep.path.read_text()
    toc = re.search(r"<nav id='toc'>(.*?)</nav>", page)
    assert toc is not None and "href='#reproduction'" in toc.group(1)
    table = re.search(r"<table class=\"reference\">(.*?)</table>", page, re.S)
    assert table is not None
    assert "2,000 ms <small>(= 2 s)</small>" in table.group(1)
    assert "Table 3, p. 26" in table.group(1) and "pooled over ram, workload" in table.group(1)
    findings = re.search(r"<table class=\"findings\">(.*?)</table>", page, re.S)
    assert findings is not None
    for verdict in (HOLDS, FAILS):
        assert f">{verdict}</b>" in findings.group(1)
    assert f">{UNDETECTABLE} (+-" in findings.group(1) and "%, measured)</b>" in \
        findings.group(1)
    assert "Welch t on logs" in findings.group(1) and "(98.75 % CI)" in findings.group(1)
    # the slope's interval is one of the four simultaneous ones (98.75 %)
    assert "lab slope = 0.481 [0.426 - 0.537]" in findings.group(1)
    assert "(CI coverage 98.8%)" in findings.group(1)
    assert "paper = 0.5 &plusmn; 0.1 <small>(s per unit of nodes)</small>" in findings.group(1)
    assert "Not compared (1)" in page


def test_the_legend_explains_each_part_a_spent_inconclusive_label_can_carry(
        tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS + REFERENCE)
    page = build_report(tmp_path).path.read_text()
    legend = re.search(r"<b>inconclusive</b>: (.*?)</p>", page, re.S)
    assert legend is not None
    for part in ("could not be told from no effect", "the paper's size lies above or below",
                 "the rounds that would decide it"):
        assert part in legend.group(1), part


def test_reference_values_are_drawn_on_the_figures_of_their_response(tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS + REFERENCE)
    with_refs = build_report(tmp_path).figures
    fabricate(tmp_path / "plain", report=ALL_KINDS)
    plain = build_report(tmp_path / "plain").figures
    box, line = with_refs[0], with_refs[1]  # runtime_s by nodes, faceted by workload
    # the value that names the facet (workload a) is drawn; the pooled one has no panel
    assert "published values, 1," in box.caption and "published values, 1," in line.caption
    assert box.png_b64 != plain[0].png_b64
    # the download has the paper's value beside the lab's where a reference matches
    rows = list(csv.DictReader(io.StringIO(box.csv)))
    paper = {(r["panel"], r["nodes"], r["group"]): r["paper"] for r in rows}
    assert paper[("workload=a", "1", "ram=2GB")] == "2.0"
    assert paper[("workload=a", "1", "ram=1GB")] == "" and paper[("workload=e", "3",
                                                                   "ram=2GB")] == ""
    assert sum(1 for r in rows if r["paper"]) == 3  # the cell's three kept trials
    bar = with_refs[2]  # node_cpu_pct.sum: no reference values of that response
    assert "published" not in bar.caption
    assert len(base64.b64decode(box.png_b64)) > 10_000


def test_without_a_reference_block_the_section_says_so(tmp_path: Path) -> None:
    fabricate(tmp_path, report=ALL_KINDS)
    page = build_report(tmp_path).path.read_text()
    assert "<h2 id='reproduction'>Reproduction</h2><p class='note'>No reference values" in page


def test_the_page_with_verdicts_has_every_image_and_no_console_errors(tmp_path: Path) -> None:
    assert shutil.which("chromium"), "chromium missing: `make setup` installs it"
    fabricate(tmp_path, report=ALL_KINDS + REFERENCE)
    rep = build_report(tmp_path)
    got = check_in_chromium(rep.path)
    assert got == {"figures": 7, "drawn": 7, "errors": []}
    assert "class=\"findings\"" in rep.path.read_text()
    # the page's download of the first figure carries the paper's value beside the lab's
    link = re.search(r"<a download='fig13.csv' href='data:text/csv;base64,([^']+)'>",
                     rep.path.read_text())
    assert link is not None
    rows = list(csv.DictReader(io.StringIO(base64.b64decode(link.group(1)).decode())))
    assert {r["paper"] for r in rows} == {"", "2.0"}
