"""Tuner decisions: change when the rules differ, hysteresis against noise, skips."""

from __future__ import annotations

import pytest

from casslab.core.errors import UsageError
from casslab.tune.decide import Policy, TableMemory, TableObservation, decide, relative_change
from casslab.tune.rules import parse_rules, seed003_rules

TWCS = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"


def obs(window: str = "10", min_thr: str = "6", ttl_s: int = 3600, reads: float = 10.0,
        writes: float = 90.0, strategy: str = "twcs") -> TableObservation:
    comp = {"class": TWCS, "compaction_window_size": window,
            "compaction_window_unit": "MINUTES", "max_threshold": "32",
            "min_threshold": min_thr}
    return TableObservation("iot", "sensor_data", strategy, comp, ttl_s, reads, writes)


POLICY = Policy(min_interval_s=300, min_rel_change=0.2, switch_margin=0.05)


def test_keep_when_already_optimal() -> None:
    d = decide(obs(), seed003_rules(), POLICY, TableMemory(), 0.0)
    assert d.action == "keep"
    assert d.inputs["read_share"] == 0.1


def test_change_to_rule_with_full_map() -> None:
    # Stage 2 of seed 003's scenario: TTL 2 h, 30 % reads -> 35 minutes, min_threshold 8.
    d = decide(obs(ttl_s=7200, reads=30, writes=70), seed003_rules(), POLICY, TableMemory(),
               0.0)
    assert d.action == "change"
    assert d.target == {"class": TWCS, "compaction_window_size": "35",
                        "compaction_window_unit": "MINUTES", "max_threshold": "32",
                        "min_threshold": "8"}
    assert "compaction_window_size 10->35" in d.reason
    assert d.rule is not None and d.rule["point"] == {"ttl_s": 7200.0, "read_share": 0.3}


def test_min_interval_holds() -> None:
    mem = TableMemory(last_change_s=100.0)
    o = obs(ttl_s=7200, reads=30, writes=70)
    d = decide(o, seed003_rules(), POLICY, mem, 200.0)
    assert d.action == "hold" and "last change 100 s ago, minimum 300 s" in d.reason
    assert decide(o, seed003_rules(), POLICY, mem, 400.1).action == "change"


def test_min_relative_change_holds() -> None:
    # Current 11 minutes, rule says 10: 9 % change, below 20 %.
    d = decide(obs(window="11"), seed003_rules(), POLICY, TableMemory(), 0.0)
    assert d.action == "hold" and "below the minimum 20%" in d.reason
    # With no minimum it changes.
    assert decide(obs(window="11"), seed003_rules(), Policy(min_rel_change=0.0), TableMemory(),
                  0.0).action == "change"


def test_dead_band_on_read_share() -> None:
    rules = parse_rules("twcs:\n"
                        "  - {ttl_s: 3600, read_share: 0.10, compaction_window_size: 10}\n"
                        "  - {ttl_s: 3600, read_share: 0.30, compaction_window_size: 22}\n")
    # Noise around the midpoint (20 %): 20.5 % is nearer to 30 % but within the margin.
    mem = TableMemory()
    first = decide(obs(reads=19.5, writes=80.5), rules, POLICY, mem, 0.0)
    assert first.point is not None and first.point.read_share == 0.10
    mem.last_point = first.point
    d = decide(obs(reads=20.5, writes=79.5), rules, POLICY, mem, 1000.0)
    assert d.action == "keep" and d.rule is not None and d.rule["kept_previous_point"]
    # A real move (28 %) switches.
    d = decide(obs(reads=28, writes=72), rules, POLICY, mem, 1000.0)
    assert d.action == "change" and d.target is not None
    assert d.target["compaction_window_size"] == "22"


def test_flapping_noise_changes_at_most_once() -> None:
    rules = seed003_rules()
    mem = TableMemory()
    table = obs()
    changes = 0
    for i, share in enumerate([0.18, 0.22, 0.19, 0.23, 0.17, 0.21, 0.2, 0.22]):
        d = decide(obs(window=table.compaction["compaction_window_size"],
                       min_thr=table.compaction["min_threshold"], reads=share * 100,
                       writes=100 - share * 100), rules, POLICY, mem, i * 30.0)
        if d.point is not None and d.action in ("change", "keep"):
            mem.last_point = d.point
        if d.action == "change":
            changes += 1
            mem.last_change_s = i * 30.0
            assert d.target is not None
            table = obs(window=d.target["compaction_window_size"],
                        min_thr=d.target["min_threshold"])
    assert changes <= 1


@pytest.mark.parametrize(("o", "reason"), [
    (obs(strategy="ucs"), "no ucs points in the rules"),
    (obs(ttl_s=0), "default_time_to_live is 0"),
    (obs(reads=0, writes=0), "below 0.5"),
    (obs(reads=0.1, writes=0.2), "below 0.5"),
])
def test_skips(o: TableObservation, reason: str) -> None:
    d = decide(o, seed003_rules(), POLICY, TableMemory(), 0.0)
    assert d.action == "skip" and reason in d.reason and d.target is None


def test_relative_change() -> None:
    cur = {"class": TWCS, "compaction_window_size": "10", "compaction_window_unit": "MINUTES"}
    assert relative_change("twcs", cur, {"compaction_window_size": "12"}) == pytest.approx(0.2)
    # 1 HOURS vs 10 MINUTES: 60 vs 10 minutes.
    assert relative_change("twcs", cur, {"compaction_window_size": "1",
                                         "compaction_window_unit": "HOURS"}) == pytest.approx(5)
    # min_threshold absent from the map counts from TWCS's default 4.
    assert relative_change("twcs", cur, {"min_threshold": "6"}) == pytest.approx(0.5)
    assert relative_change("twcs", cur, {"compaction_window_size": "10"}) == 0


def test_policy_rejects_negative() -> None:
    with pytest.raises(ValueError):
        Policy(min_interval_s=-1)


@pytest.mark.parametrize(("args", "named"), [
    ((300.0, float("nan"), 0.05), "--min-change: nan"),
    ((300.0, -1.0, 0.05), "--min-change: -1"),
    ((300.0, 0.2, float("nan")), "--switch-margin: nan"),
    ((float("inf"), 0.2, 0.05), "--min-interval: inf"),
])
def test_hysteresis_options_refuse_nan_inf_and_negatives(
        args: tuple[float, float, float], named: str) -> None:
    with pytest.raises(UsageError, match=named):
        Policy.of_options(*args)
    with pytest.raises(ValueError, match="not a finite number"):
        Policy(*args)
