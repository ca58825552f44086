"""Notebook API: one campaign's results as pandas DataFrames.

    import casslab.results
    r = casslab.results.open("results/edge-latency")
    r.trials.groupby("delay_ms")["p99_ms"].median()      # one column per factor/response
    r.trials.query("read_p99_ms > 20")                  # every column is an identifier
    r.intervals.query("trial_id == 3").plot(x="t_s", y="ops_s")
    r.nodes.groupby("node")["cpu_user_pct"].mean()

Column names are Python identifiers (`read.p99_ms` is `read_p99_ms`, factor
`network.scale.edge` is `network_scale_edge`; `names` maps each back), units are spelt as
in the rest of casslab (IEC: `_kib_s` is KiB/s, `_mib` MiB), and dtypes are typed
(nullable Int64 and boolean, string, float64, UTC datetimes): docs/results-schema.md,
"Notebook frames".

A thin facade over the results repository (casslab.store) and the campaign's
responses (casslab.analysis): it knows no SQL. It sits beside report/tune/plan in
the layer contract because it reads both.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casslab.analysis.responses import profile_cores, trial_values
from casslab.core.errors import UsageError
from casslab.store.records import IntervalRow, NodeMetricRow, Results, TrialRow
from casslab.store.responses import SUMMARY_METRICS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CampaignFrames", "identifier", "open"]

# The store's column -> the frame's: the store says kb, it means KiB (bytes / 1024).
RENAMED = {"read_kb_s": "read_kib_s", "write_kb_s": "write_kib_s"}
# Epoch seconds in the store; UTC datetimes in the frames.
_TIMES = ("started_at", "ended_at")
# pandas' inferred kind of a factor or response column -> its dtype (others: object).
_INFERRED = {"integer": "Int64", "boolean": "boolean", "string": "string",
             "floating": "float64", "mixed-integer-float": "float64", "empty": "float64"}
# TrialRow fields that are bookkeeping, not responses or factors.
_TRIAL_META = ("trial_id", "seq", "trial_no", "cell", "cell_idx", "warmup", "status", "error",
               "started_at", "ended_at", "ended_by", "pct_source")


@dataclass(frozen=True)
class CampaignFrames:
    """A campaign's results as DataFrames.

    trials: one row per planned trial: bookkeeping (trial_id, seq, cell, warmup, status,
        kept, ...), one column per factor (its level), the ALL summary (runtime_s, ops,
        ops_s, errors, latency in ms from the intended start), `<op>_<metric>` per
        operation type (e.g. `read_p99_ms`), and each response the spec names.
    intervals: the load generator's reporting intervals (trial_id, t_s, stage, recorded,
        ops, ops_s, errors, p50_ms, p99_ms, interval_s, pct_source).
    nodes: the metrics sampler's per-node rows (trial_id, t_s, node, cpu_user_pct,
        cpu_sys_pct, read_kib_s, write_kib_s, rss_mib, data_mib, ...).
    factors / responses: the campaign's factor and response column names (identifiers).
    names: each column whose name differs from the spec's or the store's -> that name.
    """

    trials: pd.DataFrame
    intervals: pd.DataFrame
    nodes: pd.DataFrame
    factors: list[str]
    responses: list[str]
    names: dict[str, str]


def identifier(name: str) -> str:
    """The column name for a factor, response or `<op>.<metric>`: every character outside
    [A-Za-z0-9_] becomes `_`, a leading digit or a keyword gets `_` (`read.p99_ms` ->
    `read_p99_ms`, `option.table-ttl-s` -> `option_table_ttl_s`, `class` -> `class_`)."""
    out = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not out or out[0].isdigit():
        out = f"_{out}"
    return f"{out}_" if keyword.iskeyword(out) else out


def _rename(columns: list[str], names: dict[str, str]) -> dict[str, str]:
    """Old -> new for the columns whose name changes; records each in `names` and refuses
    two columns that would get one name."""
    out: dict[str, str] = {}
    taken = {c for c in columns if RENAMED.get(c, identifier(c)) == c}
    for c in columns:
        new = RENAMED.get(c) or identifier(c)
        if new == c:
            continue
        if new in taken:
            raise UsageError(f"columns {names.get(new, new)!r} and {c!r} would both be "
                             f"{new!r} in the frame; rename one of them in the spec")
        taken.add(new)
        out[c] = new
        names[new] = c
    return out


def _dtype(annotation: object) -> str:
    """The frame dtype of a dataclass field (its annotation, a string here)."""
    base = str(getattr(annotation, "__name__", annotation)).replace(" | None", "")
    return {"int": "Int64", "float": "float64", "bool": "boolean", "str": "string"}.get(
        base, "object")


def _typed(frame: pd.DataFrame, rows: type[Any], extra: dict[str, str]) -> pd.DataFrame:
    """Known columns to their field's dtype, the rest (factors, responses) to the
    narrowest nullable dtype pandas infers (floats stay float64, NaN for none)."""
    import pandas as pd

    known = {**{f.name: _dtype(f.type) for f in fields(rows)}, **extra}
    out = frame.copy()
    for column in out.columns:
        dtype = known.get(column)
        if column in _TIMES:
            out[column] = pd.to_datetime(out[column], unit="s", utc=True)
        elif dtype is None:
            inferred = pd.api.types.infer_dtype(out[column], skipna=True)
            dtype = _INFERRED.get(inferred, "object")
        if dtype not in (None, "object") and column not in _TIMES:
            out[column] = out[column].astype(pd.api.types.pandas_dtype(dtype))
    return out


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
        ops: set[str] = set()
        for t in rows:
            for s in results.op_summaries(t.trial_id):
                if s.op == "ALL":
                    continue
                ops.add(s.op)
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
    names: dict[str, str] = {}
    trials = pd.DataFrame.from_records(records)
    trials = trials.rename(columns=_rename(list(trials.columns), names))
    interval_frame = pd.DataFrame.from_records(
        intervals, columns=["trial_id", *[f.name for f in fields(IntervalRow)]])
    node_frame = pd.DataFrame.from_records(
        nodes, columns=["trial_id", *[f.name for f in fields(NodeMetricRow)]])
    node_frame = node_frame.rename(columns=_rename(list(node_frame.columns), names))
    ids_dtype = {"trial_id": "Int64", "kept": "boolean"}
    return CampaignFrames(
        trials=_typed(trials, TrialRow, {**ids_dtype, **{
            identifier(f"{op}.{m}"): "Int64" if m in ("ops", "errors") else "float64"
            for op in ops for m in SUMMARY_METRICS}}),
        intervals=_typed(interval_frame, IntervalRow, ids_dtype),
        nodes=_typed(node_frame, NodeMetricRow, {
            **ids_dtype, **{RENAMED[k]: "float64" for k in RENAMED}}),
        factors=[identifier(f) for f in factors],
        responses=[identifier(r) for r in responses],
        names=names,
    )
