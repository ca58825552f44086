"""A response's value per trial: summaries as recorded, resources over the trial's
recorded window.

The window arithmetic (`window_mean`, `window_last`, `aggregate`) is pure; `trial_values`
asks the results repository for what it needs. How each response is computed is stated
in `explain` (printed by the report) and docs/results-schema.md.

The window: the load's recorded intervals (warm-up stages excluded), from the start of
the first to the end of the last, in seconds since the load run started. Node and host
samples count from the sampler's start, which is right before casslab-load is launched,
so both clocks are taken as one (casslab-load's connection time, typically well under a
second, shifts the window that much early). A sample at t_s covers (previous t_s, t_s]
(the first from 0) and holds that span's rate; a rate over the window is the mean of the
samples' rates weighted by how much of each span lies inside the window, which is
(last - first) / elapsed of the counter when the rate is even within each span.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence

import yaml
from hdrh.histogram import HdrHistogram

from casslab.core.errors import CasslabError
from casslab.experiment.factors.registry import PROFILE
from casslab.hardware import resolve_profile
from casslab.store.records import NodeMetricRow, Results, StageInterval, TrialRow
from casslab.store.responses import Response, parse_response

Series = Sequence[tuple[float, float]]  # (t_s at the end of the span, value), time order
Window = tuple[float, float] | None  # (start, end) in s; None: the whole trial


def _spans(samples: Series, window: Window) -> list[tuple[float, float]]:
    """(overlap with the window in s, value) of each sample's span."""
    out, prev = [], 0.0
    for t, v in samples:
        lo, hi = (prev, t) if window is None else (max(prev, window[0]), min(t, window[1]))
        if hi > lo and not math.isnan(v):
            out.append((hi - lo, v))
        prev = t
    return out


def window_mean(samples: Series, window: Window) -> float:
    """Time-weighted mean of the samples' values over the window; NaN without overlap."""
    spans = _spans(samples, window)
    total = sum(w for w, _ in spans)
    return sum(w * v for w, v in spans) / total if total > 0 else math.nan


def window_last(samples: Series, window: Window) -> float:
    """The value of the last sample whose span overlaps the window (the state at the
    window's end); NaN without overlap."""
    spans = _spans(samples, window)
    return spans[-1][1] if spans else math.nan


def window_count(samples: Series, window: Window) -> float:
    """Events in the window from a counter that starts at 0 with the trial: its value at
    the last sample inside the window minus its value at the last sample at or before
    the window's start (0 when there is none); NaN without a sample inside."""
    if window is None:
        return samples[-1][1] if samples else math.nan
    inside = [v for t, v in samples if window[0] < t <= window[1]]
    if not inside:
        return math.nan
    before = [v for t, v in samples if t <= window[0]]
    return inside[-1] - (before[-1] if before else 0.0)


def aggregate(per_node: dict[str, float], how: str) -> float:
    """`mean` or `sum` over the nodes that have a value, or one node's value (`node2`)."""
    vals = [v for v in per_node.values() if not math.isnan(v)]
    if how == "mean":
        return sum(vals) / len(vals) if vals else math.nan
    if how == "sum":
        return sum(vals) if vals else math.nan
    return per_node.get(how, math.nan)


_NODE_FIELDS: dict[str, Callable[[NodeMetricRow], float | None]] = {
    "node_cpu_pct": lambda r: None if r.cpu_user_pct is None else
    r.cpu_user_pct + (r.cpu_sys_pct or 0.0),
    "disk_read_kib_s": lambda r: r.read_kb_s,
    "disk_write_kib_s": lambda r: r.write_kb_s,
    "rss_mib": lambda r: r.rss_mib,
    "data_mib": lambda r: r.data_mib,
    # The same samples, but averaged over the window (a study's "disk space on average").
    "data_mib_avg": lambda r: r.data_mib,
    "node_cpu_credits": lambda r: r.cpu_credits,
}
# A state, not a rate: its value at the window's end.
_LEVELS = ("data_mib", "sstables", "node_cpu_credits")


def _by_node(rows: Sequence[tuple[float, str, float]]) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for t, node, v in rows:
        out.setdefault(node, []).append((t, v))
    return out


def node_value(results: Results, trial_id: int, r: Response, cores: float) -> float:
    """One trial's node resource `r`, aggregated over nodes as `r.how` says."""
    window = results.recorded_window(trial_id)
    if r.metric == "sstables":
        rows = [(t, n, float(v)) for t, n, v in results.sstable_totals(trial_id)]
    elif r.metric == "compactions_completed":
        rows = [(t, n, float(v)) for t, n, v in results.compactions_completed(trial_id)]
    else:
        get = _NODE_FIELDS["node_cpu_pct" if r.metric == "node_cpu_profile_pct" else r.metric]
        rows = [(m.t_s, m.node, math.nan if (v := get(m)) is None else float(v))
                for m in results.node_metrics(trial_id)]
    reduce = (window_count if r.metric == "compactions_completed" else
              window_last if r.metric in _LEVELS else window_mean)
    per_node = {n: reduce(s, window) for n, s in _by_node(rows).items()}
    if r.metric == "node_cpu_profile_pct":
        per_node = {n: v / cores for n, v in per_node.items()}
    return aggregate(per_node, r.how)


