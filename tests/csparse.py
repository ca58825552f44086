"""cassandra-stress output read back as the common c-s parsers read it (shared by the
unit and integration tests of `--format cassandra-stress`)."""

from __future__ import annotations

import re

# PerfKitBenchmarker's cassandra_stress_benchmark: the metrics it reads from the last 20
# lines of the c-s log, each with `<metric>[\t ]+: ([\d\.:]+)`, `Total operation time`
# as H:M:S. Those patterns are c-s 2.1's: 4.x/5.x (StressMetrics.summarise) capitalises
# the names (`Op rate`), pads the figures (`%,8.0f`) and groups thousands (`11,435`).
# This parser keeps PKB's rules and allows those three: case-insensitive names, blanks
# after the colon, commas in the number (dropped).
PKB_METRICS = ("op rate", "partition rate", "row rate", "latency mean", "latency median",
               "latency 95th percentile", "latency 99th percentile",
               "latency 99.9th percentile", "latency max", "Total partitions",
               "Total errors", "Total operation time")


def parse_results(text: str) -> dict[str, float]:
    tail = "\n".join(text.splitlines()[-20:])  # PKB: `tail -n 20` of the result file
    out: dict[str, float] = {}
    for metric in PKB_METRICS:
        m = re.search(re.escape(metric) + r"[\t ]+: *([\d\.,:]+)", tail, re.I)
        assert m, f"{metric} not in the last 20 lines:\n{tail}"
        value = m.group(1).replace(",", "")
        if metric == "Total operation time":
            h, mi, s = value.split(":")
            out[metric] = int(h) * 3600 + int(mi) * 60 + int(s)
        else:
            out[metric] = float(value)
    return out


def parse_rows(text: str) -> list[dict[str, str]]:
    """Interval rows as c-s log readers take them: the header's names, comma-split."""
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("type"))
    names = ["type", *(n.strip() for n in lines[head][50:].split(","))]
    rows = []
    for ln in lines[head + 1:]:
        parts = [p.strip() for p in ln.split(",")]
        if len(parts) != len(names):
            break
        rows.append(dict(zip(names, parts, strict=True)))
    return rows
