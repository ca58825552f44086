"""Throughput models: ops/s of a tenant's virtual datacentre as a function of its nodes.

Seed 001's equation 6: for a workload l and VM type j the throughput is piecewise linear
in the number of nodes n, one segment per interval between measured cluster sizes. Here
the breakpoints are the measured sizes themselves; below the smallest one the line runs
through the origin (0 nodes, 0 ops/s), above the largest one the last segment's slope
continues (never negative: a cluster that got slower when grown is assumed flat).

Models come from the spec (published numbers) or are fitted from a campaign's results
database (`casslab.store`): one breakpoint per measured cluster size, at the median
(or mean / max) of the trials' throughput.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from casslab.core.errors import UsageError
from casslab.plan.spec import PlanSpec, ResultsSource
from casslab.store.db import DB_NAME, StoreError
from casslab.store.records import Results


class ModelError(UsageError):
    """A throughput model cannot be built (no results, no data for a workload/VM type)."""


@dataclass(frozen=True)
class PiecewiseLinear:
    """ops/s at n nodes through measured (nodes, ops/s) points; see the module docstring."""

    points: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        if not self.points:
            raise ModelError("a throughput model needs at least one measured point")

    def ops_s(self, nodes: int) -> float:
        """Throughput in ops/s of a cluster of `nodes` nodes."""
        pts = [(0, 0.0), *self.points] if self.points[0][0] > 0 else list(self.points)
        if nodes <= pts[0][0]:
            return pts[0][1]
        for (n0, t0), (n1, t1) in itertools.pairwise(pts):
            if nodes <= n1:
                return t0 + (t1 - t0) * (nodes - n0) / (n1 - n0)
        (n0, t0), (n1, t1) = pts[-2], pts[-1]
        slope = max((t1 - t0) / (n1 - n0), 0.0)
        return t1 + slope * (nodes - n1)

    def min_nodes(self, target_ops_s: float, lo: int, hi: int) -> int | None:
        """Smallest n in [lo, hi] whose throughput is at least `target_ops_s` (or None)."""
        for n in range(max(lo, 1), hi + 1):
            if self.ops_s(n) >= target_ops_s - 1e-9:
                return n
        return None

    def best(self, hi: int) -> tuple[float, int]:
        """Highest throughput reachable with at most `hi` nodes, and at how many nodes."""
        best = max(range(1, max(hi, 1) + 1), key=lambda n: (self.ops_s(n), -n))
        return self.ops_s(best), best


Models = dict[tuple[str, str], PiecewiseLinear]


def build_models(spec: PlanSpec) -> Models:
    """The spec's throughput models: fitted from its results database (if any), then the
    models given in the spec, which override fitted ones. Raises ModelError."""
    models: Models = {}
    if spec.results is not None:
        models.update(fit_results(spec.results, spec))
    for key, pts in spec.throughput.items():
        models[key] = PiecewiseLinear(pts)
    for t in spec.tenants:
        if not any(w == t.workload for w, _ in models):
            have = sorted({w for w, _ in models})
            raise ModelError(f"{spec.source}:{t.line}: tenant {t.name}: no throughput model for "
                             f"workload {t.workload!r} (models exist for: "
                             f"{', '.join(have) or 'none'})")
    return models


def fit_points(rows: Iterable[Mapping[str, Any]], statistic: str = "median"
               ) -> dict[tuple[str, str], tuple[tuple[int, float], ...]]:
    """Breakpoints from measurements: rows with keys workload, vm_type, nodes, ops_s and
    optionally cell (the campaign cell the trial ran in).

    One point per (workload, VM type, nodes): the median (or mean, max) of ops_s; `peak`
    takes the median of each cell, then the best cell, as seed 001's maximum throughput
    over its thread sweep (a max over trials would pick the luckiest trial instead).
    """
    groups: dict[tuple[str, str], dict[int, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for r in rows:
        groups[(str(r["workload"]), str(r["vm_type"]))][int(r["nodes"])][
            str(r.get("cell", ""))].append(float(r["ops_s"]))

    def agg(cells: dict[str, list[float]]) -> float:
        if statistic == "peak":
            return max(float(statistics.median(v)) for v in cells.values())
        values = [x for v in cells.values() for x in v]
        if statistic == "mean":
            return statistics.fmean(values)
        return max(values) if statistic == "max" else float(statistics.median(values))

    return {k: tuple(sorted((n, agg(cells)) for n, cells in by_n.items()))
            for k, by_n in groups.items()}


def results_rows(src: ResultsSource) -> list[dict[str, Any]]:
    """Measured (workload, vm_type, nodes, ops_s) rows of a campaign, in campaign names:
    trials that are done, not warm-up, with an `ALL` summary. Levels that are not factors
    come from the campaign's spec (lab.nodes, lab.profile, workload.name)."""
    directory = src.path.parent if src.path.name == DB_NAME else src.path
    try:
        store, results = Results.open(directory)
        with store:
            camp = results.campaign()
            trials = results.kept_trials()
    except StoreError as exc:
        # A directory without a database is the user's; a corrupt database is a failure.
        kind = ModelError if isinstance(exc, UsageError) else StoreError
        raise kind(f"throughput_from.results: {exc}") from None
    defaults = _spec_defaults(camp.spec_yaml if camp else "")
    rows = []
    for t in trials:
        params = {**defaults, **t.cell_params, **t.params}
        rows.append({"workload": params.get(src.workload_factor, defaults["workload"]),
                     "vm_type": params.get(src.vm_factor, defaults["profile"]),
                     "nodes": params.get(src.nodes_factor, defaults["nodes"]),
                     "ops_s": t.ops_s,
                     "cell": json.dumps(t.cell_params, sort_keys=True, default=str)})
    return rows


