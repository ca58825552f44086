"""The report's declared figures (casslab.experiment.figures), drawn from the results
repository and the analyses: each with its image, a caption and its data as CSV.

A varied factor a figure does not name splits its groups (never pooled). Every group and
panel is in the CSV; the drawing says how many it left out (facets.MAX_*).
A box, line or bar figure of a response against x draws the study's published values of
that response at each x level (spec `reference.values` whose `at` names x) on the same
axes, as markers labelled "paper".
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hdrh.histogram import HdrHistogram

from casslab.analysis.campaign import Analysis, level_label
from casslab.analysis.responses import merge_histograms, trial_values
from casslab.analysis.stats import describe
from casslab.experiment.figures import (
    SERIES_UNITS,
    DesignFactor,
    FigureDecl,
    default_figures,
    read_figures,
)
from casslab.experiment.labels import read_labels, scalar_label
from casslab.experiment.reference import RefValue
from casslab.experiment.scales import stored_doc
from casslab.report import facets
from casslab.report.facets import Line, Panel, RefMark
from casslab.store.records import Campaign, Results, TrialRow, full_length

PERCENTILES = (0.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999)


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    png_b64: str
    caption: str
    csv: str = ""  # the figure's numbers, header first; "" for none
    left_out: str = ""  # what the drawing left out (its numbers are in the CSV)
    response: str = ""  # the response it shows ("" for time series, percentiles): its section


def labelled_factors(c: Campaign) -> list[dict[str, Any]]:
    """The campaign's factors, each with `labels`: its levels' labels from the stored
    spec at the scale it ran (`labels:`), else the automatic ones."""
    labels = read_labels(stored_doc(c.spec_yaml, c.spec_digest), c.factors)
    return [{**f, "labels": list(labels[f["name"]])} for f in c.factors]


def design_factors(c: Campaign) -> list[DesignFactor]:
    return [DesignFactor(f["name"], tuple(f["levels"]), tuple(f["labels"]))
            for f in labelled_factors(c)]


def staged(results: Results, rows: Sequence[TrialRow]) -> bool:
    """Whether the campaign's load ran in named stages (more than one per trial)."""
    first = next((r for r in rows if r.kept), None)
    if first is None:
        return False
    return len({iv.stage for iv in results.intervals(first.trial_id, recorded_only=False)}) > 1


def declared(c: Campaign, results: Results, rows: Sequence[TrialRow]) -> tuple[FigureDecl, ...]:
    """The stored spec's `report.figures` at the scale it ran, else the design's
    defaults."""
    factors = design_factors(c)
    decls = read_figures(stored_doc(c.spec_yaml, c.spec_digest), factors, c.responses)
    return decls or default_figures(factors, c.responses, staged=staged(results, rows))


def to_csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


class Grouping:
    """Where a cell goes in a figure: its panel (facet level), x level and group (colour
    level, then the levels of the varied factors the figure does not name)."""

    def __init__(self, factors: Sequence[DesignFactor], x: str, colour: str, facet: str):
        self.x, self.colour, self.facet = x, colour, facet
        self.rest = [f.name for f in factors if f.varied and f.name not in (x, colour, facet)]
        self.factors = factors

    def label(self, name: str, value: Any) -> str:
        """The level's label (experiment.labels), as axes, legends and panels print it."""
        f = next((f for f in self.factors if f.name == name), None)
        return f.label(value) if f is not None else level_label(value)

    def panel(self, params: Mapping[str, Any]) -> str:
        return f"{self.facet}={self.label(self.facet, params.get(self.facet))}" if (
            self.facet) else ""

    def group(self, params: Mapping[str, Any]) -> str:
        names = ([self.colour] if self.colour else []) + self.rest
        return ", ".join(f"{n}={self.label(n, params.get(n))}" for n in names)

    def order(self, labels: Sequence[str], name: str) -> list[str]:
        """Panel labels in the order of the factor's levels (the spec's)."""
        f = next((f for f in self.factors if f.name == name), None)
        if f is None:
            return list(labels)
        rank = {f"{name}={f.label(v)}": i for i, v in enumerate(f.levels)}
        return sorted(labels, key=lambda s: rank.get(s, len(rank)))

    def describe(self) -> str:
        parts = [f"x: {self.x}"] if self.x else []
        parts += [f"colour: {self.colour}"] if self.colour else []
        parts += [f"one panel per {self.facet}"] if self.facet else []
        parts += [f"also split by {', '.join(self.rest)} (not pooled)"] if self.rest else []
        return "; ".join(parts)


