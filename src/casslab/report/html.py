"""`casslab report DIR`: one self-contained HTML file (plots as base64 PNG) from a
campaign's results database."""

from __future__ import annotations

import base64
import html
import math
import os
import platform
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from casslab.analysis.campaign import Analysis, Labeller, analyze, cell_label, labeller
from casslab.analysis.clients import SLOW_SHARE, CellClients, client_table
from casslab.analysis.drift import drift_warning
from casslab.analysis.effects import DIFFERENCE, LOG_RATIO
from casslab.analysis.factorial import Factorial, Term
from casslab.analysis.findings import (
    FAILS,
    HOLDS,
    SIZE_DIFFERS,
    UNDETECTABLE,
    ValueRow,
    Verdict,
    compare_values,
    judge,
    rounds_of,
    size_text,
    smallest_effect_pct,
    spent_of,
)
from casslab.analysis.intervals import BatchMeans, min_n_for_median
from casslab.analysis.responses import explain, profile_cores, trial_values
from casslab.analysis.stats import OUTLIER_SD
from casslab.analysis.steady import BATCH, MIN_BATCHES, STEADY, Steadiness, steady_state
from casslab.experiment.labels import scalar_label
from casslab.experiment.reference import Reference, read_reference
from casslab.experiment.search import Step, find_knee
from casslab.report import plots
from casslab.report.figures import (
    Figure,
    declared,
    declared_figures,
    design_factors,
    labelled_factors,
    to_csv,
)
from casslab.store.records import Campaign, Results, TrialRow, no_campaign
from casslab.store.schema import V1_MEAN_MAX

REPORT_NAME = "report.html"


@dataclass(frozen=True)
class Report:
    path: Path
    figures: list[Figure]
    analysis: Analysis  # the first response's
    analyses: list[Analysis]  # one per response, in the spec's order
    reproduction: Reproduction = field(default_factory=lambda: Reproduction(Reference()))
    spec_yaml: str = ""  # the spec stored with the campaign (what ran)
    spec_digest: str = ""  # its stored digest, which names the scale it ran at
    rounds: dict[int, int] | None = None  # kept trial id -> round (interleaved designs)


@dataclass(frozen=True)
class Reproduction:
    """The spec's `reference` and how the lab compares: each published value beside the
    lab's, each finding's verdict."""

    reference: Reference
    values: list[ValueRow] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.{digits}g}"
    return html.escape(str(v))


def _p(v: float) -> str:
    if math.isnan(v):
        return "-"
    return "< 0.001" if v < 0.001 else f"{v:.3f}"


def _table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def build_report(directory: Path, out: Path | None = None) -> Report:
    """Analyse the campaign in `directory` and write its HTML report (default
    DIR/report.html). Raises StoreError when there is no results database."""
    store, results = Results.open(directory)
    with store:
        c = results.campaign()
        if c is None:
            raise no_campaign(directory)
        rows = results.trials()
        run_state = results.run_state()
        per_second = results.per_second_throughput()
        cores = profile_cores(c.spec_yaml, rows)
        ids = [r.trial_id for r in rows if r.kept]  # only kept trials enter statistics
        analyses = [analyze(rows, labelled_factors(c), name, per_second=per_second,
                            values=trial_values(results, name, ids, cores=cores))
                    for name in c.responses]
        steps = [asdict(s) for s in results.search_steps()]
        clients = client_table(results.client_summaries(), rows)
        decls = declared(c, results, rows)
        ref = read_reference(c.spec_yaml, "stored spec", design_factors(c), c.responses,
                             c.spec_digest)
        drawn = declared_figures(decls, analyses, results, rows, design_factors(c), cores,
                                 ref.values)
    varied = [f["name"] for f in c.factors if len(f["levels"]) > 1]
    until = until_verdicts(c.spec_yaml, c.spec_digest)
    # A finished `until: verdicts` campaign stopped by itself: what is still
    # inconclusive ran out of rounds or budget.
    rounds = rounds_of(rows)
    verdicts = judge(ref, analyses, rounds=rounds, sequential=until.sequential,
                     planned_rounds=until.planned, margin=until.margin,
                     spent=spent_of(rows, until.planned, run_state)
                     if until.sequential else "")
    repro = Reproduction(ref, compare_values(ref, analyses, varied), verdicts)
    figures = make_figures(drawn, steps)
    page = render(c, analyses, rows, figures, steps, repro, clients,
                  unsettled(rows, per_second))
    path = out or directory / REPORT_NAME
    path.write_text(page)
    return Report(path, figures, analyses[0], analyses, repro, c.spec_yaml, c.spec_digest,
                  rounds)


@dataclass(frozen=True)
class Until:
    """How a stored spec's rounds end: `sequential` when rounds are added until
    verdicts, with its maximum of rounds and its declared margin (design.detect)."""

    sequential: bool = False
    planned: int | None = None
    margin: float | None = None


