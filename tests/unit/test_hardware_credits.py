"""The T2 CPU credit model against figures worked out by hand from AWS's table."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import ProfileError, UsageError
from casslab.hardware.credits import (
    T2_CREDITS,
    CreditBalance,
    NodeCredits,
    credit_spec,
    initial_balance,
    keeps_bursting,
    quota_cores,
    read_balance_file,
    step,
    time_scale_from_env,
    write_balance_file,
)
from casslab.hardware.profiles import BUILTIN_PROFILES, load_profiles_file

MICRO = T2_CREDITS["t2.micro"]
MEDIUM = T2_CREDITS["t2.medium"]


def test_the_table_earns_its_own_baseline_per_hour() -> None:
    # One credit is one vCPU-minute: earning N credits/h pays for N/60 vCPU all the time.
    for spec in T2_CREDITS.values():
        assert spec.credits_per_hour / 60 == pytest.approx(spec.baseline_vcpus)
        assert spec.max_earned == 24 * spec.credits_per_hour


def test_launch_credits_are_30_per_vcpu() -> None:
    assert initial_balance(MICRO) == CreditBalance(30.0, 0.0)
    assert initial_balance(MEDIUM).total == 60.0


def test_a_micro_at_full_load_runs_out_of_launch_credits_after_33_minutes() -> None:
    # Spends 1 credit/min, earns 0.1/min: 30 / 0.9 = 33.3 minutes.
    b = initial_balance(MICRO)
    minutes = 0
    while b.total > 0:
        b = step(MICRO, b, used_vcpu_s=60.0, dt_s=60.0)
        minutes += 1
    assert minutes == 34


def test_launch_credits_are_spent_before_earned_ones() -> None:
    b = step(MICRO, CreditBalance(10.0, 5.0), used_vcpu_s=60.0 * 4, dt_s=0.0)
    assert b == CreditBalance(6.0, 5.0)


def test_an_idle_micro_earns_6_credits_an_hour_up_to_144() -> None:
    b = step(MICRO, CreditBalance(0.0, 0.0), used_vcpu_s=0.0, dt_s=3600.0)
    assert b.earned == pytest.approx(6.0)
    b = step(MICRO, b, used_vcpu_s=0.0, dt_s=100 * 3600.0)
    assert b.earned == 144.0


def test_launch_credits_do_not_count_towards_the_cap() -> None:
    b = step(MICRO, CreditBalance(30.0, 144.0), used_vcpu_s=0.0, dt_s=3600.0)
    assert b.total == 174.0


def test_use_at_the_baseline_keeps_the_balance() -> None:
    b = step(MEDIUM, CreditBalance(0.0, 50.0), used_vcpu_s=0.4 * 3600, dt_s=3600.0)
    assert b.earned == pytest.approx(50.0)


def test_the_balance_never_goes_below_zero() -> None:
    assert step(MICRO, CreditBalance(0.0, 0.5), used_vcpu_s=600.0, dt_s=1.0).total == 0.0


def test_a_negative_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="dt_s"):
        step(MICRO, initial_balance(MICRO), used_vcpu_s=0.0, dt_s=-1.0)


def test_bursting_stops_at_zero_and_resumes_once_a_tick_is_paid_for() -> None:
    assert not keeps_bursting(MICRO, CreditBalance(0.0, 0.0), True, tick_s=1.0)
    assert keeps_bursting(MICRO, CreditBalance(0.0, 0.001), True, tick_s=1.0)
    # Held to baseline: one second at 1 vCPU costs 1/60 credit.
    assert not keeps_bursting(MICRO, CreditBalance(0.0, 0.01), False, tick_s=1.0)
    assert keeps_bursting(MICRO, CreditBalance(0.0, 1 / 60), False, tick_s=1.0)


def test_the_baseline_quota_is_the_same_share_of_the_profile_cores() -> None:
    assert quota_cores(MICRO, 1.0, bursting=True) == 1.0
    assert quota_cores(MICRO, 1.0, bursting=False) == pytest.approx(0.1)
    # t2.medium: 2 vCPUs at 20 % each = 0.4 of its 2 cores here.
    assert quota_cores(MEDIUM, 2.0, bursting=False) == pytest.approx(0.4)


def test_t2_profiles_are_burstable_and_their_types_known() -> None:
    for name in ("t2.micro", "t2.small", "t2.medium"):
        profile = BUILTIN_PROFILES[name]
        assert profile.burst == name
        assert profile.cpu_cores == credit_spec(name).vcpus
    assert BUILTIN_PROFILES["rpi3"].burst is None


def test_an_unknown_instance_type_names_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"'t2.huge' \(valid: t2.micro, t2.small, t2.medium\)"):
        credit_spec("t2.huge")


def test_time_scale_comes_from_the_environment() -> None:
    assert time_scale_from_env({}) == 1.0
    assert time_scale_from_env({"CASSLAB_CREDIT_TIME_SCALE": "60"}) == 60.0
    assert time_scale_from_env({"CASSLAB_CREDIT_TIME_SCALE": "1"}) == 1.0
    for bad in ("0", "-2", "fast", "1e9", "1e-9", "0.5", "nan"):
        with pytest.raises(UsageError,
                           match=r"CASSLAB_CREDIT_TIME_SCALE=.*must be a number from 1 to 10000"):
            time_scale_from_env({"CASSLAB_CREDIT_TIME_SCALE": bad})


def test_the_balance_file_round_trips_and_a_missing_one_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "credits.json"
    assert read_balance_file(path) == {}
    rows = [NodeCredits("node1", "t2.micro", 12.5, True, 1.0)]
    write_balance_file(path, rows, t_s=3.0)
    assert read_balance_file(path) == {"node1": rows[0]}
    path.write_text("{not json")
    assert read_balance_file(path) == {}


def test_a_user_profile_may_be_burstable_or_inherit_it(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("mine: {cpu_cores: 0.5, burst: t2.small}\nfixed: {base: t2.micro, "
                    "burst: null}\nlike: {base: t2.medium}\n")
    got = load_profiles_file(path)
    assert (got["mine"].burst, got["fixed"].burst, got["like"].burst) == (
        "t2.small", None, "t2.medium")
    path.write_text("bad: {burst: t3.micro}\n")
    with pytest.raises(ProfileError, match=r"bad\.burst: 't3\.micro' is not a valid burstable"):
        load_profiles_file(path)