def _spec_defaults(spec_yaml: str) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(spec_yaml) or {}
    except yaml.YAMLError:
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    lab = doc.get("lab")
    lab = lab if isinstance(lab, dict) else {}
    wl = doc.get("workload")
    wl = wl if isinstance(wl, dict) else {}
    return {"nodes": int(lab.get("nodes", 1)), "profile": str(lab.get("profile", "host")),
            "workload": str(wl.get("name", "?"))}


def fit_results(src: ResultsSource, spec: PlanSpec) -> Models:
    """Models for the spec's (workload, VM type) pairs from the campaign in `src`."""
    points = fit_points(results_rows(src), src.statistic)
    if not points:
        raise ModelError(f"throughput_from.results: {src.path} has no finished trials with "
                         "a throughput summary")
    models: Models = {}
    workloads = {t.workload for t in spec.tenants} | set(src.workloads)
    for w in sorted(workloads):
        cw = src.workloads.get(w, w)
        for vm in spec.vm_types:
            key = (cw, src.vm_types.get(vm.name, vm.name))
            if key in points:
                models[(w, vm.name)] = PiecewiseLinear(points[key])
    if not models:
        have = ", ".join(f"{w}/{p}" for w, p in sorted(points))
        raise ModelError(f"throughput_from.results: no measurements match the spec's "
                         f"workloads and VM types (the campaign has workload/profile: {have}; "
                         "map names with throughput_from.workloads and .vm_types)")
    return models


def models_json(models: Models) -> list[dict[str, Any]]:
    """The models as plain data (for --json and reports)."""
    return [{"workload": w, "vm_type": vm, "points": [[n, t] for n, t in m.points]}
            for (w, vm), m in sorted(models.items())]


def dataset_nodes(rf: int, dataset_gb: float, heap_gb: float) -> int:
    """Seed 001's eq. 12: at least D * r / heapSize nodes, so the data fits in the heaps."""
    return max(1, math.ceil(rf * dataset_gb / heap_gb - 1e-9))