def until_verdicts(spec_yaml: str, digest: str = "") -> Until:
    """How the stored spec's rounds end, at the scale the campaign ran (`digest`: its
    stored spec digest, which names the scale)."""
    from casslab.experiment.scales import stored_root
    from casslab.experiment.spec.designblock import fraction

    design = stored_root(spec_yaml, digest).get("design")
    if not isinstance(design, dict) or design.get("until") != "verdicts":
        return Until()
    trials = design.get("trials")
    top = trials.get("max") if isinstance(trials, dict) else None
    margin = fraction(design.get("detect"))
    return Until(True, top if isinstance(top, int) else None,
                 margin if 0 < margin < 1 else None)


@dataclass(frozen=True)
class Unsettled:
    """A kept trial whose recorded series never reached a steady state."""

    row: TrialRow
    klass: str
    source: str  # "stored" (the run's until-steady warm-up) or "report" (MSER-5 here)
    why: str = ""


def unsettled(rows: Sequence[TrialRow], per_second: dict[int, list[float]]
              ) -> list[Unsettled]:
    """Kept trials that never settled: the class the run stored (workload.warmup:
    until-steady), else MSER-5 on the recorded per-second throughput when it has enough
    samples to tell (casslab.analysis.steady)."""
    out = []
    for r in rows:
        if not r.kept:
            continue
        if r.steady_class is not None:
            if r.steady_class != STEADY:
                out.append(Unsettled(r, r.steady_class, "stored"))
            continue
        series = per_second.get(r.trial_id) or []
        if len(series) < BATCH * MIN_BATCHES:
            continue
        s: Steadiness = steady_state(series)
        if not s.settled:
            out.append(Unsettled(r, s.klass, "report", s.why))
    return out


