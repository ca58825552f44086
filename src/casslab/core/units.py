"""One grammar for values with units: durations, sizes, data rates, percentages.

Every parser returns a float in a stated base unit:

* durations -> seconds: `250us`/`250µs`, `10ms`, `1.5s`/`1.5sec`, `5m`/`5min`, `1h`
* sizes -> bytes: `B`; DECIMAL `kB`/`KB`, `MB`, `GB`, `TB` (10^3 steps); BINARY `KiB`,
  `MiB`, `GiB`, `TiB` (2^10 steps)
* data rates -> bit/s: bits `bit`, `kbit`, `Mbit`, `Gbit` (decimal, `/s` optional, any
  case, as tc writes them); bytes `B/s`, `kB/s`, `MB/s`, `GB/s`, `KiB/s`, `MiB/s`,
  `GiB/s` (`/s` required, case as for sizes)
* percentages -> a fraction: `1%` = 0.01

`mbps`, `kbps`, `gbps`, `bps` in any case are refused: people write them for both
megabits (links) and megabytes (disks), so the error names `Mbit` and `MB/s` instead.

A bare number is refused ("add a unit, e.g. 10ms") unless the caller names its unit
with `bare=` (a spec field whose name carries the unit, such as `delay_ms` or
`rate_mbit`). NaN, infinities and negative values are refused everywhere.

crates/load/src/units.rs implements the same grammar; tests/units_cases.json is the
one table of cases both are tested against.
"""

from __future__ import annotations

import math
import re

from casslab.core.errors import UsageError

# Sign kept in the grammar so "-5ms" gets "negative", not "not a duration".
_NUMBER = re.compile(r"\s*([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(.*?)\s*")

DURATION_S: dict[str, float] = {
    "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0,
    "h": 3600.0,
}
SIZE_BYTES: dict[str, float] = {
    "B": 1.0, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40,
}
# Bit units are matched case-insensitively (tc's `mbit`); byte units exactly (B vs b).
_BIT_RATE: dict[str, float] = {"bit": 1.0, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
PERCENT: dict[str, float] = {"%": 0.01}
_AMBIGUOUS_RATES = {"bps": ("bit", "B/s"), "kbps": ("kbit", "kB/s"),
                    "mbps": ("Mbit", "MB/s"), "gbps": ("Gbit", "GB/s")}

_KINDS = {"duration": "a duration", "size": "a size", "rate": "a data rate",
          "percent": "a percentage"}
_HINTS = {"duration": ("ms", "s"), "size": ("MiB", "MB"), "rate": ("Mbit", "MB/s"),
          "percent": ("%",)}
_EXAMPLES = {"duration": "10ms or 10s", "size": "10MiB or 10MB", "rate": "10Mbit or 10MB/s",
             "percent": "10%"}
_VALID = {
    "duration": "us, ms, s, m, min, h",
    "size": "B, kB, MB, GB, TB (10^3) or KiB, MiB, GiB, TiB (2^10)",
    "rate": "bit, kbit, Mbit, Gbit (/s optional) or B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s",
    "percent": "%",
}


def parse_duration_s(value: str | float, field: str, *, bare: str | None = None) -> float:
    """Seconds from `10ms`, `1.5s`, `2m`, ...; `bare` is the unit of a bare number.

    Raises UsageError naming `field` and the value (unknown unit, bare number without
    `bare`, NaN, infinite, negative).
    """
    return _parse(value, field, "duration", bare)


def parse_size_bytes(value: str | float, field: str, *, bare: str | None = None) -> float:
    """Bytes from `512B`, `10MB` (10^6), `10MiB` (2^20), ...; raises UsageError."""
    return _parse(value, field, "size", bare)


def parse_rate_bit_s(value: str | float, field: str, *, bare: str | None = None) -> float:
    """Bit/s from `10Mbit`, `10mbit/s`, `25MB/s` (x 8), ...; raises UsageError.

    `mbps` and its kin are refused as ambiguous (megabits or megabytes).
    """
    return _parse(value, field, "rate", bare)


def parse_fraction(value: str | float, field: str, *, bare: str | None = None,
                   at_most: float | None = 1.0) -> float:
    """A fraction from a percentage `1%` -> 0.01, at most `at_most` (default 100 %; None:
    no upper bound, e.g. a rate relative to a measured peak); raises UsageError."""
    out = _parse(value, field, "percent", bare)
    if at_most is not None and out > at_most:
        raise UsageError(f"{field}: {_show(value)} is over {100 * at_most:g}%")
    return out


def parse(kind: str, value: str | float, field: str, *, bare: str | None = None) -> float:
    """The parser of `kind` (duration, size, rate, percent) by name; for tables of cases."""
    if kind not in _KINDS:
        raise UsageError(f"unknown kind of value '{kind}' (valid: {', '.join(_KINDS)})")
    if kind == "percent":
        return parse_fraction(value, field, bare=bare)
    return _parse(value, field, kind, bare)


def _scale(kind: str, unit: str) -> float | None:
    """Base units per `unit`, or None when `unit` is not one of kind's units."""
    if kind == "duration":
        return DURATION_S.get(unit)
    if kind == "size":
        return SIZE_BYTES.get(unit)
    if kind == "percent":
        return PERCENT.get(unit)
    per_s = unit[:-2] if unit.endswith("/s") else None
    if per_s is not None and per_s in SIZE_BYTES:
        return SIZE_BYTES[per_s] * 8
    return _BIT_RATE.get((per_s if per_s is not None else unit).lower())


def _show(value: str | float) -> str:
    return value.strip() if isinstance(value, str) else f"{value:g}"


def _parse(value: str | float, field: str, kind: str, bare: str | None) -> float:
    what = _KINDS[kind]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UsageError(f"{field}: {value!r} is not {what} (e.g. {_EXAMPLES[kind]})")
    if isinstance(value, str):
        m = _NUMBER.fullmatch(value)
        if not m:
            raise UsageError(f"{field}: '{value.strip()}' is not {what} (e.g. {_EXAMPLES[kind]})")
        num, unit = m.group(1), m.group(2)
    else:
        num, unit = _show(value), ""
    number = float(num)
    if not math.isfinite(number):
        raise UsageError(f"{field}: {_show(value)} is not a finite number")
    if number < 0:
        raise UsageError(f"{field}: {_show(value)} is negative")
    if unit == "":
        if bare is None:
            hint = " or ".join(num + u for u in _HINTS[kind])
            raise UsageError(f"{field}: bare number {num} is ambiguous: add a unit, e.g. {hint}")
        unit = bare
    if kind == "rate" and unit.lower().removesuffix("/s") in _AMBIGUOUS_RATES:
        bits, bytes_ = _AMBIGUOUS_RATES[unit.lower().removesuffix("/s")]
        raise UsageError(f"{field}: '{_show(value)}' is ambiguous (bits or bytes?): write "
                         f"{bits} for bits/s or {bytes_} for bytes/s")
    scale = _scale(kind, unit)
    if scale is None:
        raise UsageError(f"{field}: unknown unit '{unit}' in '{_show(value)}' "
                         f"(valid: {_VALID[kind]})")
    out = number * scale
    if not math.isfinite(out):
        raise UsageError(f"{field}: {_show(value)} is not a finite number")
    return out
