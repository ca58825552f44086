"""The until: verdicts rule: paired differences per round, decisive only once the
anytime-valid interval says so."""

from __future__ import annotations

import math
import random

import pytest

from casslab.cli.stopping import round_differences, state
from casslab.experiment.reference import Finding
from casslab.store.results import TrialRow


def row(tid: int, rnd: int, level: float, other: str = "x") -> TrialRow:
    params = {"delay": level, "other": other}
    return TrialRow(tid, tid, 1, False, "done", None, None, None, "completed", "k", 0, params,
                    params, 1.0, 1, 1.0, 0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "histogram",
                    round=rnd)


def test_differences_pair_cells_within_a_round_only() -> None:
    f = Finding("c", "read.mean_ms", "delay", 0.0, 2.0, "slope", slope=4.0, tolerance=0.4)
    rows = [row(1, 1, 0.0), row(2, 1, 2.0), row(3, 2, 0.0), row(4, 2, 2.0), row(5, 3, 0.0)]
    values = {1: 1.0, 2: 9.0, 3: 2.0, 4: 10.0, 5: 100.0}
    assert round_differences(f, rows, values) == [4.0, 4.0]  # round 3 has no pair
    g = Finding("c", "read.mean_ms", "delay", 0.0, 2.0, "higher")
    assert round_differences(g, rows, values) == [math.log(9.0), math.log(5.0)]


def test_known_effect_becomes_decisive_and_null_stays_open_early() -> None:
    rng = random.Random(4)
    slope = Finding("d", "r", "delay", 0.0, 2.0, "slope", slope=4.0, tolerance=0.4)
    diffs = [4.0 + rng.gauss(0, 0.1) for _ in range(10)]
    s = state(slope, diffs, 0.05, 1.0)
    assert s.decisive and s.interval.low > 3.6 and s.interval.high < 4.4
    assert not state(slope, diffs[:1], 0.05, 1.0).decisive  # one round: unbounded
    aa = Finding("aa", "r", "copy", "a", "b", "no difference")
    noisy = [rng.gauss(0, 0.3) for _ in range(3)]
    assert not state(aa, noisy, 0.05, 1.0).decisive
    quiet = [rng.gauss(0, 0.005) for _ in range(12)]
    assert state(aa, quiet, 0.05, 1.0).decisive


def test_detectable_effect_shrinks_with_rounds_and_is_wider_when_anytime_valid() -> None:
    from casslab.analysis.noisefloor import (
        INTERLEAVED,
        POOLED,
        SEQUENTIAL,
        detectable_pct,
        log_sd_within,
        paired_sigma,
    )

    fixed = [detectable_pct(0.05, n, INTERLEAVED) for n in (5, 10, 20)]
    seq = [detectable_pct(0.05, n, SEQUENTIAL) for n in (5, 10, 20)]
    assert fixed[0] > fixed[1] > fixed[2] > 0
    assert all(s > f for s, f in zip(seq, fixed, strict=True))
    assert detectable_pct(0.05, 1, SEQUENTIAL) == math.inf
    # four pairs a round average the noise down
    assert detectable_pct(0.05, 10, POOLED, pairs=4) < detectable_pct(0.05, 10, POOLED)
    sd, df = log_sd_within({"a": [1.0, math.e], "b": [2.0]})
    assert df == 1 and sd == pytest.approx(math.sqrt(0.5))
    assert paired_sigma([0.1, -0.1]) == pytest.approx(0.1)
