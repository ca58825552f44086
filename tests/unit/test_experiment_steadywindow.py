"""until-steady: the intervals before the steady start are stored unrecorded; the start
is capped at max_s; the cut-short last interval is not classified."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from casslab.experiment.steadywindow import steady_window


def ivs(n: int) -> list[dict[str, Any]]:
    out = [{"t_s": float(i + 1), "interval_s": 1.0, "ops": 10 * (i + 1), "ops_s": 10.0 * (i + 1),
            "errors": 0, "all": {"latency": {"p50_us": 1000 * (i + 1)}}} for i in range(n)]
    out.append({"t_s": n + 0.2, "interval_s": 0.2, "ops": 1, "ops_s": 5.0, "errors": 0})
    return out


def test_window_starts_at_the_steady_interval() -> None:
    seen: list[Sequence[Sequence[float]]] = []

    def cut(series: Sequence[Sequence[float]]) -> tuple[int, str]:
        seen.append(series)
        return 3, "steady"

    w = steady_window(ivs(10), cut, max_s=8.0)
    assert len(seen[0][0]) == 10 and seen[0][1][0] == 1.0  # the short last one left out
    assert (w.start_s, w.klass) == (3.0, "steady")
    assert [iv.get("recorded", True) for iv in w.intervals] == [False] * 3 + [True] * 8


def test_never_settled_starts_at_the_maximum() -> None:
    w = steady_window(ivs(10), lambda s: (len(s[0]), "no steady state"), max_s=4.0)
    assert (w.start_s, w.klass) == (4.0, "no steady state")
    assert sum(not iv.get("recorded", True) for iv in w.intervals) == 4
    late = steady_window(ivs(10), lambda s: (7, "steady"), max_s=5.0)
    assert late.start_s == 5.0  # capped
