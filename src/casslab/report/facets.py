"""Small multiples: one panel per facet level, groups (colour levels, and the levels of
varied factors a figure does not name) side by side or as lines in each panel.

Pure drawing: each function takes rows already grouped and returns base64 PNG. Nothing
is dropped silently: past MAX_PANELS panels or MAX_GROUPS groups the figure draws the
first ones and says in its title how many were left out (the CSV has them all).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from casslab.analysis.stats import moving_average
from casslab.report.plots import draw_box, to_png

MAX_PANELS = 24
MAX_GROUPS = 20
PALETTE = [to_hex(plt.get_cmap("tab20")(i)) for i in (0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 1, 3, 5, 7,
                                              9, 11, 13, 15, 17, 19)]


@dataclass
class Panel:
    """One facet level: per group, per x level, the values (box, bar, line)."""

    title: str
    groups: dict[str, dict[str, list[float]]] = field(default_factory=dict)


@dataclass
class Line:
    """One line of a time series / percentile / order panel: (x, y, band low, band high)."""

    label: str
    xs: list[float]
    ys: list[float]
    lo: list[float] = field(default_factory=list)
    hi: list[float] = field(default_factory=list)
    hollow: list[bool] = field(default_factory=list)  # order: warm-ups


@dataclass(frozen=True)
class RefMark:
    """A study's published value drawn on a figure's axes: in panel `panel` (a facet
    label, "" for none), at x level `x`, beside group `group` (None: centred on the x
    level, for a value pooled over the groups)."""

    panel: str
    x: str
    group: str | None
    value: float


PAPER: dict[str, Any] = {"marker": "D", "color": "black", "markerfacecolor": "white",
                         "markersize": 7, "markeredgewidth": 1.6, "linestyle": "", "zorder": 5}


def _paper(ax: Any, marks: Sequence[RefMark], panel: str, where: Any) -> None:
    """The panel's reference marks; `where(mark)` is its x position (None: not here)."""
    for m in marks:
        x = where(m) if m.panel == panel else None
        if x is not None:
            ax.plot([x], [m.value], **PAPER)


@dataclass
class Limits:
    """What a figure left out: panels and groups beyond the limits."""

    panels: int = 0
    groups: int = 0

    def note(self) -> str:
        parts = ([f"{self.panels} panels"] if self.panels else []) + (
            [f"{self.groups} groups"] if self.groups else [])
        return (f"{' and '.join(parts)} left out of the drawing: their numbers are in the "
                "CSV") if parts else ""


def _grid(n: int, width: float = 4.6, height: float = 3.3) -> tuple[Figure, list[Any]]:
    cols = min(3, max(1, n))
    rows = math.ceil(max(1, n) / cols)
    if n <= 1:  # one panel: a readable size on the page, not a third of it
        width, height = max(width, 7.0), max(height, 4.6)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows + 0.6),
                             squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:max(1, n)]


def _clip(panels: Sequence[Any], groups: Sequence[str]) -> tuple[list[Any], list[str], Limits]:
    return (list(panels[:MAX_PANELS]), list(groups[:MAX_GROUPS]),
            Limits(max(0, len(panels) - MAX_PANELS), max(0, len(groups) - MAX_GROUPS)))


def _finish(fig: Figure, axes: list[Any], title: str, limits: Limits,
            labels: Sequence[str], paper: bool = False) -> str:
    note = limits.note()
    fig.suptitle(title + (f"\n({note})" if note else ""), fontsize=11)
    fig.tight_layout()
    handles = []
    for i, lab in enumerate(labels):
        handles.append(Line2D([], [], color=PALETTE[i % len(PALETTE)], marker="s",
                                  linestyle="", markersize=8, label=lab))
    if not (len(labels) > 1 or (labels and labels[0])):
        handles = []  # one unnamed group: nothing to tell apart
    if paper:  # the study's published values, in a style no group uses
        handles.append(Line2D([], [], **{**PAPER, "label": "paper"}))
    if handles:
        # one legend for all panels, under them: per-panel legends hide the data
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(4, len(handles)), fontsize=8)
    return to_png(fig)


