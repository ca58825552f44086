"""Bare or ambiguous numbers in CLI options: one line naming the option and the unit to
add, a non-zero exit, and nothing started (the check runs before any lab is opened)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

PLAN = str(Path(__file__).resolve().parents[2] / "examples" / "plan-seed001.yaml")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["net", "set", "--name", "nolab", "--delay", "10"],
         "error: --delay: bare number 10 is ambiguous: add a unit, e.g. 10ms or 10s"),
        (["net", "set", "--name", "nolab", "--client-delay", "10ms,20,30ms"],
         "error: --client-delay: bare number 20 is ambiguous: add a unit, e.g. 20ms or 20s"),
        (["net", "set", "--name", "nolab", "--loss", "1"],
         "error: --loss: bare number 1 is ambiguous: add a unit, e.g. 1%"),
        (["net", "set", "--name", "nolab", "--rate", "10mbps"],
         "error: --rate: '10mbps' is ambiguous (bits or bytes?): write Mbit for bits/s or "
         "MB/s for bytes/s"),
        (["tune", "--keyspace", "iot", "--name", "nolab", "--interval", "10"],
         "error: --interval: bare number 10 is ambiguous: add a unit, e.g. 10ms or 10s"),
        (["run", "ycsb-a", "--name", "nolab", "--duration", "60"],
         "error: --duration: bare number 60 is ambiguous: add a unit, e.g. 60ms or 60s"),
        (["run", "ycsb-a", "--name", "nolab", "--warmup", "10 parsecs"],
         "error: --warmup: unknown unit 'parsecs' in '10 parsecs' (valid: us, ms, s, m, min, h)"),
        (["lab", "start", "1", "--name", "nolab", "--timeout", "NaN"],
         "error: --timeout: 'NaN' is not a duration (e.g. 10ms or 10s)"),
        (["tune", "learn", "--windows", "1,3", "--lab", "nolab"],
         "error: --windows: bare number 1 is ambiguous: add a unit, e.g. 1ms or 1s"),
        (["tune", "learn", "--ttls", "90s,1.5s", "--lab", "nolab"],
         "error: --ttls: 1.5s is not a whole number of seconds"),
        (["plan", PLAN, "--time-limit", "60"],
         "error: --time-limit: bare number 60 is ambiguous: add a unit, e.g. 60ms or 60s"),
    ],
)
def test_option_without_a_unit_is_a_one_line_error(args: list[str], message: str) -> None:
    res = casslab(*args, timeout_s=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip().splitlines() == [message]