def _panels(a: Analysis, g: Grouping) -> tuple[list[Panel], list[list[Any]]]:
    panels: dict[str, Panel] = {}
    rows: list[list[Any]] = []
    for cs in a.cells:
        p = panels.setdefault(g.panel(cs.params), Panel(g.panel(cs.params)))
        xl = g.label(g.x, cs.params.get(g.x))
        p.groups.setdefault(g.group(cs.params), {}).setdefault(xl, []).extend(cs.values)
        full = scalar_label(cs.params.get(g.x))  # the level itself, beside its label
        rows += [[g.panel(cs.params), xl, full, g.group(cs.params), cs.key, tid, v]
                 for tid, v in zip(cs.trial_ids, cs.values, strict=True)]
    ordered = [panels[k] for k in g.order(list(panels), g.facet)]
    return ordered, rows


def _level_value(level: str) -> float:
    return float(level.strip().rstrip("%"))


def _mean_ci(values: Sequence[float]) -> tuple[float, float]:
    d = describe(list(values))
    return d.mean_ci_low, d.mean_ci_high


def reference_marks(d: FigureDecl, g: Grouping, refs: Sequence[RefValue]) -> list[RefMark]:
    """The published values of the figure's response at its x levels: in the panel of
    their facet level (a value that does not name the facet has no panel: not drawn)
    and beside their group when they name its factors, else centred on the x level."""
    out = []
    names = ([g.colour] if g.colour else []) + g.rest
    for rv in refs:
        if rv.response != d.response or d.x not in rv.at:
            continue
        if g.facet and g.facet not in rv.at:
            continue
        group = g.group(rv.at) if all(n in rv.at for n in names) and names else None
        out.append(RefMark(g.panel(rv.at), g.label(d.x, rv.at[d.x]), group, rv.value))
    return out


def paper_value(marks: Sequence[RefMark], panel: str, x: str, group: str) -> float | str:
    """The study's value at a figure's point (its group's, else one pooled over the
    groups), in the response's unit; "" where the study gives none."""
    here = [m for m in marks if m.panel == panel and m.x == x]
    own = [m for m in here if m.group == group] or [m for m in here if m.group is None]
    return own[0].value if own else ""


def factor_figure(d: FigureDecl, a: Analysis, factors: Sequence[DesignFactor],
                  refs: Sequence[RefValue] = ()) -> Figure:
    """A box, line or bar figure of one response, with the study's values (`refs`) that
    fall on its axes."""
    g = Grouping(factors, d.x, d.colour, d.facet)
    panels, rows = _panels(a, g)
    marks = reference_marks(d, g, refs)
    name = a.title
    header = ["panel", d.x, f"{d.x} (level)", "group", "cell", "trial_id", a.response,
              "paper"]
    rows = [[*r, paper_value(marks, r[0], r[1], r[3])] for r in rows]
    limits = facets.Limits(max(0, len(panels) - facets.MAX_PANELS),
                           max(0, len(facets._groups_of(panels)) - facets.MAX_GROUPS))
    if d.kind == "box":
        title = d.title or f"{name} by {d.x}"
        png = facets.box_panels(panels, title=title, xlabel=d.x, ylabel=name, marks=marks)
        what = ("Kept trials (warm-ups and failed trials excluded); box: quartiles; "
                "whiskers: min/max of the non-outliers; dots: > 3 sd from the mean; dotted: "
                "mean")
    elif d.kind == "bar":
        title = d.title or f"mean {name} by {d.x}"
        png = facets.bar_panels(panels, title=title, xlabel=d.x, ylabel=name,
                                interval=_mean_ci, marks=marks)
        what = ("Bars: mean of the kept trials; error bars: 95 % confidence interval of the "
                "mean (Student t, 95 % coverage when trial values are near normal; none with "
                "one trial)")
    else:
        title = d.title or f"median {name} against {d.x}"
        pct = any(str(lv).strip().endswith("%") for f in factors if f.name == d.x
                  for lv in f.levels)
        at = {f.label(v): v for f in factors if f.name == d.x for v in f.levels}

        def xvalue(label: str) -> float:  # a declared label stands for its level
            return _level_value(scalar_label(at.get(label, label)))
        png = facets.line_panels(panels, title=title, ylabel=name, xvalue=xvalue,
                                 xlabel=f"{d.x} (% of the measured peak)" if pct else d.x,
                                 marks=marks)
        what = "Median of the kept trials per level, bars: quartiles; one line per group"
    paper = (f" White diamonds (\"paper\"): the study's published values, {len(marks)}, "
             "converted to this unit (the Reproduction section has their sources)."
             if marks else "")
    return Figure(d.id, title, png, f"{what}. {g.describe()}.{paper}", to_csv(header, rows),
                  limits.note())


