"""Matplotlib figures of a campaign, each returned as base64 PNG for an <img> tag.

Every figure has a title, axis labels with units, and a legend when it has more
than one series.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from casslab.analysis.campaign import Analysis, FactorStats, level_label
from casslab.analysis.stats import moving_average, outlier_mask

COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]
MAX_PANELS = 12


def to_png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _box(ax: Any, data: list[list[float]], positions: list[float], width: float,
         color: str) -> None:
    """Seed 000's boxes: whiskers at min/max of the non-outliers, outliers (> 3 sd from
    the mean) as dots, mean as a dotted line."""
    for vals, pos in zip(data, positions, strict=True):
        if not vals:
            continue
        mask = outlier_mask(vals)
        inl = [v for v, o in zip(vals, mask, strict=True) if not o]
        out = [v for v, o in zip(vals, mask, strict=True) if o]
        ax.boxplot([inl], positions=[pos], widths=width, whis=(0, 100), patch_artist=True,
                   showfliers=False, boxprops={"facecolor": color, "alpha": 0.55},
                   medianprops={"color": "black", "linewidth": 1.5},
                   showmeans=True, meanline=True,
                   meanprops={"color": "black", "linestyle": ":", "linewidth": 1.2})
        if out:
            ax.plot([pos] * len(out), out, "o", color=color, markeredgecolor="black")


def factor_boxplot(a: Analysis, f: FactorStats, hue: FactorStats | None) -> str:
    """The response per level of `f`, boxes grouped by the levels of `hue`."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(f.levels) * (len(hue.levels)
                                                                       if hue else 1) ** 0.6),
                                    4.2))
    if hue is None:
        data = [f.groups.get(lv, []) for lv in f.levels]
        for i, vals in enumerate(data):
            _box(ax, [vals], [i], 0.5, COLORS[0])
        ax.set_xticks(range(len(f.levels)), f.levels)
    else:
        k = len(hue.levels)
        width = 0.8 / k
        for j, hl in enumerate(hue.levels):
            data = [[v for c in a.cells for v in c.values
                     if level_label(c.params.get(f.name)) == lv
                     and level_label(c.params.get(hue.name)) == hl] for lv in f.levels]
            pos = [i - 0.4 + width * (j + 0.5) for i in range(len(f.levels))]
            _box(ax, data, pos, width * 0.9, COLORS[j % len(COLORS)])
            ax.plot([], [], "s", color=COLORS[j % len(COLORS)], alpha=0.6, label=f"{hue.name}="
                    f"{hl}")
        ax.set_xticks(range(len(f.levels)), f.levels)
        ax.legend(title=hue.name, fontsize=8, loc="best")
    ax.set_xlim(-0.6, len(f.levels) - 0.4)
    ax.set_xlabel(f.name)
    ax.set_ylabel(a.title)
    by = f", grouped by {hue.name}" if hue else ""
    ax.set_title(f"{a.title.split(' (')[0]} by {f.name}{by}\n(box: quartiles; whiskers: "
                 "min/max; dots: > 3 sd; dotted: mean)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return to_png(fig)


def curve_plot(a: Analysis, factor: str) -> str:
    """Seed 002's lines: the response's median (IQR bars) against a numeric factor."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    lines = [c for c in a.curves if c.factor == factor]
    for i, c in enumerate(lines[:10]):
        xs = [p.level for p in c.points]
        ys = [p.median for p in c.points]
        err = [[p.median - p.q1 for p in c.points], [p.q3 - p.median for p in c.points]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=COLORS[i % len(COLORS)],
                    linestyle="-" if i % 2 == 0 else "--", label=c.by or "all trials")
    ax.set_xlabel(factor)
    ax.set_ylabel(a.title)
    ax.set_title(f"median {a.title.split(' (')[0]} against {factor} (bars: quartiles)",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return to_png(fig)


def _panels(n: int) -> tuple[Figure, list[Any]]:
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 2.9 * rows), squeeze=False,
                             sharey=True)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def node_series_plot(series: dict[str, dict[str, list[tuple[float, float]]]], *, title: str,
                     ylabel: str) -> str:
    """One panel per cell, one line per node: e.g. CPU % or disk kB/s over a trial."""
    cells = list(series)[:MAX_PANELS]
    fig, axes = _panels(max(1, len(cells)))
    for ax, cell in zip(axes, cells, strict=False):
        for i, (node, pts) in enumerate(sorted(series[cell].items())):
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[i % len(COLORS)],
                    label=node, linewidth=1.2, marker="o" if len(pts) <= 20 else None,
                    markersize=3)
        ax.set_title(cell, fontsize=8)
        ax.set_xlabel("time in trial (s)", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(alpha=0.3)
    if not cells:
        axes[0].text(0.5, 0.5, "no samples", ha="center", va="center")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    # One legend for all panels, above them: per-panel legends hide the lines.
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                   ncol=min(6, len(labels)), fontsize=8)
    return to_png(fig)


def cell_lines_plot(series: dict[str, list[tuple[float, float]]], *, title: str, ylabel: str,
                    window: int = 1) -> str:
    """One line per cell over trial time (throughput moving mean, disk space)."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, (cell, pts) in enumerate(list(series.items())[:MAX_PANELS]):
        ys: Sequence[float] = [p[1] for p in pts]
        if window > 1:
            ys = moving_average(ys, window)
        ax.plot([p[0] for p in pts], ys, color=COLORS[i % len(COLORS)],
                linestyle="-" if i < len(COLORS) else "--", label=cell, linewidth=1.3,
                marker="o" if len(pts) <= 20 else None, markersize=3)
    ax.set_xlabel("time in trial (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if series:  # outside the axes: many cells must not hide the lines
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="cell")
    else:
        ax.text(0.5, 0.5, "no samples", ha="center", va="center", transform=ax.transAxes)
    return to_png(fig)


def search_plot(steps: dict[str, list[dict[str, Any]]], vary: str) -> str:
    """Peak search: throughput per step, peak and knee marked."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, (key, rows) in enumerate(steps.items()):
        xs = [r["level"] for r in rows]
        ys = [r["ops_s"] for r in rows]
        color = COLORS[i % len(COLORS)]
        ax.plot(xs, ys, marker="o", color=color, label=key)
        peak = max(rows, key=lambda r: r["ops_s"])
        ax.plot([peak["level"]], [peak["ops_s"]], "*", markersize=14, color=color,
                markeredgecolor="black")
        if rows[0].get("knee_level") is not None:
            knee = next((r for r in rows if r["level"] == rows[0]["knee_level"]), None)
            if knee:
                ax.plot([knee["level"]], [knee["ops_s"]], "D", markersize=8, color=color,
                        markeredgecolor="black")
    ax.plot([], [], "*", color="gray", markersize=12, label="peak")
    ax.plot([], [], "D", color="gray", label="knee")
    ax.set_xlabel(vary + (" (ops/s)" if vary == "rate" else ""))
    ax.set_ylabel("throughput (ops/s)")
    ax.set_title(f"peak search: throughput as {vary} is raised", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return to_png(fig)