def _groups_of(panels: Sequence[Panel]) -> list[str]:
    return list(dict.fromkeys(g for p in panels for g in p.groups))


def _x_levels(panels: Sequence[Panel]) -> list[str]:
    return list(dict.fromkeys(x for p in panels for g in p.groups.values() for x in g))


def _slot(xs: Sequence[str], groups: Sequence[str], width: float) -> Any:
    """Where a reference mark sits among side-by-side boxes or bars."""
    def where(m: RefMark) -> float | None:
        if m.x not in xs:
            return None
        i = xs.index(m.x)
        if m.group is None or m.group not in groups:
            return float(i)
        return i - 0.4 + width * (groups.index(m.group) + 0.5)
    return where


def box_panels(panels: Sequence[Panel], *, title: str, xlabel: str, ylabel: str,
               marks: Sequence[RefMark] = ()) -> str:
    """Boxes per x level, side by side per group, one panel per facet level; `marks`: a
    study's values on the same axes."""
    shown, groups, limits = _clip(panels, _groups_of(panels))
    xs = _x_levels(shown)
    fig, axes = _grid(len(shown), width=max(4.6, 0.5 * len(xs) * max(1, len(groups)) ** 0.7))
    width = 0.8 / max(1, len(groups))
    for ax, p in zip(axes, shown, strict=False):
        for j, g in enumerate(groups):
            data = [p.groups.get(g, {}).get(x, []) for x in xs]
            pos = [i - 0.4 + width * (j + 0.5) for i in range(len(xs))]
            draw_box(ax, data, pos, width * 0.9, PALETTE[j % len(PALETTE)])
        _paper(ax, marks, p.title, _slot(xs, groups, width))
        _axes(ax, p.title, xlabel, ylabel, xs)
    return _finish(fig, axes, title, limits, groups, _drawn(marks, shown))


def bar_panels(panels: Sequence[Panel], *, title: str, xlabel: str, ylabel: str,
               interval: Any, marks: Sequence[RefMark] = ()) -> str:
    """Bars of the mean per x level and group with error bars from `interval(values)`
    -> (low, high)."""
    shown, groups, limits = _clip(panels, _groups_of(panels))
    xs = _x_levels(shown)
    fig, axes = _grid(len(shown), width=max(4.6, 0.5 * len(xs) * max(1, len(groups)) ** 0.7))
    width = 0.8 / max(1, len(groups))
    for ax, p in zip(axes, shown, strict=False):
        for j, g in enumerate(groups):
            for i, x in enumerate(xs):
                vals = p.groups.get(g, {}).get(x, [])
                if not vals:
                    continue
                mean = sum(vals) / len(vals)
                lo, hi = interval(vals)
                err = [[mean - lo if math.isfinite(lo) else 0.0],
                       [hi - mean if math.isfinite(hi) else 0.0]]
                ax.bar(i - 0.4 + width * (j + 0.5), mean, width * 0.9, yerr=err, capsize=3,
                       color=PALETTE[j % len(PALETTE)], edgecolor="black", linewidth=0.5)
        _paper(ax, marks, p.title, _slot(xs, groups, width))
        _axes(ax, p.title, xlabel, ylabel, xs)
    return _finish(fig, axes, title, limits, groups, _drawn(marks, shown))


def line_panels(panels: Sequence[Panel], *, title: str, xlabel: str, ylabel: str,
                xvalue: Any, marks: Sequence[RefMark] = ()) -> str:
    """Median per x level (quartile bars), one line per group; `xvalue(level)` places a
    level on the numeric axis."""
    shown, groups, limits = _clip(panels, _groups_of(panels))
    fig, axes = _grid(len(shown))
    for ax, p in zip(axes, shown, strict=False):
        for j, g in enumerate(groups):
            pts = sorted((xvalue(x), sorted(v)) for x, v in p.groups.get(g, {}).items() if v)
            if not pts:
                continue
            med = [_q(v, 0.5) for _, v in pts]
            err = [[m - _q(v, 0.25) for m, (_, v) in zip(med, pts, strict=True)],
                   [_q(v, 0.75) - m for m, (_, v) in zip(med, pts, strict=True)]]
            ax.errorbar([x for x, _ in pts], med, yerr=err, marker="o", capsize=3,
                        color=PALETTE[j % len(PALETTE)], linestyle="-" if j < 10 else "--")
        _paper(ax, marks, p.title, lambda m: xvalue(m.x))
        levels = sorted({xvalue(x) for g in p.groups.values() for x in g})
        if len(levels) <= 12:  # the design's levels, not matplotlib's in-between ticks
            ax.set_xticks(levels, [f"{v:g}" for v in levels])
        _axes(ax, p.title, xlabel, ylabel, None)
    return _finish(fig, axes, title, limits, groups, _drawn(marks, shown))