def order_figure(d: FigureDecl, a: Analysis, results: Results, rows: Sequence[TrialRow],
                 cores: Any, factors: Sequence[DesignFactor] = ()) -> Figure:
    """Every finished trial's response in run order, one line per cell (named by its
    levels' labels), warm-ups hollow."""
    g = Grouping(factors, "", "", "")
    done = [r for r in rows if r.status == "done" and r.runtime_s is not None]
    vals = trial_values(results, a.response, [r.trial_id for r in done], cores=cores)
    lines: dict[str, Line] = {}
    out = []
    for r in done:
        v = vals.get(r.trial_id, math.nan)
        out.append([r.seq, r.cell, g.group(r.cell_params) or r.cell, r.trial_no,
                    int(r.warmup), v])
        if math.isnan(v):
            continue
        ln = lines.setdefault(r.cell, Line(g.group(r.cell_params) or r.cell, [], []))
        ln.xs.append(r.seq)
        ln.ys.append(v)
        ln.hollow.append(r.warmup)
    title = d.title or f"{a.title} of every trial in run order (hollow: warm-up)"
    # cells in the design's order, so each keeps the colour it has in the other figures
    idx = {r.cell: r.cell_idx for r in done}
    ordered = [lines[c] for c in sorted(lines, key=lambda c: idx[c])]
    png = facets.line_series_panels([("", ordered)], title=title,
                                    xlabel="trial (run order)", ylabel=a.title,
                                    integer_x=True)
    limits = facets.Limits(0, max(0, len(lines) - facets.MAX_GROUPS))
    return Figure(d.id, title, png, "Every finished trial, warm-ups included (hollow "
                  "markers: warm-ups, left out of the statistics); one colour per cell.",
                  to_csv(["seq", "cell", "group", "trial_no", "warmup", a.response], out),
                  limits.note())


def _trial_series(results: Results, metric: str, tid: int) -> list[tuple[float, float]]:
    """One trial's (t_s, value) of a series metric; node values summed over nodes."""
    if metric in ("throughput", "latency_p50", "latency_p99"):
        ivs = results.intervals(tid, recorded_only=False)
        cols = [(iv.ops_s if metric == "throughput" else iv.p50_ms if
                 metric == "latency_p50" else iv.p99_ms) for iv in ivs]
        return full_length([((iv.t_s, float(v)), iv.interval_s)
                            for iv, v in zip(ivs, cols, strict=True) if v is not None])
    if metric == "host_cpu_pct":
        return [(h.t_s, (h.cpu_user_pct or 0.0) + (h.cpu_sys_pct or 0.0))
                for h in results.host_metrics(tid)]
    by_t: dict[float, float] = {}
    for m in results.node_metrics(tid):
        v = {"node_cpu_pct": (m.cpu_user_pct or 0.0) + (m.cpu_sys_pct or 0.0),
             "disk_read_kib_s": m.read_kb_s or 0.0, "disk_write_kib_s": m.write_kb_s or 0.0,
             "data_mib": m.data_mib or 0.0}[metric]
        by_t[m.t_s] = by_t.get(m.t_s, 0.0) + v
    return sorted(by_t.items())


