"""Response names: what a campaign can analyse, and how a name is read.

Pure (no SQL): the spec validates names with `parse_response` when it is read, the
analysis (casslab.analysis.responses) computes a trial's value from the parsed form
through the results repository. docs/results-schema.md states how each is computed.

Forms:
  `<op>.<metric>`      one operation type's summary (`read.mean_ms`, `all.p99_ms`);
                       `all` is the ALL row (every operation, merged histograms)
  `runtime_s`, `ops_s`, `mean_ms`, ... (schema 1 names): the ALL row's, = `all.<metric>`
  `<resource>[.<how>]` a resource over the trial's recorded window; <how> is `mean`
                       (over nodes, the default), `sum` (over nodes) or a node name
  `stage.<name>.<metric>` one stage of a staged workload (casslab-load --stages; a stage
                       without a name is stage1, stage2, ...) from its intervals
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Columns of a summaries row a response can name.
SUMMARY_METRICS = ("runtime_s", "ops", "ops_s", "errors", "mean_ms", "p50_ms", "p95_ms",
                   "p99_ms", "p999_ms", "max_ms", "service_p50_ms", "service_p99_ms")
# Schema-1 names, still valid: the ALL row's.
LEGACY = ("runtime_s", "ops_s", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms")
# Per-node resources (aggregated over nodes unless a node is named) and machine ones.
NODE_RESOURCES = ("node_cpu_pct", "node_cpu_profile_pct", "disk_read_kib_s",
                  "disk_write_kib_s", "rss_mib", "data_mib", "data_mib_avg", "sstables",
                  "compactions_completed", "node_cpu_credits")
HOST_RESOURCES = ("host_cpu_pct", "host_disk_read_kib_s", "host_disk_write_kib_s")
AGGREGATES = ("mean", "sum")
# Of one stage, from its intervals (latency from their merged histograms).
STAGE_METRICS = ("ops", "ops_s", "errors", "mean_ms", "p50_ms", "p95_ms", "p99_ms",
                 "p999_ms", "max_ms")

UNITS = {"runtime_s": "s", "ops": "ops", "ops_s": "ops/s", "errors": "errors",
         "node_cpu_pct": "% of one core", "node_cpu_profile_pct": "% of the profile's cores",
         "host_cpu_pct": "% of all cores", "disk_read_kib_s": "KiB/s",
         "disk_write_kib_s": "KiB/s", "host_disk_read_kib_s": "KiB/s",
         "host_disk_write_kib_s": "KiB/s", "rss_mib": "MiB", "data_mib": "MiB",
         "data_mib_avg": "MiB",
         "sstables": "SSTables", "compactions_completed": "compactions",
         "node_cpu_credits": "CPU credits"}

_OP = re.compile(r"[a-z][a-z0-9_]*")
_NODE = re.compile(r"node[0-9]+")
_STAGE = re.compile(r"stage\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)")


@dataclass(frozen=True)
class Response:
    """A parsed response name. kind: 'summary' (op, metric), 'node' (metric, how:
    mean / sum / a node name), 'host' (metric) or 'stage' (stage, metric)."""

    name: str
    kind: str
    metric: str
    op: str = "ALL"
    how: str = "mean"
    stage: str = ""

    @property
    def unit(self) -> str:
        return "ms" if self.metric.endswith("_ms") else UNITS.get(self.metric, "")


def valid_forms() -> str:
    """The valid response names, for an error message."""
    return (f"<op>.<metric> with <op> an operation type or 'all' and <metric> one of "
            f"{', '.join(SUMMARY_METRICS)}; {', '.join(LEGACY)} (the ALL row's); "
            f"{', '.join(NODE_RESOURCES)} optionally .mean, .sum or .<node> (node1, ...); "
            f"{', '.join(HOST_RESOURCES)}; stage.<stage name>.<metric> with <metric> one of "
            f"{', '.join(STAGE_METRICS)}")


def parse_response(name: str) -> Response:
    """Read a response name; raises ValueError naming it and the valid forms."""
    if name in LEGACY:
        return Response(name, "summary", name)
    if name in HOST_RESOURCES:
        return Response(name, "host", name)
    if (m := _STAGE.fullmatch(name)) and m[2] in STAGE_METRICS:
        return Response(name, "stage", m[2], stage=m[1])
    head, _, tail = name.partition(".")
    if head in NODE_RESOURCES and (not tail or tail in AGGREGATES or _NODE.fullmatch(tail)):
        return Response(name, "node", head, how=tail or "mean")
    if tail in SUMMARY_METRICS and _OP.fullmatch(head) and head not in NODE_RESOURCES:
        return Response(name, "summary", tail, op="ALL" if head == "all" else head)
    raise ValueError(f"{name!r} is not a valid response (valid: {valid_forms()})")
