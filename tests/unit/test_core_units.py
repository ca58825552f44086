"""casslab.core.units against the shared table (tests/units_cases.json, also read by
casslab-load's Rust tests), plus what only Python sees: numbers from YAML."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.core.units import parse, parse_duration_s, parse_fraction, parse_rate_bit_s

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[1] / "units_cases.json").read_text())["cases"]


def _id(case: dict[str, Any]) -> str:
    return f"{case['kind']}:{case['input']!r}" + (f"@{case['bare']}" if "bare" in case else "")


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_shared_table_case(case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(UsageError) as info:
            parse(case["kind"], case["input"], "--x", bare=case.get("bare"))
        message = str(info.value)
        assert case["error"] in message
        assert message.startswith("--x: ") and "\n" not in message
    else:
        got = parse(case["kind"], case["input"], "--x", bare=case.get("bare"))
        assert math.isclose(got, case["value"], rel_tol=1e-9, abs_tol=1e-15)


def test_shared_table_covers_every_kind_with_values_and_errors() -> None:
    for kind in ("duration", "size", "rate", "percent"):
        mine = [c for c in CASES if c["kind"] == kind]
        assert any("value" in c for c in mine) and any("error" in c for c in mine)
    assert len(CASES) >= 60


def test_yaml_numbers_take_the_unit_the_field_names() -> None:
    assert parse_duration_s(250, "delay_ms", bare="ms") == 0.25
    assert parse_rate_bit_s(7.21, "rate_mbit", bare="Mbit") == pytest.approx(7.21e6)
    assert parse_fraction(0.5, "loss_pct", bare="%") == 0.005


def test_yaml_number_without_a_named_unit_is_refused() -> None:
    with pytest.raises(UsageError, match=r"interval: bare number 10 is ambiguous: add a unit"):
        parse_duration_s(10, "interval")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_yaml_nan_and_infinity_are_refused(value: float) -> None:
    with pytest.raises(UsageError, match=r"delay_ms: .* is not a finite number"):
        parse_duration_s(value, "delay_ms", bare="ms")


@pytest.mark.parametrize("value", [True, None, [1]])
def test_non_numbers_are_refused_by_name(value: Any) -> None:
    with pytest.raises(UsageError, match=r"delay_ms: .* is not a duration"):
        parse_duration_s(value, "delay_ms", bare="ms")


def test_a_fraction_may_exceed_one_when_the_caller_lifts_the_bound() -> None:
    assert parse_fraction("150%", "rate", at_most=None) == 1.5
    with pytest.raises(UsageError, match="rate: 150% is over 100%"):
        parse_fraction("150%", "rate")


def test_unknown_kind_names_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="valid: duration, size, rate, percent"):
        parse("speed", "1", "x")