def host_value(results: Results, trial_id: int, r: Response) -> float:
    """One trial's machine resource `r` over its recorded window."""
    rows = results.host_metrics(trial_id)
    pick: dict[str, Callable[[Sequence[float | None]], float]] = {
        "host_cpu_pct": lambda h: (h[0] or 0.0) + (h[1] or 0.0),
        "host_disk_read_kib_s": lambda h: h[2] if h[2] is not None else math.nan,
        "host_disk_write_kib_s": lambda h: h[3] if h[3] is not None else math.nan,
    }
    series = [(h.t_s, pick[r.metric]((h.cpu_user_pct, h.cpu_sys_pct, h.read_kb_s,
                                       h.write_kb_s))) for h in rows]
    return window_mean(series, results.recorded_window(trial_id))


_STAGE_PCT = {"p50_ms": 50.0, "p95_ms": 95.0, "p99_ms": 99.0, "p999_ms": 99.9}


def stage_metric(intervals: Sequence[StageInterval], metric: str) -> float:
    """One stage's `metric` (store.responses.STAGE_METRICS, or runtime_s and the
    service_ percentiles) from its intervals: counts summed, ops_s = ops / the intervals'
    total length, runtime_s that length, latency from their histograms merged (so a
    percentile of all the stage's operations); NaN without intervals or, for latency,
    when an interval has no histogram."""
    if not intervals:
        return math.nan
    if metric in ("ops", "errors"):
        return float(sum(getattr(iv, metric) for iv in intervals))
    if metric in ("ops_s", "runtime_s"):
        length = [iv.interval_s for iv in intervals]
        if any(x is None for x in length) or sum(x or 0.0 for x in length) <= 0:
            return math.nan
        total_s = sum(x or 0.0 for x in length)
        return total_s if metric == "runtime_s" else sum(iv.ops for iv in intervals) / total_s
    service = metric.startswith("service_")
    if service:
        metric = metric.removeprefix("service_")
    encoded = [iv.service_hist if service else iv.latency_hist for iv in intervals]
    if any(h is None for h in encoded):
        return math.nan
    merged = merge_histograms([HdrHistogram.decode(h) for h in encoded])
    if merged.get_total_count() == 0:
        return math.nan
    if metric == "mean_ms":
        return float(merged.get_mean_value()) / 1000
    if metric == "max_ms":
        return float(merged.get_max_value()) / 1000
    return float(merged.get_value_at_percentile(_STAGE_PCT[metric])) / 1000


def merge_histograms(hists: Sequence[HdrHistogram]) -> HdrHistogram:
    """One histogram of all of `hists` (at least one). casslab-load's histograms
    auto-resize, so each decodes with the range its own values needed: the merge gets a
    range wide enough for all of them."""
    top = max(2, *(h.get_max_value() for h in hists))
    merged = HdrHistogram(1, 2 * top, hists[0].significant_figures)
    for h in hists:
        merged.add(h)
    return merged


def trial_values(results: Results, name: str, trial_ids: Sequence[int], *,
                 cores: Callable[[int], float] | None = None) -> dict[int, float]:
    """Response `name` of each trial (NaN when it has none). `cores(trial_id)`: the CPU
    cores of the trial's node profile, for node_cpu_profile_pct (default: from the
    campaign's stored spec and trials, `profile_cores`; a caller that has them at hand
    passes them). Raises ValueError for an invalid name."""
    r = parse_response(name)
    if r.kind == "summary":
        got = results.summary_metric(r.op, r.metric)
        # A trial cut at its steady start (workload.warmup: until-steady): all
        # operations' figures from the intervals of its window, whose histograms the
        # store keeps; one operation's stay the run's (its intervals keep no histogram
        # of their own).
        steady = results.steady_starts() if r.op == "ALL" else {}
        return {t: stage_metric(results.recorded_intervals(t), r.metric) if t in steady
                else got.get(t, math.nan) for t in trial_ids}
    if r.kind == "host":
        return {t: host_value(results, t, r) for t in trial_ids}
    if r.kind == "stage":
        return {t: stage_metric(results.stage_intervals(t, r.stage), r.metric)
                for t in trial_ids}
    if cores is None and r.metric == "node_cpu_profile_pct":
        # Not this machine's cores: a campaign whose `profile` factor varies the quota
        # (t2.micro 1 core, t2.medium 2) would compare raw CPU instead (issue 31: the
        # stopping rule of 001's until-verdicts run judged +63 % where the report, with
        # the profiles' cores, had -18 %).
        cores = stored_profile_cores(results)
    machine = float(os.cpu_count() or 1)
    return {t: node_value(results, t, r, cores(t) if cores else machine) for t in trial_ids}


