"""scripts/repro002.py's pure parts: the package's delay model on each sweep's own spec,
the slope fit, the tables."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))

import repro002


def test_delay_model_at_cl1_is_the_client_round_trip_alone() -> None:
    assert repro002.delay_model_ms("edge", 50, "ONE") == pytest.approx(20.0)
    assert repro002.delay_model_ms("endpoint", 50, "ONE") == pytest.approx(30.0)


def test_delay_model_waits_for_the_nearest_peers_averaged_over_coordinators() -> None:
    # a, b, c = 5, 10, 15: nearest peer 5, 5, 10 ms away; farthest 15, 10, 15 ms.
    assert repro002.delay_model_ms("edge", 0, "TWO") == pytest.approx(20 + 2 * 20 / 3)
    assert repro002.delay_model_ms("edge", 0, "THREE") == pytest.approx(20 + 2 * 40 / 3)
    assert repro002.delay_model_ms("edge", 50, "THREE") == pytest.approx(20 + 3 * 40 / 3)


def test_fit_recovers_a_known_line_and_its_interval_holds_it() -> None:
    xs = [0, 10, 20, 30, 40, 50] * 2
    ys = [2.0 + 0.2 * x + (0.1 if i % 2 else -0.1) for i, x in enumerate(xs)]
    f = repro002.fit(xs, ys)
    assert f.slope == pytest.approx(0.2, abs=0.01)
    assert f.low < 0.2 < f.high
    assert f.p < 1e-6


def test_paper_tables_share_their_base_point_as_in_the_study() -> None:
    # Each CL's two sweeps start from the same configuration, so from the same numbers.
    for cl in repro002.CLS:
        assert (repro002.PAPER[("endpoint", cl)][1][0]
                == repro002.PAPER[("edge", cl)][1][0])
    assert sorted(no for no, _ in repro002.PAPER.values()) == [1, 2, 3, 4, 5, 6]