def _drawn(marks: Sequence[RefMark], shown: Sequence[Panel]) -> bool:
    return any(m.panel == p.title for m in marks for p in shown)


def line_series_panels(panels: Sequence[tuple[str, list[Line]]], *, title: str, xlabel: str,
                       ylabel: str, window: int = 1, marks: Sequence[tuple[float, str]] = (),
                       logx: bool = False, xticks: Sequence[tuple[float, str]] = (),
                       integer_x: bool = False) -> str:
    """Lines (with a band when they have one) per panel: time series, percentile plots,
    trial order. `marks`: labelled vertical lines (stage boundaries); `integer_x`: ticks
    on whole numbers only (trial numbers)."""
    labels = list(dict.fromkeys(ln.label for _, lines in panels for ln in lines))
    shown, groups, limits = _clip(panels, labels)
    fig, axes = _grid(len(shown), width=5.2)
    for ax, (ptitle, lines) in zip(axes, shown, strict=False):
        for ln in lines:
            if ln.label not in groups:
                continue
            color = PALETTE[groups.index(ln.label) % len(PALETTE)]
            ys: Sequence[float] = moving_average(ln.ys, window) if window > 1 else ln.ys
            if ln.lo:
                lo = moving_average(ln.lo, window) if window > 1 else ln.lo
                hi = moving_average(ln.hi, window) if window > 1 else ln.hi
                ax.fill_between(ln.xs, lo, hi, color=color, alpha=0.2, linewidth=0)
            if ln.hollow:
                _order_points(ax, ln, color)
            else:
                ax.plot(ln.xs, ys, color=color, linewidth=1.3,
                        marker="o" if len(ln.xs) <= 20 else None, markersize=3)
        for t, name in marks:
            if t > 0:
                ax.axvline(t, color="black", linewidth=0.8, linestyle="--")
            ax.text(t, 0.98, f" {name}", transform=ax.get_xaxis_transform(), fontsize=7,
                    va="top", ha="left", bbox={"facecolor": "white", "alpha": 0.7,
                                               "linewidth": 0, "pad": 1})
        if marks:  # the first stage starts at 0: its label inside the axes
            ax.set_xlim(left=0)
        if logx:
            ax.set_xscale("log")
        if xticks:
            ax.set_xticks([t for t, _ in xticks], [lab for _, lab in xticks])
        if integer_x:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        _axes(ax, ptitle, xlabel, ylabel, None)
        if not lines:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    return _finish(fig, axes, title, limits, groups)


def _order_points(ax: Any, ln: Line, color: Any) -> None:
    # Join only trials run back to back: in a randomized order a cell's trials are far
    # apart, and lines across the others' trials read as a trend that is not there.
    for i in range(len(ln.xs) - 1):
        if ln.xs[i + 1] - ln.xs[i] == 1:
            ax.plot(ln.xs[i:i + 2], ln.ys[i:i + 2], color=color, linewidth=0.6, alpha=0.5)
    for x, y, hollow in zip(ln.xs, ln.ys, ln.hollow, strict=True):
        ax.plot([x], [y], "o", markersize=4, color=color,
                markerfacecolor="white" if hollow else color)


def _axes(ax: Any, title: str, xlabel: str, ylabel: str, xs: list[str] | None) -> None:
    if xs is not None:
        ax.set_xticks(range(len(xs)), xs)
        ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(axis="y", alpha=0.3)


def _q(sorted_vals: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values."""
    pos = q * (len(sorted_vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)
