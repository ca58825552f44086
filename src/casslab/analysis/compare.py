"""Two sets of trials side by side (two results directories, or two cells of one), per
response: medians and means, Welch's t test, Hedges' g, Holm correction over the
responses; a difference is flagged only where the corrected p <= ALPHA (0.01: several
responses of the same trials are compared, and a lab run is cheap to repeat).

`compare` is pure; `load_side` is the one place that reads a results store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from casslab.analysis.campaign import TITLES, UNITS
from casslab.analysis.stats import holm, welch
from casslab.core.errors import UsageError
from casslab.store.db import Store
from casslab.store.records import Results

ALPHA = 0.01
# What a trial's summary holds, in the order a reader looks for it.
RESPONSES = ("ops_s", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "runtime_s")


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a label and each response's values, one per trial."""

    label: str
    values: dict[str, list[float]]


@dataclass(frozen=True)
class Row:
    response: str
    title: str
    unit: str
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    mean_a: float
    mean_b: float
    change_pct: float  # (median B - median A) / median A, in %
    welch_t: float
    p: float
    p_holm: float
    hedges_g: float  # (mean A - mean B) / pooled sd, small-sample corrected
    flagged: bool  # p_holm <= alpha


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    alpha: float
    rows: list[Row]

    def to_json(self) -> dict[str, Any]:
        def clean(v: Any) -> Any:
            return None if isinstance(v, float) and not math.isfinite(v) else v
        return {"a": self.a, "b": self.b, "alpha": self.alpha, "correction": "Holm",
                "test": "Welch t", "effect": "Hedges g",
                "rows": [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows]}


def _stat(xs: Sequence[float], fn: Any) -> float:
    return float(fn(np.asarray(xs, dtype=float))) if xs else math.nan


def compare(a: Side, b: Side, *, alpha: float = ALPHA) -> Comparison:
    """Per response present on both sides: Welch t, Hedges g, Holm-corrected p, flag."""
    names = [r for r in RESPONSES if a.values.get(r) and b.values.get(r)]
    tests = [welch(a.values[r], b.values[r]) for r in names]
    adjusted = holm([t[1] for t in tests])
    rows = []
    for r, (t, p, g), ph in zip(names, tests, adjusted, strict=True):
        xa, xb = a.values[r], b.values[r]
        ma, mb = _stat(xa, np.median), _stat(xb, np.median)
        rows.append(Row(r, TITLES.get(r, r), UNITS.get(r, ""), len(xa), len(xb), ma, mb,
                        _stat(xa, np.mean), _stat(xb, np.mean),
                        100.0 * (mb - ma) / ma if ma else math.nan, t, p, ph, g,
                        not math.isnan(ph) and ph <= alpha))
    return Comparison(a.label, b.label, alpha, rows)


def load_side(directory: Path, cell: str | None = None) -> Side:
    """Kept trials (done, not warm-up) of a results directory, or of one of its cells.

    Raises StoreError when there is no results database, UsageError for an unknown cell
    or a directory without kept trials.
    """
    with Store(directory, create=False) as store:
        rows = Results(store).kept_trials()
    if cell is not None:
        cells = list(dict.fromkeys(r.cell for r in rows))
        if cell not in cells:
            raise UsageError(f"cell '{cell}' is not in {directory}; its cells: "
                             f"{', '.join(cells) or 'none with kept trials'}")
        rows = [r for r in rows if r.cell == cell]
    if not rows:
        raise UsageError(f"{directory} has no finished trials to compare")
    values = {name: [v for r in rows if not math.isnan(v := r.response(name))]
              for name in RESPONSES}
    return Side(f"{directory}" + (f" [{cell}]" if cell is not None else ""), values)
