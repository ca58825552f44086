"""`reference` of an experiment spec: a study's published numbers and findings.

Validated here, at the experiment layer, so a bad entry fails when the spec is read (one
line: file:line, the field, what is valid); casslab.analysis.findings gives each finding
its verdict and casslab.report sets the numbers beside the lab's.

    reference:
      study: Richardson 2017, AFIT thesis         # optional, shown in the report
      alpha: 0.05                                 # optional, the findings' level
      values:                                     # the paper's numbers
        - {response: runtime_s, at: {nodes: 3, workload: ycsb-a}, value: 65650,
           unit: ms, source: "Table 3, p. 26", note: "10,000 operations"}
      findings:                                   # what the paper concluded
        - {claim: Wi-Fi is slower, response: runtime_s, factor: network,
           from: ethernet-100, to: wifi, expect: higher, where: {nodes: 3},
           source: "Figs 19-22"}

A value's `at` names levels of some factors (a cell when it names every varied one, else
the trials of every matching cell); its `unit` is the response's or one convertible to
it (ms for s, kB/s for KiB/s, % for any percentage). A finding compares the response at
level `to` against level `from` of `factor` (both default to the factor's first and last
level when it has exactly two), within the cells that match `where`; `expect: ratio`
with `ratio: R` says the response at `to` is R times that at `from` (Table 3's 65650 /
58430 = 1.12 for 3 nodes against 1). `expect: slope` with `slope: S` (and `tolerance:
T`, default 10 % of |S|) says the response changes by S per unit of a numeric factor:
the lab's least-squares slope over the levels from `from` to `to` (default all), with
its confidence interval, decides it. A ratio (expected, or implied by the reference's
values at `to` and `from` for higher/lower) holds within `tolerance` (a fraction of the
ratio, default 0.1); for higher/lower that band ends at no effect (a claimed +4.5 % at
0.1 would otherwise reach from -6 % to +15 %), and a small claimed change wants a
tolerance of its own (0.02: +4.5 % within +2.4 to +6.6 %). `expect: no difference`
with `tolerance: T` is an equivalence test:
it holds when the whole interval of the ratio lies within 1 +- T, fails when it lies
outside; without a tolerance any difference the interval shows fails it, and an
interval within what the lab can detect is "smaller than this lab can detect".
`scale: difference` (with higher, lower or no difference) reads the effect as to - from
in the response's unit, not as a ratio: for a response near 0 (a read load's disk
writes, one or two pages a trial), where the ratio of two small counts bounds nothing.
Its `tolerance` (no difference) is then in the response's unit, and `detect: D` declares
before the run the smallest difference worth finding (the bound of "smaller than this
lab can detect"; without it, what the design detects).

Patterns over three or more levels of a numeric factor (from `from` to `to`, default
all): `expect: increasing` or `decreasing` (a trend; `growth: 0.08` is the paper's +8 %
per unit, else the reference's values at those levels imply it, else the direction
alone is tested) and `expect: alternation` with `higher_at: even | odd` (the response is
higher at even, or odd, levels than the trend through all of them: Richardson's "1, 3
and 5 node clusters outperform 2, 4 and 6" is `higher_at: even` for run time).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from casslab.core import specio
from casslab.core.specio import Path_
from casslab.experiment import scales
from casslab.experiment.figures import DesignFactor
from casslab.store.responses import parse_response

REFERENCE_KEYS = ("study", "alpha", "values", "findings")
VALUE_KEYS = ("response", "at", "value", "unit", "source", "note")
FINDING_KEYS = ("claim", "response", "factor", "from", "to", "expect", "ratio", "slope",
                "growth", "higher_at", "tolerance", "where", "test", "source", "scale",
                "detect")
# How a `from`/`to` finding reads its effect: the ratio to / from (the default), or the
# difference to - from in the response's unit (for a response near 0)
SCALES = ("ratio", "difference")
DIFFERENCE_EXPECTS = ("higher", "lower", "no difference")
# Patterns over three or more levels of a numeric factor (casslab.analysis.patterns)
TRENDS = ("increasing", "decreasing")
ALTERNATION = "alternation"
PATTERNS = (*TRENDS, ALTERNATION)
EXPECTS = ("higher", "lower", "no difference", "ratio", "slope", *PATTERNS)
PARITIES = ("even", "odd")
MIN_PATTERN_LEVELS = 3
TESTS = ("welch", "mann-whitney")
MAX_ENTRIES = 1000
# unit -> (family, how many of the family's base unit one is)
_UNITS: dict[str, tuple[str, float]] = {
    "s": ("time", 1.0), "ms": ("time", 1e-3), "us": ("time", 1e-6), "min": ("time", 60.0),
    "ops/s": ("rate", 1.0), "KiB/s": ("bytes/s", 1024.0), "kB/s": ("bytes/s", 1000.0),
    "MiB/s": ("bytes/s", 1024.0 ** 2), "MB/s": ("bytes/s", 1e6),
    "MiB": ("bytes", 1024.0 ** 2), "MB": ("bytes", 1e6), "GB": ("bytes", 1e9),
    "GiB": ("bytes", 1024.0 ** 3)}


@dataclass(frozen=True)
class RefValue:
    """One published number. `at`: factor -> level (the campaign's own level values);
    `value` converted to the response's unit (`paper_value` as printed)."""

    response: str
    at: dict[str, Any]
    value: float
    paper_value: float
    unit: str  # as the paper gives it
    source: str
    note: str = ""


@dataclass(frozen=True)
class Finding:
    """The paper says: `response` at level `to` of `factor` is `expect` than at `from`
    (within the cells matching `where`: factor -> allowed levels)."""

    claim: str
    response: str
    factor: str
    low: Any  # the `from` level
    high: Any  # the `to` level
    expect: str
    where: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    test: str = "welch"
    source: str = ""
    ratio: float = math.nan  # expect == "ratio": the paper's `to` / `from`
    # expect == "slope": the paper's response per unit of the (numeric) factor, and how
    # far from it the lab's may be (same unit)
    slope: float = math.nan
    tolerance: float = math.nan
    # expect increasing/decreasing: the paper's change per unit of the factor, a
    # fraction (0.08 = +8 % per node); NaN: implied by the reference's values, or none
    growth: float = math.nan
    higher_at: str = ""  # expect alternation: "even" or "odd", the levels that are higher
    # "difference": the effect is to - from in the response's unit (tolerance too)
    scale: str = "ratio"
    # scale difference: the smallest difference worth finding, declared before the run
    # (response unit; NaN: what the design detects), the bound of "smaller than this
    # lab can detect"
    detect: float = math.nan

    @property
    def difference(self) -> bool:
        return self.scale == "difference"

    @property
    def pattern(self) -> bool:
        """A pattern over three or more levels (a trend or an alternation), not a
        comparison of `from` with `to`."""
        return self.expect in PATTERNS


@dataclass(frozen=True)
class Reference:
    study: str = ""
    alpha: float = 0.05
    values: tuple[RefValue, ...] = ()
    findings: tuple[Finding, ...] = ()
    # Entries naming a level this (scaled) design does not have: not compared, counted.
    absent: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.values and not self.findings


def label(level: Any) -> str:
    """A level as the report prints it (2.0 -> "2")."""
    if isinstance(level, float) and level.is_integer():
        return str(int(level))
    return str(level)


def unit_factor(paper_unit: str, response_unit: str) -> float | None:
    """What one `paper_unit` is in `response_unit`; None when they do not convert."""
    if paper_unit == response_unit:
        return 1.0
    if paper_unit == "%" and response_unit.startswith("%"):
        return 1.0  # the paper's percentage, read as the response's (a note says which)
    a, b = _UNITS.get(paper_unit), _UNITS.get(response_unit)
    if a is None or b is None or a[0] != b[0]:
        return None
    return a[1] / b[1]


def _units_for(response_unit: str) -> list[str]:
    out = [response_unit] if response_unit else []
    out += ["%"] if response_unit.startswith("%") else []
    out += [u for u in _UNITS if u != response_unit and unit_factor(u, response_unit)]
    return out


def _response_unit(name: str) -> str:
    try:
        return parse_response(name).unit
    except ValueError:
        return ""


class _Absent(Exception):
    """A level the design (at this scale) does not have, where that is allowed."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


def parse_reference(v: specio.V, raw: Any, factors: Sequence[DesignFactor],
                    responses: Sequence[str], *, strict: bool = True) -> Reference:
    """The spec's `reference` block (an empty Reference when there is none). Raises the
    doc's error naming the field and what is valid.

    strict=False (a scaled spec, a stored campaign that may have run scaled): an entry
    naming a level the design does not have is left out and listed in `absent`, since a
    smaller size drops levels the paper's numbers are about.
    """
    m = v.mapping(raw, ("reference",), REFERENCE_KEYS)
    study = v.string(m["study"], ("reference", "study")) if "study" in m else ""
    alpha = v.number(m.get("alpha", 0.05), ("reference", "alpha"), 0.0, 0.5, lo_open=True)
    absent: list[str] = []
    values: list[RefValue] = []
    findings: list[Finding] = []
    for item, path in _items(v, m, "values"):
        try:
            values.append(_value(v, item, path, factors, responses, strict))
        except _Absent as exc:
            absent.append(exc.where)
    for item, path in _items(v, m, "findings"):
        try:
            findings.append(_finding(v, item, path, factors, responses, strict))
        except _Absent as exc:
            absent.append(exc.where)
    return Reference(study, alpha, tuple(values), tuple(findings), tuple(absent))


def _items(v: specio.V, m: Mapping[str, Any], key: str) -> list[tuple[Any, Path_]]:
    items = m.get(key)
    if items is None:
        return []
    path: Path_ = ("reference", key)
    if not isinstance(items, list) or not items or len(items) > MAX_ENTRIES:
        raise v.doc.error(path, f"must be a list of 1-{MAX_ENTRIES} mappings (keys: "
                          f"{', '.join(VALUE_KEYS if key == 'values' else FINDING_KEYS)})")
    return [(item, (*path, i)) for i, item in enumerate(items)]


def _response(v: specio.V, m: Mapping[str, Any], path: Path_,
              responses: Sequence[str]) -> str:
    return v.choice(m.get("response", responses[0]), (*path, "response"), list(responses),
                    "response (one of analysis.responses)")


def _level(v: specio.V, value: Any, path: Path_, f: DesignFactor, strict: bool) -> Any:
    """The factor's own level that `value` names (1 and 1.0 name the same level)."""
    for lv in f.levels:
        if lv == value or label(lv) == label(value):
            return lv
    if not strict:
        raise _Absent(f"{specio.fmt_path(path[:3])} ({f.name}={label(value)})")
    raise v.doc.error(path, f"{value!r} is not a level of factor {f.name} (valid: "
                      f"{', '.join(label(lv) for lv in f.levels)})")


def _factor(v: specio.V, name: Any, path: Path_,
            factors: Sequence[DesignFactor]) -> DesignFactor:
    v.choice(name, path, [f.name for f in factors] or ["(no factors declared)"], "factor")
    return next(f for f in factors if f.name == name)


def _at(v: specio.V, raw: Any, path: Path_, factors: Sequence[DesignFactor],
        strict: bool) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise v.doc.error(path, "must be a mapping of factor -> level (e.g. {nodes: 3})")
    return {name: _level(v, value, (*path, name), _factor(v, name, (*path, name), factors),
                         strict) for name, value in raw.items()}


def _value(v: specio.V, item: Any, path: Path_, factors: Sequence[DesignFactor],
           responses: Sequence[str], strict: bool) -> RefValue:
    m = v.mapping(item, path, VALUE_KEYS)
    for key in ("value", "unit", "source"):
        if key not in m:
            raise v.doc.error((*path, key), f"is required (keys: {', '.join(VALUE_KEYS)})")
    response = _response(v, m, path, responses)
    at = _at(v, m.get("at"), (*path, "at"), factors, strict)
    value = v.number(m["value"], (*path, "value"), 0.0)
    unit = v.string(m["unit"], (*path, "unit"))
    runit = _response_unit(response)
    scale = unit_factor(unit, runit)
    if scale is None:
        raise v.doc.error((*path, "unit"), f"{unit!r} does not convert to {response}'s unit "
                          f"{runit!r} (valid: {', '.join(_units_for(runit)) or repr(runit)})")
    note = v.string(m["note"], (*path, "note")) if "note" in m else ""
    return RefValue(response, at, value * scale, value, unit,
                    v.string(m["source"], (*path, "source")), note)


def _where(v: specio.V, raw: Any, path: Path_, factors: Sequence[DesignFactor],
           factor: str, strict: bool) -> dict[str, tuple[Any, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise v.doc.error(path, "must be a mapping of factor -> level or list of levels "
                          "(e.g. {nodes: 3} or {workload: [ycsb-a, ycsb-c]})")
    out: dict[str, tuple[Any, ...]] = {}
    for name, value in raw.items():
        f = _factor(v, name, (*path, name), factors)
        if name == factor:
            raise v.doc.error((*path, name), f"{name} is the finding's factor (valid: the "
                              "other factors)")
        levels = value if isinstance(value, list) else [value]
        if not levels:
            raise v.doc.error((*path, name), "must name at least one level")
        out[name] = tuple(_level(v, lv, (*path, name), f, strict) for lv in levels)
    return out


def _finding(v: specio.V, item: Any, path: Path_, factors: Sequence[DesignFactor],
             responses: Sequence[str], strict: bool) -> Finding:
    m = v.mapping(item, path, FINDING_KEYS)
    if "factor" not in m:
        raise v.doc.error((*path, "factor"), "is required (valid: "
                          f"{', '.join(f.name for f in factors) or 'declare factors first'})")
    f = _factor(v, m["factor"], (*path, "factor"), factors)
    if len(f.levels) < 2:
        if not strict:  # a scaled design that keeps one level
            raise _Absent(f"{specio.fmt_path(path)} ({f.name} has one level)")
        raise v.doc.error((*path, "factor"), f"{f.name} has one level: nothing to compare "
                          "(valid: a factor with two or more levels)")
    expect = v.choice(m.get("expect"), (*path, "expect"), EXPECTS, "expectation")
    scale = v.choice(m.get("scale", "ratio"), (*path, "scale"), SCALES, "scale")
    if scale == "difference" and expect not in DIFFERENCE_EXPECTS:
        raise v.doc.error((*path, "scale"), f"difference is not for `expect: {expect}` "
                          f"(valid with it: {', '.join(DIFFERENCE_EXPECTS)})")
    if "detect" in m and scale != "difference":
        raise v.doc.error((*path, "detect"), "is for `scale: difference` (a ratio's margin is "
                          "design.detect)")
    if expect == "slope":
        return _slope_finding(v, m, path, f, factors, responses, strict)
    if expect in PATTERNS:
        return _pattern_finding(v, m, path, f, expect, factors, responses, strict)
    for key, only in (("slope", "`expect: slope`"), ("growth", "`expect: increasing` or "
                      "`decreasing`"), ("higher_at", "`expect: alternation`")):
        if key in m:
            raise v.doc.error((*path, key), f"is only for {only}")
    tolerance = math.nan
    if "tolerance" in m and scale == "difference":
        if expect != "no difference":
            raise v.doc.error((*path, "tolerance"), "is for `expect: no difference` with "
                              "`scale: difference` (the equivalence margin; a difference "
                              "finding tests a direction)")
        tolerance = v.number(m["tolerance"], (*path, "tolerance"), 0.0, lo_open=True)
    elif "tolerance" in m:
        # a ratio's tolerance is relative: 0.1 = within 10 % of the paper's ratio; for
        # "no difference" it is the equivalence margin: the ratio within 1 +- 0.1
        tolerance = v.number(m["tolerance"], (*path, "tolerance"), 0.0, 1.0, lo_open=True)
    detect = (v.number(m["detect"], (*path, "detect"), 0.0, lo_open=True) if "detect" in m
              else math.nan)
    if len(f.levels) > 2 and not ("from" in m and "to" in m):
        raise v.doc.error(path, f"{f.name} has {len(f.levels)} levels: give `from` and `to` "
                          f"(valid: {', '.join(label(lv) for lv in f.levels)})")
    low = _level(v, m.get("from", f.levels[0]), (*path, "from"), f, strict)
    high = _level(v, m.get("to", f.levels[-1]), (*path, "to"), f, strict)
    if label(low) == label(high):
        raise v.doc.error((*path, "to"), f"{label(high)!r} is also `from` (valid: another "
                          "level)")
    ratio = math.nan
    if expect == "ratio":
        if "ratio" not in m:
            raise v.doc.error((*path, "ratio"), "is required with `expect: ratio` (valid: "
                              "the paper's value at `to` / its value at `from`, > 0, not 1)")
        ratio = v.number(m["ratio"], (*path, "ratio"), 0.0, lo_open=True)
        if ratio == 1.0:
            raise v.doc.error((*path, "ratio"), "1 says no difference (valid: `expect: no "
                              "difference`, or a ratio other than 1)")
    elif "ratio" in m:
        raise v.doc.error((*path, "ratio"), "is only for `expect: ratio`")
    response = _response(v, m, path, responses)
    what = {"no difference": "no different at", "ratio": f"{ratio:g} times as high at"
            }.get(expect, f"{expect} at")
    claim = (v.string(m["claim"], (*path, "claim")) if "claim" in m else
             f"{response} {what} {f.name}={label(high)} than at {label(low)}")
    return Finding(claim, response, f.name, low, high, expect,
                   _where(v, m.get("where"), (*path, "where"), factors, f.name, strict),
                   v.choice(m.get("test", "welch"), (*path, "test"), TESTS, "test"),
                   v.string(m["source"], (*path, "source")) if "source" in m else "", ratio,
                   tolerance=tolerance, scale=scale, detect=detect)


def level_number(level: Any) -> float:
    """A numeric or percentage level as a number ("66%" -> 66.0)."""
    return float(str(level).strip().rstrip("%"))


def _slope_finding(v: specio.V, m: dict[str, Any], path: Path_, f: DesignFactor,
                   factors: Sequence[DesignFactor], responses: Sequence[str],
                   strict: bool) -> Finding:
    """`expect: slope`: the response changes by `slope` per unit of `factor` (a numeric
    factor), within `tolerance` (default 10 % of |slope|); `from`/`to` bound the levels
    the line is fitted over (default: all)."""
    if not f.numeric:
        numeric = [x.name for x in factors if x.numeric and x.varied]
        raise v.doc.error((*path, "factor"), f"{f.name} has levels that are not numbers "
                          f"(valid for a slope: {', '.join(numeric) or 'none in this design'})")
    for key, why in (("ratio", "is only for `expect: ratio`"),
                     ("growth", "is only for `expect: increasing` or `decreasing`"),
                     ("higher_at", "is only for `expect: alternation`"),
                     ("test", "a slope is fitted by least squares (valid: no `test`)")):
        if key in m:
            raise v.doc.error((*path, key), why)
    if "slope" not in m:
        raise v.doc.error((*path, "slope"), "is required with `expect: slope` (valid: the "
                          "paper's response per unit of the factor, a number)")
    slope = v.number(m["slope"], (*path, "slope"), -math.inf)
    tolerance = (v.number(m["tolerance"], (*path, "tolerance"), 0.0) if "tolerance" in m
                 else abs(slope) * 0.1)
    if tolerance == 0.0 and "tolerance" not in m:
        raise v.doc.error((*path, "tolerance"), "is required when the slope is 0 (valid: "
                          "how far from 0 the lab's slope may be, > 0)")
    low = _level(v, m.get("from", min(f.levels, key=level_number)), (*path, "from"), f, strict)
    high = _level(v, m.get("to", max(f.levels, key=level_number)), (*path, "to"), f, strict)
    if level_number(low) >= level_number(high):
        raise v.doc.error((*path, "to"), f"{label(high)!r} is not above `from` "
                          f"{label(low)!r} (valid: a higher level)")
    response = _response(v, m, path, responses)
    claim = (v.string(m["claim"], (*path, "claim")) if "claim" in m else
             f"{response} changes by {slope:g} per unit of {f.name}")
    return Finding(claim, response, f.name, low, high, "slope",
                   _where(v, m.get("where"), (*path, "where"), factors, f.name, strict),
                   "ols", v.string(m["source"], (*path, "source")) if "source" in m else "",
                   slope=slope, tolerance=tolerance)


def _pattern_finding(v: specio.V, m: dict[str, Any], path: Path_, f: DesignFactor,
                     expect: str, factors: Sequence[DesignFactor], responses: Sequence[str],
                     strict: bool) -> Finding:
    """`expect: increasing | decreasing` (a trend: the log of the response grows, or
    falls, steadily with a numeric factor; `growth` is the paper's change per unit) and
    `expect: alternation` (`higher_at: even | odd`: the response at even, or odd,
    levels of an integer factor is higher than the trend through all of them) over the
    factor's levels from `from` to `to` (default all), three or more of them."""
    if not f.numeric:
        numeric = [x.name for x in factors if x.numeric and x.varied]
        raise v.doc.error((*path, "factor"), f"{f.name} has levels that are not numbers "
                          f"(valid for `expect: {expect}`: "
                          f"{', '.join(numeric) or 'none in this design'})")
    wrong = (("ratio", "is only for `expect: ratio`"), ("slope", "is only for `expect: slope`"),
             ("test", f"`expect: {expect}` is fitted by least squares on logs (valid: no "
                      "`test`)"),
             *((("higher_at", "is only for `expect: alternation`"),) if expect in TRENDS
               else (("growth", "is only for `expect: increasing` or `decreasing`"),
                     ("tolerance", "is for a size, and the paper gives an alternation none "
                                   "(valid: no `tolerance`)"))))
    for key, why in wrong:
        if key in m:
            raise v.doc.error((*path, key), why)
    low = _level(v, m.get("from", min(f.levels, key=level_number)), (*path, "from"), f, strict)
    high = _level(v, m.get("to", max(f.levels, key=level_number)), (*path, "to"), f, strict)
    if level_number(low) >= level_number(high):
        raise v.doc.error((*path, "to"), f"{label(high)!r} is not above `from` "
                          f"{label(low)!r} (valid: a higher level)")
    span = [lv for lv in f.levels
            if level_number(low) <= level_number(lv) <= level_number(high)]
    if len(span) < MIN_PATTERN_LEVELS:
        if not strict:  # a scaled design that keeps fewer levels
            raise _Absent(f"{specio.fmt_path(path)} ({f.name} has {len(span)} levels "
                          f"from {label(low)} to {label(high)})")
        raise v.doc.error((*path, "factor"), f"{f.name} has {len(span)} levels from "
                          f"{label(low)} to {label(high)}: `expect: {expect}` is a pattern "
                          f"over >= {MIN_PATTERN_LEVELS} (valid: a factor, or `from`/`to`, "
                          f"spanning {MIN_PATTERN_LEVELS} or more levels)")
    response = _response(v, m, path, responses)
    where = _where(v, m.get("where"), (*path, "where"), factors, f.name, strict)
    source = v.string(m["source"], (*path, "source")) if "source" in m else ""
    if expect == ALTERNATION:
        higher_at = v.choice(m.get("higher_at"), (*path, "higher_at"), PARITIES,
                             "parity (the levels at which the response is higher)")
        numbers = [level_number(lv) for lv in span]
        if not all(x.is_integer() for x in numbers) or len({x % 2 for x in numbers}) < 2:
            raise v.doc.error((*path, "factor"), f"{f.name}'s levels from {label(low)} to "
                              f"{label(high)} are not whole numbers of both parities (valid: "
                              "integer levels, odd and even, e.g. nodes 1..6)")
        claim = (v.string(m["claim"], (*path, "claim")) if "claim" in m else
                 f"{response} higher at {higher_at} {f.name} than the trend through all")
        return Finding(claim, response, f.name, low, high, expect, where, "ols", source,
                       higher_at=higher_at)
    growth = math.nan
    if "growth" in m:
        growth = v.number(m["growth"], (*path, "growth"), -1.0, lo_open=True)
        if growth == 0.0 or (growth > 0) != (expect == "increasing"):
            raise v.doc.error((*path, "growth"), f"{growth:g} does not say {expect} (valid: "
                              + ("> 0" if expect == "increasing" else "between -1 and 0")
                              + ", the change per unit of the factor as a fraction)")
    tolerance = (v.number(m["tolerance"], (*path, "tolerance"), 0.0, 1.0, lo_open=True)
                 if "tolerance" in m else math.nan)
    claim = (v.string(m["claim"], (*path, "claim")) if "claim" in m else
             f"{response} {expect} with {f.name}"
             + (f" by {100 * growth:+.3g} % per unit" if not math.isnan(growth) else ""))
    return Finding(claim, response, f.name, low, high, expect, where, "ols", source,
                   tolerance=tolerance, growth=growth)


def read_reference(text: str, source: str, factors: Sequence[DesignFactor],
                   responses: Sequence[str], digest: str = "") -> Reference:
    """The `reference` block of spec `text` (only it is read: the report reads the spec
    stored with a campaign, whose files may not be here). `digest`: the campaign's
    stored spec digest, which names the scale it ran at; that scale's overrides (a
    paper size's own `reference.values` or `reference.findings`) apply."""
    doc = scales.stored_doc(text, digest, source)
    root = doc.root if isinstance(doc.root, dict) else {}
    return parse_reference(specio.V(doc), root.get("reference"), factors, responses,
                           strict=False)


def reference_schema() -> specio.JsonSchema:
    """`reference` as JSON Schema (parse_reference stays the authority)."""
    levels = specio.schema_map({}, "factor -> level")
    value = specio.schema_object({
        "response": {"type": "string"}, "at": levels, "value": {"type": "number"},
        "unit": {"type": "string", "description": "the response's unit or one convertible "
                 "to it: " + ", ".join(_UNITS) + ", %"},
        "source": {"type": "string", "description": "table/figure and page"},
        "note": {"type": "string"}}, required=("value", "unit", "source"))
    finding = specio.schema_object({
        "claim": {"type": "string"}, "response": {"type": "string"},
        "factor": {"type": "string"}, "from": {}, "to": {},
        "expect": specio.schema_enum(list(EXPECTS)),
        "ratio": specio.schema_number(0, lo_open=True, description="expect: ratio: to / from"),
        "slope": {"type": "number", "description": "expect: slope: response per unit of "
                  "the factor"},
        "growth": specio.schema_number(-1, lo_open=True, description="expect: increasing "
                                       "or decreasing: the paper's change per unit of the "
                                       "factor, a fraction (0.08 = +8 %)"),
        "higher_at": specio.schema_enum(list(PARITIES)),
        "tolerance": specio.schema_number(0, description="expect: slope: how far the lab's "
                                          "slope may be (default 10 % of |slope|); a ratio "
                                          "or a growth: the fraction of it (default 0.1)"),
        "where": specio.schema_map({}, "factor -> level or list of levels"),
        "test": specio.schema_enum(list(TESTS)), "source": {"type": "string"},
        "scale": specio.schema_enum(list(SCALES), "ratio: to / from (default); "
                                    "difference: to - from in the response's unit"),
        "detect": specio.schema_number(0, lo_open=True, description="scale: difference: "
                                       "the smallest difference worth finding (response "
                                       "unit), declared before the run")},
        required=("factor", "expect"))
    return specio.schema_object({
        "study": {"type": "string"}, "alpha": specio.schema_number(0, 0.5, lo_open=True),
        "values": {"type": "array", "minItems": 1, "items": value},
        "findings": {"type": "array", "minItems": 1, "items": finding}})