def average_series(trials: Sequence[Sequence[tuple[float, float]]]) -> Line:
    """Mean over trials at each sample time (rounded to 0.1 s, the trials' shared clock),
    band: min and max over the trials that have that time."""
    at: dict[float, list[float]] = {}
    for pts in trials:
        for t, v in pts:
            at.setdefault(round(t, 1), []).append(v)
    ts = sorted(at)
    return Line("", ts, [sum(at[t]) / len(at[t]) for t in ts], [min(at[t]) for t in ts],
                [max(at[t]) for t in ts])


def stage_marks(results: Results, tid: int) -> list[tuple[float, str]]:
    """(start s, name) of each stage of a trial's load; none for an unstaged load."""
    marks: list[tuple[float, str]] = []
    prev: str | None = None
    for iv in results.intervals(tid, recorded_only=False):
        if not marks or iv.stage != prev:
            marks.append((max(0.0, iv.t_s - (iv.interval_s or 0.0)), iv.stage or ""))
        prev = iv.stage
    return marks if len(marks) > 1 else []


def series_figure(d: FigureDecl, results: Results, rows: Sequence[TrialRow],
                  factors: Sequence[DesignFactor]) -> Figure:
    g = Grouping(factors, "", d.colour, d.facet)
    by_cell: dict[str, list[TrialRow]] = {}
    for r in rows:
        if r.kept:
            by_cell.setdefault(r.cell, []).append(r)
    panels: dict[str, list[Line]] = {}
    out: list[list[Any]] = []
    for cell, rs in sorted(by_cell.items(), key=lambda kv: kv[1][0].cell_idx):
        ln = average_series([_trial_series(results, d.metric, r.trial_id) for r in rs])
        ln.label = g.group(rs[0].cell_params) or cell
        panels.setdefault(g.panel(rs[0].cell_params), []).append(ln)
        out += [[g.panel(rs[0].cell_params), ln.label, cell, len(rs), t, y, lo, hi]
                for t, y, lo, hi in zip(ln.xs, ln.ys, ln.lo, ln.hi, strict=True)]
    first = next((rs[0].trial_id for rs in by_cell.values()), None)
    marks = stage_marks(results, first) if first is not None else []
    unit = SERIES_UNITS[d.metric]
    title = d.title or f"{d.metric.replace('_', ' ')} over time, mean of each cell's trials"
    ordered = [(k, panels[k]) for k in g.order(list(panels), d.facet)]
    png = facets.line_series_panels(ordered or [("", [])], title=title,
                                    xlabel="time in trial (s)", ylabel=f"{d.metric} ({unit})",
                                    window=d.window, marks=marks)
    labels = {ln.label for _, lines in ordered for ln in lines}
    limits = facets.Limits(max(0, len(ordered) - facets.MAX_PANELS),
                           max(0, len(labels) - facets.MAX_GROUPS))
    smooth = f" Moving mean over {d.window} samples." if d.window > 1 else ""
    stages = (" Dashed vertical lines: stage boundaries, each stage labelled where it "
              "starts." if marks else "")
    return Figure(d.id, title, png, "Line: mean over the cell's kept trials at each sample "
                  f"time; band: min to max over those trials.{smooth}{stages} "
                  f"{g.describe() or 'one line per cell'}.",
                  to_csv(["panel", "group", "cell", "trials", "t_s", "mean", "min", "max"],
                         out), limits.note())


