"""The load clients of trials run by several (`workload.clients` K > 1): each client's
own figures per cell, and which client held the run back. Pure: rows in, rows out.

Per cell and client: the median over the cell's kept trials of the client's throughput,
p50/p99/p99.9 and errors. Each percentile is the client's own, from its own histogram in
that trial; medians over trials of a percentile describe the typical trial and are never
combined into a percentile of the cell.

A client is flagged as likely saturated (or farther from the nodes) when, in more than
half of the cell's trials, its throughput was below SLOW_SHARE of the median client of
that trial. The K clients run the same share of the same load, so a healthy set keeps
near one another; a client that cannot keep up lags in trial after trial, where a
single slow trial is noise.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from casslab.store.records import ClientSummaryRow, TrialRow

# Below this share of the trial's median client, a client lagged in that trial.
SLOW_SHARE = 0.8


@dataclass(frozen=True)
class ClientStat:
    """One client of one cell over the cell's kept trials (ms, ops/s)."""

    cell: str
    client: int
    trials: int
    ops_s: float
    p50_ms: float
    p99_ms: float
    p999_ms: float
    errors: float
    lagged: int  # trials in which it was below SLOW_SHARE of the median client
    saturated: bool


@dataclass(frozen=True)
class CellClients:
    """A cell's clients, and the spread of their throughput (max / min of the medians)."""

    cell: str
    clients: tuple[ClientStat, ...]

    @property
    def spread(self) -> float:
        rates = [c.ops_s for c in self.clients]
        return max(rates) / min(rates) if min(rates) > 0 else float("inf")


def lagging(rates: Mapping[int, float], share: float = SLOW_SHARE) -> set[int]:
    """The clients of one trial whose throughput is below `share` of the median
    client's."""
    if len(rates) < 2:
        return set()
    middle = statistics.median(rates.values())
    return {c for c, r in rates.items() if r < share * middle}


def client_table(rows: Sequence[ClientSummaryRow], trials: Sequence[TrialRow]
                 ) -> list[CellClients]:
    """Per cell (in the cells' order), its clients over the cell's kept trials; cells
    whose trials had one client are left out (empty when none had several)."""
    kept = {t.trial_id: t for t in trials if t.kept}
    by_trial: dict[int, list[ClientSummaryRow]] = {}
    for r in rows:
        if r.trial_id in kept:
            by_trial.setdefault(r.trial_id, []).append(r)
    cells: dict[str, dict[int, list[ClientSummaryRow]]] = {}
    lagged: dict[tuple[str, int], int] = {}
    order = sorted(by_trial, key=lambda tid: (kept[tid].cell_idx, kept[tid].seq))
    for tid in order:
        cell = kept[tid].cell
        clients = by_trial[tid]
        for c in lagging({r.client: r.ops_s for r in clients}):
            lagged[(cell, c)] = lagged.get((cell, c), 0) + 1
        for r in clients:
            cells.setdefault(cell, {}).setdefault(r.client, []).append(r)
    return [CellClients(cell, tuple(_stat(cell, c, rs, lagged.get((cell, c), 0))
                                    for c, rs in sorted(per.items())))
            for cell, per in cells.items()]


def _stat(cell: str, client: int, rows: list[ClientSummaryRow], lagged: int) -> ClientStat:
    def med(values: list[float]) -> float:
        return float(statistics.median(values))

    return ClientStat(cell, client, len(rows), med([r.ops_s for r in rows]),
                      med([r.p50_ms for r in rows]), med([r.p99_ms for r in rows]),
                      med([r.p999_ms for r in rows]), med([float(r.errors) for r in rows]),
                      lagged, lagged * 2 > len(rows))
