"""`report.figures` of an experiment spec: which figures the report draws.

The declarations are validated here, at the experiment layer, so a bad one fails when
the spec is read (one line naming the field and what is valid); casslab.report draws
them. Without declarations the report draws `default_figures` of the design.

Kinds:
  box     a response per level of `x`, boxes side by side per `colour` level, one panel
          per `facet` level (seed 000 Figs 13-16)
  line    a response's median (quartile bars) against a numeric or percentage factor
          `x`, one line per `colour` level, panels by `facet`
  bar     a response's mean per `x` level with 95 % t intervals, bars per `colour`
          level, panels by `facet` (resources: CPU % per operation type per runtime)
  series  a time series (`metric`) averaged over each cell's kept trials with a min-max
          band, stage boundaries marked; one line per `colour` level, panels by `facet`
  order   a response of every finished trial in run order, warm-ups marked
  cdf     the latency percentile distribution (HdrHistogram) of each cell, panels by
          `facet`

A varied factor that a figure does not name is never pooled: its levels split the lines
or boxes further (they are drawn per combination of the factors left over).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from casslab.core import specio
from casslab.core.specio import Path_
from casslab.experiment.labels import auto_labels, level_of

REPORT_KEYS = ("figures",)
FIGURE_KEYS = ("kind", "id", "title", "response", "x", "colour", "facet", "metric",
               "window")
KINDS = ("box", "line", "bar", "series", "order", "cdf")
# Time series a `series` figure can draw; units in the name or in SERIES_UNITS.
SERIES_METRICS = ("throughput", "latency_p50", "latency_p99", "node_cpu_pct",
                  "host_cpu_pct", "disk_read_kib_s", "disk_write_kib_s", "data_mib")
SERIES_UNITS = {"throughput": "ops/s", "latency_p50": "ms", "latency_p99": "ms",
                "node_cpu_pct": "% of one core, sum over nodes",
                "host_cpu_pct": "% of all cores", "disk_read_kib_s": "KiB/s, sum over nodes",
                "disk_write_kib_s": "KiB/s, sum over nodes",
                "data_mib": "MiB, sum over nodes"}
# Which keys each kind takes (beyond kind, id, title).
KIND_KEYS = {"box": ("response", "x", "colour", "facet"),
             "line": ("response", "x", "colour", "facet"),
             "bar": ("response", "x", "colour", "facet"),
             "series": ("metric", "colour", "facet", "window"),
             "order": ("response",),
             "cdf": ("facet",)}
MAX_FIGURES = 100
_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class FigureDecl:
    """One declared (or default) figure. `id` names it in the page and in a reference
    overlay; factor names are the campaign's; `response` one of its responses."""

    kind: str
    id: str
    title: str = ""
    response: str = ""
    x: str = ""
    colour: str = ""
    facet: str = ""
    metric: str = ""
    window: int = 1  # series: moving mean over this many samples (seed 003: 5)


@dataclass(frozen=True)
class DesignFactor:
    """What the figures need of a factor: its name, levels and their labels (what axes,
    legends and panel titles print; automatic ones when none are given)."""

    name: str
    levels: tuple[Any, ...]
    labels: tuple[str, ...] = ()

    def label(self, value: Any) -> str:
        """The level's label (`value` printed as a scalar when it is not a level)."""
        return level_of(self.levels, self.labels or auto_labels(self.levels), value)

    @property
    def varied(self) -> bool:
        return len(self.levels) > 1

    @property
    def numeric(self) -> bool:
        """Numbers, or percentages of a measured peak ("66%"): a line's x axis."""
        return all((isinstance(v, int | float) and not isinstance(v, bool)) or
                   (isinstance(v, str) and re.fullmatch(r"\d+(\.\d+)?%", v.strip()) is not None)
                   for v in self.levels)


def parse_figures(v: specio.V, raw: Any, factors: Sequence[DesignFactor],
                  responses: Sequence[str]) -> tuple[FigureDecl, ...]:
    """The `report` block's figures; () when none are declared (the report then draws
    the defaults). Raises the doc's error naming the field and what is valid."""
    report = v.mapping(raw, ("report",), REPORT_KEYS)
    items = report.get("figures")
    if items is None:
        return ()
    path: Path_ = ("report", "figures")
    if not isinstance(items, list) or not items or len(items) > MAX_FIGURES:
        raise v.doc.error(path, f"must be a list of 1-{MAX_FIGURES} figures, each a mapping "
                          f"with `kind` ({', '.join(KINDS)})")
    out: list[FigureDecl] = []
    for i, item in enumerate(items):
        decl = _figure(v, item, (*path, i), factors, responses, i)
        if any(d.id == decl.id for d in out):
            raise v.doc.error((*path, i, "id"), f"{decl.id!r} is used by another figure "
                              "(valid: a unique id per figure)")
        out.append(decl)
    return tuple(out)


