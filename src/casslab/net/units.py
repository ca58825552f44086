"""Parse values with units: durations to ms, rates to Mbit/s, percentages.

Accepts what people type (`10ms`, `1.5s`, `250us`, `7.21mbit`, `1gbit`, `750kbit`,
`0.5%`) and plain numbers in the target unit.
"""

from __future__ import annotations

import re

from casslab.net.errors import NetSpecError

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_DURATION = re.compile(rf"^{_NUM}\s*(us|µs|ms|s)?$")
_RATE = re.compile(rf"^{_NUM}\s*(kbit|mbit|gbit|kbps|mbps|gbps)?$", re.IGNORECASE)
_PCT = re.compile(rf"^{_NUM}\s*%?$")
_DURATION_MS = {"us": 0.001, "µs": 0.001, "ms": 1.0, "s": 1000.0, None: 1.0}
_RATE_MBIT = {"kbit": 0.001, "mbit": 1.0, "gbit": 1000.0, "kbps": 0.001, "mbps": 1.0,
              "gbps": 1000.0, None: 1.0}


def parse_ms(value: str | float | int, field: str) -> float:
    """A duration in milliseconds from `10ms`, `1.5s`, `250us` or a number of ms."""
    if isinstance(value, bool):
        raise NetSpecError(f"{field}: {value!r} is not a duration (e.g. 10ms, 1.5s, 250us)")
    if isinstance(value, int | float):
        out = float(value)
    else:
        m = _DURATION.match(str(value).strip())
        if not m:
            raise NetSpecError(f"{field}: '{value}' is not a duration (e.g. 10ms, 1.5s, 250us)")
        out = float(m.group(1)) * _DURATION_MS[m.group(2)]
    if out < 0 or out > 60_000:
        raise NetSpecError(f"{field}: {value} is out of range (0 ms .. 60 s)")
    return out


def parse_mbit(value: str | float | int, field: str) -> float:
    """A rate in Mbit/s from `7.21mbit`, `1gbit`, `750kbit` or a number of Mbit/s."""
    if isinstance(value, bool):
        raise NetSpecError(f"{field}: {value!r} is not a rate (e.g. 10mbit, 1gbit, 750kbit)")
    if isinstance(value, int | float):
        out = float(value)
    else:
        m = _RATE.match(str(value).strip())
        if not m:
            raise NetSpecError(f"{field}: '{value}' is not a rate (e.g. 10mbit, 1gbit, 750kbit)")
        unit = m.group(2).lower() if m.group(2) else None
        out = float(m.group(1)) * _RATE_MBIT[unit]
    if out < 0.01 or out > 10_000:
        raise NetSpecError(f"{field}: {value} is out of range (10 kbit .. 10 gbit)")
    return out


def parse_pct(value: str | float | int, field: str) -> float:
    """A percentage from `0.5%`, `0.5` (percent) or a number."""
    if isinstance(value, bool):
        raise NetSpecError(f"{field}: {value!r} is not a percentage (e.g. 1%, 0.2)")
    if isinstance(value, int | float):
        out = float(value)
    else:
        m = _PCT.match(str(value).strip())
        if not m:
            raise NetSpecError(f"{field}: '{value}' is not a percentage (e.g. 1%, 0.2)")
        out = float(m.group(1))
    if not 0 <= out <= 100:
        raise NetSpecError(f"{field}: {value} is out of range (0 .. 100 %)")
    return out


def parse_burst(value: str | float | int, field: str) -> float:
    """Mean loss burst length in packets (>= 1; 1 = independent loss)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise NetSpecError(f"{field}: '{value}' is not a number of packets (>= 1)") from None
    if not 1 <= out <= 1000:
        raise NetSpecError(f"{field}: {value} is out of range (1 .. 1000 packets)")
    return out