def stored_profile_cores(results: Results) -> Callable[[int], float]:
    """`profile_cores` of the campaign in `results` (without one: the 'host' profile's,
    this machine's cores)."""
    campaign = results.campaign()
    return profile_cores(campaign.spec_yaml if campaign else "", results.trials())


def profile_cores(spec_yaml: str, rows: Sequence[TrialRow]) -> Callable[[int], float]:
    """trial id -> CPU cores of its nodes' hardware profile (a `profile` factor's level,
    else the spec's lab.profile, else 'host'); this machine's cores for a profile without
    a CPU quota or one that cannot be resolved here (a user profiles file)."""
    machine = float(os.cpu_count() or 1)
    try:
        lab = (yaml.safe_load(spec_yaml) or {}).get("lab") or {}
        default = str(lab.get("profile", "host")) if isinstance(lab, dict) else "host"
    except yaml.YAMLError:
        default = "host"
    by_trial = {r.trial_id: str(r.params.get(PROFILE, default)) for r in rows}

    def cores(trial_id: int) -> float:
        try:
            quota = resolve_profile(by_trial.get(trial_id, default)).cpu_cores
        except CasslabError:
            return machine
        return float(quota) if quota else machine

    return cores


_HOW = {"mean": "mean over the nodes", "sum": "sum over the nodes"}
_RESOURCE = {
    "node_cpu_pct": "CPU (user + system) of each node's JVM from /proc/<pid>/stat, % of ONE "
                    "core (100 = one core busy)",
    "node_cpu_profile_pct": "node CPU as node_cpu_pct divided by the cores of the node's "
                            "hardware profile (the machine's cores for an unlimited profile)",
    "disk_read_kib_s": "each node JVM's /proc/<pid>/io read_bytes (what reached the block "
                       "layer), KiB/s",
    "disk_write_kib_s": "each node JVM's /proc/<pid>/io write_bytes (what reached the block "
                        "layer), KiB/s",
    "rss_mib": "VmRSS of each node's JVM, MiB",
    "data_mib": "`du` of each node's data directory, MiB",
    "data_mib_avg": "`du` of each node's data directory, MiB (its mean over time, where "
                    "data_mib is its size at the end)",
    "sstables": "live SSTables (*-Data.db) of each node's user tables",
    "compactions_completed": "compactions each node completed (its system.compaction_history "
                             "rows, sampled over CQL as a count since the trial started)",
    "node_cpu_credits": "CPU credit balance of each burstable (t2.*) node as the lab's credit "
                        "controller keeps it (AWS T2 model), at the window's end",
    "host_cpu_pct": "whole-machine CPU (user + system) from /proc/stat, % of all cores",
    "host_disk_read_kib_s": "whole disks of /proc/diskstats, KiB/s read",
    "host_disk_write_kib_s": "whole disks of /proc/diskstats, KiB/s written",
}


def explain(name: str, cut_at_steady: bool = False) -> str:
    """One sentence: how response `name` is computed; cut_at_steady: the campaign's
    trials were cut at their steady start (workload.warmup: until-steady), which changes
    where a summary's numbers come from."""
    r = parse_response(name)
    if r.kind == "stage":
        how = ("its intervals' histograms merged (all the stage's operations)"
               if r.metric.endswith("_ms") else
               "operations over the total length of its intervals" if r.metric == "ops_s"
               else "summed over its intervals")
        return (f"{name}: {r.metric} of the load's stage {r.stage} (casslab-load --stages), "
                f"{how}.")
    if r.kind == "summary":
        latency = r.metric.endswith("_ms")
        who = ("all operations" + (" (merged histograms)" if latency else "")
               if r.op == "ALL" else f"the {r.op} operations")
        window = "" if not cut_at_steady else (
            " (each trial cut at its steady start, workload.warmup: until-steady: from the "
            "recorded intervals after it instead, their histograms merged)" if r.op == "ALL"
            else " (the whole run even though each trial was cut at its steady start: one "
            "operation's intervals keep no histogram)")
        return (f"{name}: {r.metric} of {who} over the load's recorded run (warm-up stages "
                f"excluded), from casslab-load's summary{window}.")
    over = ("the count at the window's end minus the count at its start" if
            r.metric == "compactions_completed" else "the last sample" if r.metric in _LEVELS
            else "time-weighted mean of the samples") + \
        " over the trial's recorded window (warm-up excluded)"
    how = "" if r.kind == "host" else "; " + _HOW.get(r.how, f"node {r.how} only")
    return f"{name}: {_RESOURCE[r.metric]}; {over}{how}."