def cell_percentiles(results: Results, trials: Sequence[TrialRow]) -> tuple[list[tuple[
        float, float]], bool]:
    """(percentile, latency ms) of a cell's kept trials: from their merged ALL
    histograms when every trial has one (True), else the median over trials of the
    stored percentiles (False)."""
    hists = []
    for r in trials:
        row = next((s for s in results.op_summaries(r.trial_id) if s.op == "ALL"), None)
        if row is None or not row.latency_hist:
            break
        try:
            hists.append(HdrHistogram.decode(row.latency_hist))
        except Exception:  # any undecodable histogram: the stored percentiles, said so
            break
    if hists and len(hists) == len(trials):
        merged = merge_histograms(hists)
        return [(p, merged.get_value_at_percentile(p) / 1000.0) for p in PERCENTILES], True
    stored = {50.0: "p50_ms", 95.0: "p95_ms", 99.0: "p99_ms", 99.9: "p999_ms"}
    pts = []
    for p, col in stored.items():
        vals = sorted(v for r in trials if not math.isnan(v := r.response(col)))
        if vals:
            pts.append((p, vals[len(vals) // 2]))
    return pts, False


def _pct_x(p: float) -> float:
    """Where percentile p sits on the HdrHistogram plot's axis: 1 / (1 - p/100)."""
    return 1.0 / max(1e-6, 1.0 - p / 100.0)


def cdf_figure(d: FigureDecl, results: Results, rows: Sequence[TrialRow],
               factors: Sequence[DesignFactor]) -> Figure:
    g = Grouping(factors, "", "", d.facet)
    by_cell: dict[str, list[TrialRow]] = {}
    for r in rows:
        if r.kept:
            by_cell.setdefault(r.cell, []).append(r)
    panels: dict[str, list[Line]] = {}
    out: list[list[Any]] = []
    sources = set()
    for cell, rs in sorted(by_cell.items(), key=lambda kv: kv[1][0].cell_idx):
        pts, from_hist = cell_percentiles(results, rs)
        sources.add(from_hist)
        label = g.group(rs[0].cell_params) or cell
        panels.setdefault(g.panel(rs[0].cell_params), []).append(
            Line(label, [_pct_x(p) for p, _ in pts], [v for _, v in pts]))
        out += [[g.panel(rs[0].cell_params), cell, p, v,
                 "histogram" if from_hist else "stored percentiles"] for p, v in pts]
    title = d.title or "latency by percentile, each cell's kept trials"
    ticks = [(_pct_x(p), f"{p:g}%") for p in (0.0, 90.0, 99.0, 99.9, 99.99, 99.999)]
    ordered = [(k, panels[k]) for k in g.order(list(panels), d.facet)]
    png = facets.line_series_panels(ordered or [("", [])], title=title, xlabel="percentile",
                                    ylabel="latency (ms, from intended start)", logx=True,
                                    xticks=ticks)
    how = ("from the cell's trials' HdrHistograms merged (all operations)"
           if sources == {True} else
           "from the stored percentiles only (p50, p95, p99, p99.9; median over the "
           "cell's trials): these trials have no histograms" if sources == {False} else
           "from merged HdrHistograms where every trial of a cell has one, else from the "
           "stored percentiles (column `source` of the CSV)")
    labels = {ln.label for _, lines in ordered for ln in lines}
    limits = facets.Limits(max(0, len(ordered) - facets.MAX_PANELS),
                           max(0, len(labels) - facets.MAX_GROUPS))
    return Figure(d.id, title, png, f"Latency at each percentile, {how}. X axis: "
                  "1 / (1 - percentile), as HdrHistogram's plots.",
                  to_csv(["panel", "cell", "percentile", "latency_ms", "source"], out),
                  limits.note())


def declared_figures(decls: Sequence[FigureDecl], analyses: Sequence[Analysis],
                     results: Results, rows: Sequence[TrialRow],
                     factors: Sequence[DesignFactor], cores: Any,
                     refs: Sequence[RefValue] = ()) -> list[Figure]:
    """Every declared figure, in the declared order; `refs`: a study's values to draw
    where a figure shows their response against a factor they name."""
    by_response = {a.response: a for a in analyses}
    out: list[Figure] = []
    for d in decls:
        n = len(out)
        if d.kind in ("box", "line", "bar"):
            out.append(factor_figure(d, by_response[d.response], factors, refs))
        elif d.kind == "order":
            out.append(order_figure(d, by_response[d.response], results, rows, cores, factors))
        elif d.kind == "series":
            out.append(series_figure(d, results, rows, factors))
        else:
            out.append(cdf_figure(d, results, rows, factors))
        if d.response and len(out) > n:
            out[-1] = replace(out[-1], response=d.response)
    return out
