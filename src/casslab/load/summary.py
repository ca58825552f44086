"""The load generator's summary line as typed values (microseconds in, names with units)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Percentiles:
    """Latency percentiles in microseconds."""

    mean_us: float
    p50_us: int
    p95_us: int
    p99_us: int
    p999_us: int
    max_us: int

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Percentiles:
        return cls(float(d["mean_us"]), int(d["p50_us"]), int(d["p95_us"]), int(d["p99_us"]),
                   int(d["p999_us"]), int(d["max_us"]))


@dataclass(frozen=True)
class OpSummary:
    """One operation type: counts, rate, and latency from the intended start
    (coordinated-omission corrected) next to service time."""

    name: str
    ops: int
    ops_s: float
    not_found: int
    errors: int
    retries: int
    latency: Percentiles
    service: Percentiles
    first_errors: tuple[str, ...]


@dataclass(frozen=True)
class RunSummary:
    """A whole run: what ran, how it ended, totals and per-operation figures."""

    workload: str
    ended_by: str
    elapsed_s: float
    ops: int
    ops_s: float
    errors: int
    by_op: tuple[OpSummary, ...]
    raw: dict[str, Any]
    # Every operation type's histograms merged by casslab-load (None from a casslab-load
    # without the `all` block): the run's overall percentiles.
    overall: OpSummary | None = None
    # Requests outstanding at most: --threads N, or --workers x --in-flight (None from a
    # casslab-load without the `concurrency` block).
    clients: int | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunSummary:
        ops = tuple(_op(name, o) for name, o in d["by_op"].items())
        overall = _op("ALL", d["all"]) if "all" in d else None
        clients = d.get("concurrency", {}).get("clients")
        return cls(str(d["workload"]), str(d["ended_by"]), float(d["elapsed_s"]), int(d["ops"]),
                   float(d["ops_s"]), int(d["errors"]), ops, d, overall,
                   None if clients is None else int(clients))

    def all_ops(self) -> OpSummary | None:
        """Percentiles of all operations: the merged block, or the one type that ran;
        None when several types ran and casslab-load sent no merged block (percentiles
        of different types can't be combined)."""
        if self.overall is not None:
            return self.overall
        live = [o for o in self.by_op if o.ops > 0]
        return live[0] if len(live) == 1 else None


def _op(name: str, o: dict[str, Any]) -> OpSummary:
    return OpSummary(name, int(o["ops"]), float(o["ops_s"]), int(o.get("not_found", 0)),
                     int(o["errors"]), int(o.get("retries", 0)),
                     Percentiles.from_json(o["latency"]), Percentiles.from_json(o["service"]),
                     tuple(o.get("first_errors", [])))