def _figure(v: specio.V, item: Any, path: Path_, factors: Sequence[DesignFactor],
            responses: Sequence[str], index: int) -> FigureDecl:
    m = v.mapping(item, path, FIGURE_KEYS)
    kind = v.choice(m.get("kind"), (*path, "kind"), KINDS, "figure kind")
    for key in m:
        if key not in ("kind", "id", "title", *KIND_KEYS[kind]):
            raise v.doc.error((*path, key), f"{kind} figures take no {key!r} (valid: "
                              f"{', '.join(('id', 'title', *KIND_KEYS[kind]))})")
    fid = m.get("id", f"{kind}-{index + 1}")
    if not isinstance(fid, str) or not _ID.fullmatch(fid):
        raise v.doc.error((*path, "id"), f"{fid!r} is not a valid id (valid: lower-case "
                          "letters, digits, '-', '_', 1-64, starting with a letter or digit)")
    title = v.string(m["title"], (*path, "title")) if "title" in m else ""
    names = [f.name for f in factors]
    roles: dict[str, str] = {}
    for key in ("x", "colour", "facet"):
        if key in m:
            roles[key] = v.choice(m[key], (*path, key), names, "factor")
    if len(set(roles.values())) < len(roles):
        raise v.doc.error(path, f"x, colour and facet must name different factors (got "
                          f"{', '.join(f'{k}={n}' for k, n in roles.items())})")
    response = ""
    if "response" in KIND_KEYS[kind]:
        response = v.choice(m.get("response", responses[0]), (*path, "response"),
                            list(responses), "response (one of analysis.responses)")
    if kind in ("box", "line", "bar") and "x" not in roles:
        raise v.doc.error((*path, "x"), f"a {kind} figure needs `x` (valid: "
                          f"{', '.join(names) or 'no factors: declare factors first'})")
    if kind == "line":
        numeric = [f.name for f in factors if f.numeric]
        if roles["x"] not in numeric:
            raise v.doc.error((*path, "x"), f"{roles['x']!r} has levels that are not numbers "
                              f"or percentages (valid for a line: "
                              f"{', '.join(numeric) or 'none in this design'})")
    metric = ""
    if kind == "series":
        metric = v.choice(m.get("metric"), (*path, "metric"), SERIES_METRICS, "series metric")
    window = v.integer(m.get("window", 1), (*path, "window"), 1, 1000)
    return FigureDecl(kind, fid, title, response, roles.get("x", ""), roles.get("colour", ""),
                      roles.get("facet", ""), metric, window)


def read_figures(doc: specio.Doc, factors: Sequence[DesignFactor],
                 responses: Sequence[str]) -> tuple[FigureDecl, ...]:
    """The figures declared in spec `doc` (only its `report` block is read: the report
    reads the spec stored with a campaign, whose files may not be here; the caller
    applies the scale it ran at, casslab.experiment.scales.stored_doc)."""
    root = doc.root if isinstance(doc.root, dict) else {}
    return parse_figures(specio.V(doc), root.get("report"), factors, responses)


def _resource(response: str) -> bool:
    return not any(response == n or response.endswith("." + n) for n in
                   ("runtime_s", "ops_s", "ops", "errors")) and not response.endswith("_ms")


def default_figures(factors: Sequence[DesignFactor], responses: Sequence[str], *,
                    staged: bool = False) -> tuple[FigureDecl, ...]:
    """Figures chosen from the design: per response a box per varied factor (coloured by
    the next varied factor, faceted by the one after), a bar for a resource and a line per
    numeric factor; then the trial order, time series and latency percentiles."""
    varied = [f.name for f in factors if f.varied]
    out: list[FigureDecl] = []
    several = len(responses) > 1
    for r in responses:
        suffix = "-" + re.sub(r"[^a-z0-9_]+", "-", r.lower()) if several else ""
        for x in varied:
            rest = [n for n in varied if n != x]
            colour, facet = [*rest, "", ""][:2]
            out.append(FigureDecl("box", f"box-{x}{suffix}", response=r, x=x, colour=colour,
                                  facet=facet))
            if _resource(r) and x == varied[0]:
                out.append(FigureDecl("bar", f"bar-{x}{suffix}", response=r, x=x,
                                      colour=colour, facet=facet))
        for f in factors:
            if f.varied and f.numeric:
                others = [n for n in varied if n != f.name]
                out.append(FigureDecl("line", f"line-{f.name}{suffix}", response=r, x=f.name,
                                      colour=others[0] if others else "",
                                      facet=others[1] if len(others) > 1 else ""))
    out.append(FigureDecl("order", "order", response=responses[0]))
    window = 5 if staged else 1  # seed 003 smoothed its staged throughput over 5 periods
    out += [FigureDecl("series", "series-throughput", metric="throughput", window=window),
            FigureDecl("series", "series-latency", metric="latency_p99"),
            FigureDecl("series", "series-cpu", metric="node_cpu_pct"),
            FigureDecl("series", "series-space", metric="data_mib"),
            FigureDecl("cdf", "cdf")]
    return tuple(out)


def figures_schema() -> specio.JsonSchema:
    """`report` as JSON Schema (parse_figures stays the authority)."""
    item = specio.schema_object({
        "kind": specio.schema_enum(list(KINDS)), "id": {"type": "string"},
        "title": {"type": "string"}, "response": {"type": "string"},
        "x": {"type": "string"}, "colour": {"type": "string"}, "facet": {"type": "string"},
        "metric": specio.schema_enum(list(SERIES_METRICS)),
        "window": specio.schema_integer(1, 1000)}, required=("kind",))
    return specio.schema_object({"figures": {"type": "array", "minItems": 1,
                                             "items": item}})
