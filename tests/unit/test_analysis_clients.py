"""The load clients of trials run by several: medians over a cell's trials of each
client's own figures, and a client flagged when it lags in most trials."""

from __future__ import annotations

from casslab.analysis.clients import client_table, lagging
from casslab.store.records import ClientSummaryRow, TrialRow


def trial(tid: int, cell: str, cell_idx: int, *, warmup: bool = False) -> TrialRow:
    params = {"cl": cell}
    return TrialRow(
        trial_id=tid, seq=tid, trial_no=tid, warmup=warmup, status="done", error=None,
        started_at=None, ended_at=None, ended_by=None, cell=cell, cell_idx=cell_idx,
        params=params, cell_params=params, runtime_s=1.0, ops=100, ops_s=100.0, errors=0,
        mean_ms=1.0, p50_ms=1.0, p95_ms=1.0, p99_ms=1.0, p999_ms=1.0, max_ms=1.0,
        pct_source="histogram")


def client(tid: int, c: int, ops_s: float, p99: float = 5.0) -> ClientSummaryRow:
    return ClientSummaryRow(tid, c, ops_s, 0, 1.0, p99, 2 * p99)


def test_one_client_per_trial_gives_no_rows() -> None:
    assert client_table([], [trial(1, "one", 0)]) == []


def test_a_client_lagging_in_most_trials_is_flagged_and_one_slow_trial_is_not() -> None:
    trials = [trial(t, "one", 0) for t in (1, 2, 3)]
    rows = [client(1, 1, 1000), client(1, 2, 500),   # client 2 lags
            client(2, 1, 1000), client(2, 2, 600),   # and again
            client(3, 1, 500), client(3, 2, 1000)]   # client 1 lags once
    (cell,) = client_table(rows, trials)
    c1, c2 = cell.clients
    assert (c1.lagged, c1.saturated) == (1, False)
    assert (c2.lagged, c2.saturated) == (2, True)


def test_figures_are_medians_over_trials_not_means() -> None:
    trials = [trial(t, "one", 0) for t in (1, 2, 3)]
    rows = [client(1, 1, 100, p99=1), client(2, 1, 200, p99=2), client(3, 1, 900, p99=30),
            client(1, 2, 100), client(2, 2, 200), client(3, 2, 900)]
    (cell,) = client_table(rows, trials)
    c1 = cell.clients[0]
    assert (c1.ops_s, c1.p99_ms, c1.p999_ms, c1.trials) == (200, 2, 4, 3)
    assert cell.spread == 1.0


def test_warm_ups_are_left_out_and_cells_keep_their_order() -> None:
    trials = [trial(1, "b", 1), trial(2, "a", 0, warmup=True), trial(3, "a", 0)]
    rows = [client(1, 1, 10), client(1, 2, 20), client(2, 1, 1), client(2, 2, 1),
            client(3, 1, 30), client(3, 2, 60)]
    table = client_table(rows, trials)
    assert [c.cell for c in table] == ["a", "b"]
    assert [s.ops_s for s in table[0].clients] == [30, 60]
    assert table[0].spread == 2.0


def test_lagging_is_relative_to_the_median_client() -> None:
    assert lagging({1: 100, 2: 100, 3: 79}) == {3}
    assert lagging({1: 100, 2: 81, 3: 100}) == set()
    assert lagging({1: 5}) == set()
