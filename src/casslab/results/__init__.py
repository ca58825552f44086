"""Notebook API: one campaign's results as pandas DataFrames.

    import casslab.results
    r = casslab.results.open("results/edge-latency")
    r.trials.groupby("delay_ms")["p99_ms"].median()      # one column per factor/response
    r.intervals.query("trial_id == 3").plot(x="t_s", y="ops_s")
    r.nodes.groupby("node")["cpu_user_pct"].mean()

A thin facade over the results repository (casslab.store) and the campaign's
responses (casslab.analysis): it knows no SQL. It sits beside report/tune/plan in
the layer contract because it reads both.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casslab.analysis.responses import profile_cores, trial_values
from casslab.store.responses import SUMMARY_METRICS
from casslab.store.results import IntervalRow, NodeMetricRow, Results, TrialRow

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CampaignFrames", "open"]

# TrialRow fields that are bookkeeping, not responses or factors.
_TRIAL_META = ("trial_id", "seq", "trial_no", "cell", "cell_idx", "warmup", "status", "error",
               "started_at", "ended_at", "ended_by", "pct_source")


@dataclass(frozen=True)
class CampaignFrames:
    """A campaign's results as DataFrames.

    trials: one row per planned trial: bookkeeping (trial_id, seq, cell, warmup, status,
        kept, ...), one column per factor (its level), the ALL summary (runtime_s, ops,
        ops_s, errors, latency in ms from the intended start), `<op>.<metric>` per
        operation type (e.g. `read.p99_ms`), and each response the spec names.
    intervals: the load generator's reporting intervals (trial_id, t_s, stage, recorded,
        ops, ops_s, errors, p50_ms, p99_ms, interval_s).
    nodes: the metrics sampler's per-node rows (trial_id, t_s, node, cpu_user_pct,
        cpu_sys_pct, read_kb_s, write_kb_s, rss_mib, data_mib, ...).
    factors / responses: the campaign's factor and response column names.
    """

    trials: pd.DataFrame
    intervals: pd.DataFrame
    nodes: pd.DataFrame
    factors: list[str]
    responses: list[str]


def _trial_record(t: TrialRow, factors: list[str]) -> dict[str, Any]:
    d = asdict(t)
    params = {**d.pop("cell_params"), **d.pop("params")}
    row: dict[str, Any] = {k: d[k] for k in _TRIAL_META}
    row["kept"] = t.kept
    row.update({f: params.get(f) for f in factors})
    row.update({k: v for k, v in d.items() if k not in _TRIAL_META})
    return row


def open(directory: str | Path) -> CampaignFrames:
    """The campaign in results directory `directory` as DataFrames (see CampaignFrames).
    Raises StoreError when there is no results database."""
    # pandas is a casslab dependency already (analysis); imported here because it is
    # slow to import and `import casslab.results` should stay cheap.
    import pandas as pd

    store, results = Results.open(Path(directory))
    try:
        campaign = results.campaign()
        rows = results.trials()
        factors = [str(f["name"]) for f in (campaign.factors if campaign else [])
                   if isinstance(f, dict) and "name" in f]
        if not factors:
            factors = sorted({k for t in rows for k in {**t.cell_params, **t.params}})
        records = [_trial_record(t, factors) for t in rows]
        ids = [t.trial_id for t in rows]
        by_id = {r["trial_id"]: r for r in records}
        for t in rows:
            for s in results.op_summaries(t.trial_id):
                if s.op == "ALL":
                    continue
                for m in SUMMARY_METRICS:
                    by_id[t.trial_id][f"{s.op}.{m}"] = getattr(s, m)
        responses = campaign.responses if campaign else []
        cores = profile_cores(campaign.spec_yaml, rows) if campaign else None
        for name in responses:
            if ids and name in by_id[ids[0]]:
                continue  # an ALL-summary column already (runtime_s, p99_ms, ...)
            values = trial_values(results, name, ids, cores=cores)
            for tid, v in values.items():
                by_id[tid][name] = None if math.isnan(v) else v
        intervals = [{"trial_id": tid, **asdict(iv)} for tid in ids
                     for iv in results.intervals(tid, recorded_only=False)]
        nodes = [{"trial_id": tid, **asdict(n)} for tid in ids
                 for n in results.node_metrics(tid)]
    finally:
        store.close()
    return CampaignFrames(
        trials=pd.DataFrame.from_records(records),
        intervals=pd.DataFrame.from_records(
            intervals, columns=["trial_id", *[f.name for f in fields(IntervalRow)]]),
        nodes=pd.DataFrame.from_records(
            nodes, columns=["trial_id", *[f.name for f in fields(NodeMetricRow)]]),
        factors=factors,
        responses=responses,
    )