def search_groups(steps: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in steps:
        groups.setdefault(s["group_key"], []).append(dict(s))
    for rows in groups.values():
        best = max(range(len(rows)), key=lambda i: rows[i]["ops_s"])
        knee = find_knee([Step(r["level"], r["ops_s"], r["p99_ms"]) for r in rows[:best + 1]])
        for r in rows:
            r["knee_level"] = knee.level
    return groups


def make_figures(declared: list[Figure], steps: list[dict[str, Any]]) -> list[Figure]:
    """Every figure of the report, in order: the declared (or default) ones, then the
    peak search's."""
    figs = list(declared)
    if steps:
        groups = search_groups(steps)
        rows = [[k, r["step"], r["level"], r["ops_s"], r["p99_ms"], r["knee_level"]]
                for k, rs in groups.items() for r in rs]
        figs.append(Figure("search", "peak search", plots.search_plot(groups,
                                                                       steps[0]["vary"]),
                           "Each step's median throughput; star: peak, diamond: knee "
                           "(Kneedle).", to_csv(["group", "step", "level", "ops_s", "p99_ms",
                                                  "knee_level"], rows)))
    return figs


CSS = """
body{font-family:sans-serif;margin:24px auto;max-width:1200px;color:#222;line-height:1.4}
h1{margin-bottom:0} .sub{color:#666;margin-top:4px}
table{border-collapse:collapse;margin:10px 0 20px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right} th{background:#eee}
td:first-child,th:first-child{text-align:left}
figure{margin:18px 0;border:1px solid #ddd;padding:10px;background:#fff}
figure img{max-width:100%} figcaption{font-size:13px;color:#555}
.note{background:#f6f6e8;border-left:4px solid #cc9;padding:8px 12px;font-size:14px}
table.design td{text-align:left;vertical-align:top}
nav#toc ol.figs{list-style:lower-alpha;font-size:13px}
pre{background:#f4f4f4;padding:10px;font-size:12px;overflow:auto}
table.findings td:nth-child(3),table.findings td:nth-child(8),table.reference td:nth-child(7)
{text-align:left}
"""


def _coverage(d: Any) -> str:
    if math.isnan(d.ci_coverage):
        return "-"
    mark = f" <b title='{html.escape(d.ci_warning)}'>!</b>" if d.ci_warning else ""
    return f"{d.ci_coverage:.1%}{mark}"


def _short_cells(a: Analysis) -> str:
    """The warning for cells with too few trials for a 95 % CI of the median."""
    short = [cs for cs in a.cells if cs.stats.ci_warning]
    if not short:
        return ""
    cells = "; ".join(f"{cs.label or cs.key} (n = {cs.stats.n}: {cs.stats.ci_coverage:.1%})"
                      for cs in short)
    return (f"<p class='note'>! Too few trials for a 95 % CI of the median in {len(short)} "
            f"of {len(a.cells)} cells: {html.escape(cells)}. Their [min, max] is shown with "
            f"the coverage it has; 95 % needs n &gt;= {min_n_for_median(0.95)}.</p>")


def _within(bms: list[BatchMeans]) -> str:
    """Median over a cell's trials of the batch-means SE and of the naive SE."""
    se = [b.se for b in bms if not math.isnan(b.se)]
    if not se:
        return "-"
    naive = sorted(b.naive_se for b in bms if not math.isnan(b.se))
    return f"{_fmt(sorted(se)[len(se) // 2])} / {_fmt(naive[len(naive) // 2])}"


def _terms(terms: list[Term]) -> list[list[str]]:
    return [[html.escape(t.name), _fmt(t.df), _fmt(t.ss), _fmt(t.f), _p(t.p),
             _fmt(t.partial_eta2)] for t in terms]


def render_blocks(a: Analysis) -> str:
    """An interleaved design's analysis within rounds: the RCB ANOVA and Friedman over
    the cells, and every pair of cells' paired change."""
    b = a.blocks
    if b is None:
        return ""
    labels = {cs.key: cs.label or cs.key for cs in a.cells}
    tests = [[t.test, str(t.k), str(len(b.rounds)), _fmt(t.statistic),
              ", ".join(_fmt(float(d)) for d in t.df), _p(t.p),
              f"{t.effect_name} = {_fmt(t.effect)}"] for t in (b.rcb, b.friedman)
             if not math.isnan(t.statistic)]
    pairs = []
    for pe in b.pairs:
        est, lo, hi = pe.pct
        pairs.append([html.escape(labels.get(pe.low_cell, pe.low_cell)),
                      html.escape(labels.get(pe.high_cell, pe.high_cell)), str(pe.n),
                      f"{_signed(est, 1)} % [{_signed(lo, 1)}, {_signed(hi, 1)}]", _p(pe.p)])
    return ("<h3>Within rounds (interleaved design)</h3><p class='note'>Each round ran one "
            "kept trial of every cell back to back, so a drift hits a round's cells alike; "
            f"here the {len(b.rounds)} complete rounds are blocks. Randomized complete "
            "block ANOVA on log values (cells as treatment, rounds as blocks, no "
            "interaction) and Friedman's rank test (3 or more cells). Pairs: the mean "
            "per-round change of b against a, (exp(mean log(b / a)) - 1) x 100, with its "
            "95 % Student-t CI and paired t p (fixed number of rounds, not corrected for "
            "the number of pairs; the findings' verdicts are).</p>"
            + (_table(["test", "cells", "rounds", "statistic", "df", "p", "effect size"],
                      tests) if tests else "")
            + _table(["cell a", "cell b", "rounds", "change b / a [95 % CI]", "p"], pairs))


def render_factorial(fa: Factorial) -> str:
    """The factorial ANOVA: terms with interactions, assumption checks, the rank-based
    table, and each factor's effect within each level of the others."""
    head = ["term", "df", "sum of squares", "F", "p", "partial eta^2"]
    parts = ["<h3>Factors (factorial ANOVA)</h3>",
             f"<p class='note'>Model: response ~ {html.escape(' * '.join(fa.factors))} (every "
             f"interaction), type II sums of squares, n = {fa.n}. Read: "
             f"<b>{html.escape(fa.method)}</b>.</p>",
             _table(head, _terms(fa.terms)),
             "<h4>Assumption checks</h4>",
             _table(["assumption", "test", "statistic", "p", "holds (p > 0.05)"],
                    [[c.assumption, c.test, _fmt(c.statistic), _p(c.p),
                      "yes" if c.ok else "<b>no</b>"] for c in fa.checks]),
             "<h4>Rank-transform ANOVA (same model on the ranks)</h4>",
             _table(head, _terms(fa.rank_terms))]
    if fa.simple:
        parts.append("<h4>Effect of each factor within each level of the others</h4>")
        parts.append(_table(["factor", "within", "n", "ANOVA F", "p", "eta^2",
                             "Kruskal-Wallis p", "epsilon^2"],
                            [[html.escape(e.factor), html.escape(e.within), str(e.n),
                              _fmt(e.anova_f), _p(e.anova_p), _fmt(e.eta2), _p(e.kruskal_p),
                              _fmt(e.epsilon2)] for e in fa.simple]))
    return "\n".join(parts)


def render(c: Campaign, analyses: list[Analysis], rows: list[TrialRow],
           figures: list[Figure], steps: list[dict[str, Any]],
           repro: Reproduction | None = None,
           clients: Sequence[CellClients] = (),
           never_settled: Sequence[Unsettled] = ()) -> str:
    """The page, in a paper's order: design; results per response with its figures;
    the figures over time and by percentile; the reproduction (references, verdicts);
    appendices (trials that did not finish, versions and machine, spec)."""
    head = (f"<!doctype html><html><head><meta charset='utf-8'><title>casslab report: "
            f"{html.escape(c.name)}</title><style>{CSS}</style></head><body>"
            f"<h1>casslab campaign: {html.escape(c.name)}</h1>"
            f"<p class='sub'>generated {time.strftime('%Y-%m-%d %H:%M:%S')} · casslab "
            f"{html.escape(c.casslab_version)} · host {html.escape(c.host)} · spec "
            f"digest {c.spec_digest}</p>")
    factors = labelled_factors(c)
    label = labeller(factors)
    parts: list[str] = [render_design(factors, rows),
                        render_drift(analyses, (repro or Reproduction(Reference())).verdicts),
                        render_unsettled(never_settled, label)]
    old = sum(1 for r in rows if r.kept and r.pct_source == V1_MEAN_MAX)
    if old:
        parts.append(f"<p class='note'>{old} kept trials were written by schema 1: their "
                     "p50 and mean are ops-weighted means over operation types and their "
                     "p95/p99/p99.9 the worst type's, not percentiles of all operations "
                     "(there are no histograms to recompute them).</p>")
    placed: set[str] = set()
    cut_at_steady = any(r.kept and r.steady_class is not None for r in rows)
    for i, a in enumerate(analyses):
        title = (f"Results {i + 1} of {len(analyses)}: {html.escape(a.title)}"
                 if len(analyses) > 1 else f"Results: {html.escape(a.title)}")
        parts.append(f"<h2 id='response-{i + 1}'>{title}</h2>")
        section = render_response(a, cut_at_steady=cut_at_steady)
        # as in a paper: what the response is, its figures, then the tables behind them
        mine = [f for f in figures if f.response == a.response and f.id not in placed]
        parts += section[:2] + [render_figure(f) for f in mine] + section[2:]
        placed |= {f.id for f in mine}
    if steps:
        parts.append("<h2 id='search'>Peak search</h2>")
        srows = []
        for key, rs in search_groups(steps).items():
            peak = max(rs, key=lambda r: r["ops_s"])
            srows.append([html.escape(key), html.escape(rs[0]["vary"]), str(len(rs)),
                          _fmt(peak["level"]), _fmt(peak["ops_s"]), _fmt(rs[0]["knee_level"]),
                          html.escape(rs[-1]["stopped_by"] or "")])
        parts.append(_table(["cells", "varied", "steps", "peak level", "peak ops/s",
                             "knee level", "stopped by"], srows))
        parts += [render_figure(f) for f in figures if f.id == "search"]
        placed.add("search")
    rest = [f for f in figures if f.id not in placed]
    if rest:
        parts.append("<h2 id='figures'>Over time and by percentile</h2>")
        parts += [render_figure(f) for f in rest]
    if clients:
        parts.append(render_clients(clients, rows, label))
    parts.append(render_reproduction(repro or Reproduction(Reference()), analyses, label))
    bad = [r for r in rows if r.status in ("failed", "interrupted")]
    if bad:
        parts.append("<h2 id='unfinished'>Appendix: trials that did not finish</h2>")
        parts.append(_table(["seq", "cell", "trial", "status", "error"],
                            [[str(r.seq), html.escape(cell_label(r.cell_params, label)),
                              str(r.trial_no), r.status, html.escape(r.error or "")]
                             for r in bad]))
    parts.append(render_versions(c))
    parts.append("<h2 id='spec'>Appendix: spec</h2><pre>" + html.escape(c.spec_yaml) +
                 "</pre>")
    body = "\n".join(parts)
    body, toc = with_toc(body)
    return "\n".join([head, toc, body, "</body></html>"])


def render_drift(analyses: Sequence[Analysis], verdicts: Sequence[Verdict]) -> str:
    """Each response's drift against run order, and a warning where it is larger than
    the smallest effect a finding on that response looks for."""
    rows, warnings = [], []
    for a in analyses:
        d = a.drift
        if d is None:
            continue
        rows.append([html.escape(a.title), str(d.n), _signed(d.pct_per_trial, 2) +
                     f" [{_signed(d.pct_low, 2)}, {_signed(d.pct_high, 2)}]",
                     _signed(d.total_pct, 1), _p(d.trend.p),
                     "<b>yes</b>" if d.significant else "no"])
        w = drift_warning(d, smallest_effect_pct(verdicts, a.response), a.title,
                          a.blocks is not None)
        if w:
            warnings.append(f"<p class='note'><b>! Drift.</b> {html.escape(w)}.</p>")
    if not rows:
        return ""
    text = ("<p>Each kept trial's value relative to its cell's mean, (y - cell mean) / "
            "cell mean, against run order. % per trial: least-squares slope on the trial's "
            "position among the kept trials, with its 95 % CI (Student t); over the "
            "campaign: that slope x (kept trials - 1). Mann-Kendall: a distribution-free "
            "test of a monotone trend (two-sided, continuity-corrected). An interleaved "
            "design (design.order: interleaved) decides findings within rounds, where a "
            "drift cancels.</p>")
    return ("<h2 id='drift'>Drift across the campaign</h2>" + text +
            _table(["response", "kept trials", "% per trial [95 % CI]", "% over the campaign",
                    "Mann-Kendall p", "trend (p <= 0.05)"], rows) + "".join(warnings))


def _signed(v: float, digits: int) -> str:
    return "-" if math.isnan(v) else f"{v:+.{digits}f}"


def render_unsettled(never: Sequence[Unsettled], label: Labeller) -> str:
    """Kept trials that never reached a steady state (marked, still counted)."""
    if not never:
        return ""
    stored = sum(1 for u in never if u.source == "stored")
    text = (f"<p class='note'><b>! {len(never)} kept trial{'s' if len(never) != 1 else ''} "
            "never settled</b>: their per-second throughput (and p50) had no steady state "
            "in the recorded window, so their values mix warm-up and steady state. They "
            "stay in the statistics (dropping them would bias the cells that warm up "
            f"slowest). Class: {stored} from the run's until-steady warm-up, the rest by "
            "MSER-5 on the recorded per-second throughput (White 1997; Franklin & White "
            "2008).</p>")
    return ("<h2 id='unsettled'>Trials that never settled</h2>" + text +
            _table(["seq", "cell", "trial", "class", "from", "why"],
                   [[str(u.row.seq), html.escape(cell_label(u.row.cell_params, label)),
                     str(u.row.trial_no), html.escape(u.klass), u.source,
                     html.escape(u.why)] for u in never]))


def render_clients(cells: Sequence[CellClients], rows: list[TrialRow],
                   label: Labeller) -> str:
    """The load clients of trials run by several: one row per cell and client."""
    params = {r.cell: r.cell_params for r in rows}
    trows = []
    for cc in cells:
        for i, st in enumerate(cc.clients):
            flag = (f"<b>likely saturated</b> (lagged in {st.lagged} of {st.trials})"
                    if st.saturated else (f"lagged in {st.lagged} of {st.trials}"
                                          if st.lagged else ""))
            trows.append([html.escape(cell_label(params.get(cc.cell, {}), label))
                          if i == 0 else "", f"client {st.client}", str(st.trials),
                          _fmt(st.ops_s), _fmt(st.p50_ms), _fmt(st.p99_ms),
                          _fmt(st.p999_ms), _fmt(st.errors),
                          f"{cc.spread:.2f}" if i == 0 else "", flag])
    caption = (
        "<p>Each trial's load came from several casslab-load clients, started together "
        "with the same options, each doing its share of the operations; the results above "
        "are their merge (counts summed, percentiles of the clients' histograms added by "
        "absolute time). Here each client's own figures: the median over the cell's kept "
        "trials of the client's throughput, p50/p99/p99.9 latency (the client's own, from "
        "its own histogram in that trial; never averaged) and errors. Spread: the fastest "
        "client's median throughput over the slowest's. A client lagged in a trial when "
        f"its throughput was below {SLOW_SHARE:.0%} of that trial's median client; it is "
        "flagged <b>likely saturated</b> (or farther from the nodes) when it lagged in "
        "more than half of the cell's trials.</p>")
    return ("<h2 id='clients'>Load clients</h2>" + caption +
            _table(["cell", "client", "trials", "ops/s", "p50 (ms)", "p99 (ms)",
                    "p99.9 (ms)", "errors", "spread (max/min ops/s)", "flag"], trows))


def render_design(factors: list[dict[str, Any]], rows: list[TrialRow]) -> str:
    """The design: each factor's levels by their labels (and in full where a label
    shortens them), and how many trials ran."""
    frows = []
    for f in factors:
        levels = []
        for v, lab in zip(f["levels"], f["labels"], strict=True):
            full = scalar_label(v)
            levels.append(html.escape(lab) + (f" <small>= {html.escape(full)}</small>"
                                              if full != lab else ""))
        desc = str(f.get("label") or "")
        frows.append([html.escape(f["name"]), html.escape(desc if desc != f["name"] else ""),
                      "<br>".join(levels)])
    cells = len({r.cell for r in rows})
    done = sum(1 for r in rows if r.status == "done")
    text = (f"<p>{cells} cells, {len(rows)} trials planned, {done} finished (warm-ups "
            "included).</p>")
    reruns = sum(r.guard_reruns for r in rows)
    disturbed = sum(1 for r in rows if r.disturbed)
    if reruns or disturbed:
        text += (f"<p class='note'>Outside noise (design.guard): {reruns} rerun"
                 f"{'s' if reruns != 1 else ''} of trials disturbed by CPU use outside the "
                 f"lab; {disturbed} trial{'s' if disturbed != 1 else ''} still over the "
                 "limit when the reruns ran out (kept, flagged).</p>")
    table = (_table(["factor", "description", "levels (label = full level)"], frows,
                    "design") if frows else "<p>No factors: one cell.</p>")
    return "<h2 id='design'>Design</h2>" + text + table


def _at(levels: dict[str, Any], pooled: tuple[str, ...] = (),
        label: Labeller = lambda _n, v: scalar_label(v)) -> str:
    cell = ", ".join(f"{k}={label(k, v)}" for k, v in levels.items()) or "all cells"
    return html.escape(cell) + (f" <small>(pooled over {html.escape(', '.join(pooled))})"
                                "</small>" if pooled else "")


def _lab_value(row: ValueRow) -> str:
    d = row.lab
    if d.n == 0:
        return "no kept trials"
    mark = f" <b title='{html.escape(d.ci_warning)}'>!</b>" if d.ci_warning else ""
    return (f"{_fmt(d.median)} [{_fmt(d.ci_low)} - {_fmt(d.ci_high)}] <small>(n = {d.n}, "
            f"{_coverage_text(d.ci_coverage)}){mark}</small>")


def _coverage_text(cov: float) -> str:
    return "CI coverage -" if math.isnan(cov) else f"CI coverage {cov:.1%}"


def _paper_value(row: ValueRow, unit: str) -> str:
    rv = row.ref
    shown = f"{_fmt(rv.paper_value)} {html.escape(rv.unit)}"
    if rv.unit != unit and rv.value != rv.paper_value:
        shown += f" <small>(= {_fmt(rv.value)} {html.escape(unit)})</small>"
    return shown


def render_reproduction(repro: Reproduction, analyses: list[Analysis],
                        label: Labeller = lambda _n, v: scalar_label(v)) -> str:
    """The study's numbers beside the lab's, and each finding's verdict; `label` prints
    a factor's level (experiment.labels)."""
    ref = repro.reference
    head = "<h2 id='reproduction'>Reproduction</h2>"
    if ref.empty:
        return head + ("<p class='note'>No reference values declared for this campaign "
                       "(spec `reference`).</p>" + _absent(ref))
    units = {a.response: a.unit for a in analyses}
    study = f"Study: <b>{html.escape(ref.study)}</b>. " if ref.study else ""
    parts = [head, f"<p class='note'>{study}Lab value: median of the kept "
             "trials of the matching cells, with its 95 % CI from order statistics (as in "
             "the cells tables; '!' when there are too few trials for 95 %). Ratio: lab / "
             "paper, the paper's value converted to the lab's unit. Findings: each effect "
             "of `to` against `from` (a change in %, from the log-ratio; a slope; or, for "
             "a finding with `scale: difference`, to - from in the response's unit, "
             "declared `detect` as its bound) with "
             "its interval and that interval's coverage, simultaneous over the findings "
             "(Bonferroni); interleaved rounds give paired per-round log-ratios, and "
             "rounds added until decisive an anytime-valid confidence sequence. "
             "<b>holds</b>: the interval lies within the paper's size (ratio or slope +- "
             "tolerance, the size band of a higher or lower ending at no effect; for "
             "`expect: no difference` with a tolerance, within +- it: an "
             "equivalence test) or, with no size, excludes 0 the expected way (for no "
             "difference without a tolerance: holds never, any difference the interval "
             "shows fails it); <b>direction holds, "
             "size differs</b>: the expected side of 0, outside the paper's size; <b>does "
             "not hold</b>: the other side, or outside the size and not the expected way; "
             "<b>smaller than this lab can detect</b>: the whole interval within +- z (with "
             "a size, the band too: the size looked for is below what the lab resolves), z "
             "fixed before the data where the design allows: with `design.until: "
             "verdicts` and `design.detect: D` the declared margin D (for ratios; "
             "'declared'), else the effect the design detects with 90 % power at the "
             "measured noise, with its planned maximum of rounds when rounds are added "
             "until verdicts, with the trials run otherwise ('measured'); rounds added "
             "until verdicts use the running intersection of the sequence's intervals, "
             "which never widens, so a decided verdict stays decided; "
             "<b>inconclusive</b>: anything else (when the rounds or the budget ran "
             "out, the label says which, the half-width of the interval within which an "
             "estimate could not be told from no effect, whether the paper's size lies "
             "above or below the interval, and the rounds that would decide it if the "
             "estimate and the per-round noise stayed as measured). Each verdict is "
             "implied by its interval covering the true effect, so the error rate is the "
             "intervals'.</p>"]
    if repro.values:
        parts.append("<h3>Reference values</h3>")
        parts.append(_table(
            ["cell / level", "response", "lab value [95 % CI]", "paper value", "source",
             "ratio lab / paper", "note"],
            [[_at(r.ref.at, r.pooled, label), html.escape(r.ref.response) + " <small>(" +
              html.escape(units.get(r.ref.response, "")) + ")</small>", _lab_value(r),
              _paper_value(r, units.get(r.ref.response, "")), html.escape(r.ref.source),
              _fmt(r.ratio), html.escape(r.ref.note)] for r in repro.values],
            "reference"))
    if repro.verdicts:
        parts.append("<h3>Findings</h3>")
        parts.append(_table(
            ["finding", "verdict", "method (interval, family)", "effect [interval] (coverage)", "p",
             "p (Bonferroni)", "n (from / to)", "why"],
            [[html.escape(v.finding.claim) + _finding_detail(v, label),
              _verdict(v.verdict, v.label), html.escape(v.test), _effect(v, units), _p(v.p),
              _p(v.p_adj), f"{v.fit.n} (line)" if v.fit else (
                  f"{v.n_low} rounds" if v.effect.kind in ("paired", "sequential")
                  else f"{v.n_low} / {v.n_high}"),
              html.escape(v.why)] for v in repro.verdicts], "findings"))
    parts.append(_absent(ref))
    return "\n".join(parts)


def _effect(v: Verdict, units: dict[str, str]) -> str:
    """The effect with its interval and coverage (a change in %, or a slope beside the
    paper's), and the ratio of medians, cell by cell."""
    if v.fit is None:
        # the paper's size on the effect's own scale: a change in % (log-ratio) or a
        # slope (a slope read as a log-ratio printed 2.0 as "639 %")
        paper = ("" if math.isnan(v.paper) else
                 f"; paper {_fmt(100 * math.expm1(v.paper))} %"
                 if v.effect.scale == LOG_RATIO else
                 f"; paper {size_text(v.paper, v.effect.scale)}")
        medians = ("median to - from (mean over matched cells)"
                   f" = {_fmt(v.cell_difference)} {html.escape(v.effect.unit)}"
                   if v.effect.scale == DIFFERENCE else
                   f"median to / from (geometric mean over matched cells) = {_fmt(v.ratio)}")
        return f"{html.escape(v.interval())}{paper}<br><small>{medians}</small>"
    f, fit = v.finding, v.fit
    unit = html.escape(f"{units.get(f.response, '')} per unit of {f.factor}")
    return (f"lab slope = {_fmt(fit.slope)} [{_fmt(fit.low)} - {_fmt(fit.high)}] "
            f"<small>({_coverage_text(fit.coverage)})</small>; paper = {_fmt(f.slope)} "
            f"&plusmn; {_fmt(f.tolerance)} <small>({unit})</small>")


def _finding_detail(v: Verdict, label: Labeller) -> str:
    f = v.finding
    where = "; ".join(f"{k} in {', '.join(label(k, x) for x in lv)}"
                      for k, lv in f.where.items())
    expected = (f"ratio {f.ratio:g}" if f.expect == "ratio" else
                f"slope {f.slope:g} +- {f.tolerance:g}" if f.expect == "slope" else
                f"alternation, higher at {f.higher_at} levels" if f.higher_at else
                f"{f.expect} (change per unit of {f.factor})" if f.pattern else
                f"{f.expect}, as a difference (to - from)" if f.difference else f.expect)
    text = (f"{f.response}: {f.factor} {label(f.factor, f.low)} -> "
            f"{label(f.factor, f.high)}, expected {expected}"
            + (f", where {where}" if where else "") + (f"; {f.source}" if f.source else ""))
    return f"<br><small>{html.escape(text)}</small>"


def _verdict(verdict: str, label: str = "") -> str:
    colour = {HOLDS: "#1a7f37", FAILS: "#b3261e", SIZE_DIFFERS: "#9a5b00",
              UNDETECTABLE: "#1f5fa8"}.get(verdict, "#8a6d00")
    return f"<b class='verdict' style='color:{colour}'>{html.escape(label or verdict)}</b>"


def _absent(ref: Reference) -> str:
    if not ref.absent:
        return ""
    return (f"<p class='note'>Not compared ({len(ref.absent)}): entries about levels this "
            f"campaign did not run: {html.escape('; '.join(ref.absent))}.</p>")


def render_figure(fig: Figure) -> str:
    """A figure: its image, caption, what it left out, and its data as a CSV link."""
    left = (f"<p class='note'>Not drawn: {html.escape(fig.left_out)}.</p>" if fig.left_out
            else "")
    link = (f" <a download='{html.escape(fig.id)}.csv' href='data:text/csv;base64,"
            f"{base64.b64encode(fig.csv.encode()).decode()}'>data (CSV)</a>" if fig.csv
            else "")
    return (f"<figure id='fig-{html.escape(fig.id)}'><img alt='{html.escape(fig.title)}' "
            f"src='data:image/png;base64,{fig.png_b64}'><figcaption>{left}"
            f"<b>{html.escape(fig.title)}</b>. {html.escape(fig.caption)}{link}"
            "</figcaption></figure>")


def render_versions(c: Campaign) -> str:
    """What ran the campaign, and what drew this report."""
    import matplotlib

    rows = [["casslab (campaign)", html.escape(c.casslab_version)],
            ["machine (campaign)", html.escape(c.host)],
            ["campaign created", time.strftime("%Y-%m-%d %H:%M:%S",
                                               time.localtime(c.created_at))],
            ["spec digest", html.escape(c.spec_digest)],
            ["report drawn on", html.escape(f"{platform.node()}: {platform.platform()}, "
                                            f"{os.cpu_count()} CPUs")],
            ["Python / matplotlib", html.escape(f"{platform.python_version()} / "
                                                f"{matplotlib.__version__}")]]
    return "<h2 id='versions'>Appendix: versions and machine</h2>" + _table(["what", "value"], rows)


_HEADING_OR_FIGURE = re.compile(
    r"<h2(?: id='([^']+)')?>(.*?)</h2>|<figure id='([^']+)'><img alt='([^']*)'")


def with_toc(body: str) -> tuple[str, str]:
    """`body` with an id on every <h2> and the table of contents: each section, and
    under it each of its figures (by title)."""
    sections: list[tuple[str, str, list[tuple[str, str]]]] = []

    def named(m: re.Match[str]) -> str:
        if m.group(3):  # a figure: listed under the section it sits in
            if not sections:
                sections.append(("", "", []))
            sections[-1][2].append((m.group(3), m.group(4)))
            return m.group(0)
        ident = m.group(1) or f"section-{len(sections) + 1}"
        sections.append((ident, re.sub(r"<[^>]+>", "", m.group(2)), []))
        return f"<h2 id='{ident}'>{m.group(2)}</h2>"

    body = _HEADING_OR_FIGURE.sub(named, body)
    items = []
    for ident, text, figs in sections:
        sub = ("<ol class='figs'>" + "".join(f"<li><a href='#{f}'>{t}</a></li>"
                                             for f, t in figs) + "</ol>") if figs else ""
        items.append(f"<li><a href='#{ident}'>{text}</a>{sub}</li>" if ident else sub)
    return body, f"<nav id='toc'><h2>Contents</h2><ol>{''.join(items)}</ol></nav>"


def render_response(a: Analysis, *, cut_at_steady: bool = False) -> list[str]:
    """One response's sections: what it is, cells, factors, scaling. cut_at_steady: the
    campaign's trials were cut at their steady start (workload.warmup: until-steady)."""
    k = a.counts
    parts = [f"<p class='note'>Response: <b>{html.escape(a.title)}</b>. Trials: {k['planned']} "
             f"planned, {k['kept']} kept, {k['warmup']} warm-up (dropped), {k['failed']} "
             f"failed, {k['pending']} not run" + (
                 f", {k['no_value']} finished without a value for this response (left out)"
                 if k.get("no_value") else "") + ". Outlier rule: a trial more than "
             f"{OUTLIER_SD:g} sample sd from its cell's mean is flagged (drawn as a dot), not "
             "removed. CI of the median: between two order statistics, its exact coverage "
             "(binomial, any continuous distribution) printed beside it; a cell with too few "
             "trials for 95 % is marked '!'. CI of the mean: Student t. Within a trial, the "
             "per-second throughput's SE is by batch means (per-second samples are "
             "autocorrelated). " + ("Factors: multi-way ANOVA with interactions. " if
                                    a.factorial else "Factor tests pool the other factors "
                                    "(" + html.escape(a.factorial_note) + "). ") +
             "Pairwise p values are Holm-corrected per test family.</p>",
             "<p class='note'>How it is computed: "
             f"{html.escape(explain(a.response, cut_at_steady))}</p>",
             "<h3>Cells</h3>"]
    within = any(cs.within for cs in a.cells)
    parts.append(_table(
        ["cell", "n", "median", "q1", "q3", "mean", "sd",
         "95 % CI (median, order statistics)", "coverage", "95 % CI (mean, t)", "min", "max",
         "outliers"] + (["per-second ops/s SE in a trial (batch means / naive)"]
                        if within else []),
        [[html.escape(cs.label or cs.key) + (f" <small>(ran at {html.escape(cs.as_run)})</small>"
                                 if cs.as_run else ""),
          str(cs.stats.n), _fmt(cs.stats.median), _fmt(cs.stats.q1),
          _fmt(cs.stats.q3), _fmt(cs.stats.mean), _fmt(cs.stats.sd),
          f"{_fmt(cs.stats.ci_low)} - {_fmt(cs.stats.ci_high)}", _coverage(cs.stats),
          f"{_fmt(cs.stats.mean_ci_low)} - {_fmt(cs.stats.mean_ci_high)}",
          _fmt(cs.stats.minimum), _fmt(cs.stats.maximum), str(cs.stats.outliers)]
         + ([_within(cs.within)] if within else []) for cs in a.cells]))
    parts.append(f"<p>Values in {html.escape(a.unit)}.</p>")
    parts.append(_short_cells(a))
    if a.blocks is not None:
        parts.append(render_blocks(a))
    if a.factorial:
        parts.append(render_factorial(a.factorial))
        if a.blocks is not None and not a.factorial.independent:
            parts.append("<p class='note'>The factorial ANOVA pools the rounds; with the "
                         "drift it found, read the within-round analysis above.</p>")
    if a.factors:
        parts.append("<h3>Factors</h3>" if not a.factorial else
                     "<h4>One-way tests per factor (other factors pooled; read the "
                     "factorial table above)</h4>")
        frows = []
        for f in a.factors:
            for t in (f.anova, f.kruskal):
                frows.append([html.escape(f.name), t.test, str(t.k), str(t.n), _fmt(t.statistic),
                              ", ".join(_fmt(float(d)) for d in t.df), _p(t.p),
                              f"{t.effect_name} = {_fmt(t.effect)}"])
        parts.append(_table(["factor", "test", "levels", "n", "statistic", "df", "p",
                             "effect size"], frows))
        prows = [[html.escape(f.name), html.escape(p.a), html.escape(p.b), p.test,
                  _fmt(p.statistic), _p(p.p), _p(p.p_holm), f"{p.effect_name} = "
                  f"{_fmt(p.effect)}"] for f in a.factors for p in f.pairs]
        if prows:
            parts.append("<h4>Pairwise comparisons of levels</h4>")
            parts.append(_table(["factor", "level a", "level b", "test", "statistic", "p",
                                 "p (Holm)", "effect size"], prows))
    if a.curves:
        parts.append("<h3>Scaling</h3>")
        parts.append(_table(["factor", "other factors", "level", "n", "median", "relative to "
                             "first level"],
                            [[html.escape(cv.factor), html.escape(cv.by or "-"), _fmt(p.level),
                              str(p.n), _fmt(p.median), _fmt(p.relative)]
                             for cv in a.curves for p in cv.points]))
    return parts
