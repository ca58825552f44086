"""Matplotlib helpers and the peak search's figure, each returned as base64 PNG for an
<img> tag (the declared figures are drawn by casslab.report.facets).

Every figure has a title, axis labels with units, and a legend when it has more
than one series.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from casslab.analysis.stats import outlier_mask

COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def to_png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def draw_box(ax: Any, data: list[list[float]], positions: list[float], width: float,
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
