"""Rule tables: optimal compaction options by (TTL, read share), nearest point, interpolation.

A rules file is YAML (or JSON):

    version: 1
    interpolate: false            # true: bilinear between grid points (needs a full grid)
    scale: {ttl_s: 7200, read_share: 0.27}   # optional: distance units per axis
    twcs:                         # points for TimeWindowCompactionStrategy tables
      - {ttl_s: 3600, read_share: 0.03, compaction_window_size: 2,
         compaction_window_unit: MINUTES, min_threshold: 6}
    ucs:                          # optional: points for UnifiedCompactionStrategy tables
      - {ttl_s: 3600, read_share: 0.30, scaling_parameters: L4}

Every point has `ttl_s` (the table's default_time_to_live, seconds) and `read_share`
(reads / (reads + writes), 0..1); every other key is a compaction option set on the
table. `measurements:` (any mapping) may be attached to a point and is kept as is.
Pure code: no I/O except `load_rules`.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra import compaction
from casslab.core import specio
from casslab.core.errors import UsageError

# The strategies the tuner has rules for.
STRATEGIES = {s: compaction.class_name(s) for s in ("twcs", "ucs")}
WINDOW_UNITS_MIN = {"MINUTES": 1, "HOURS": 60, "DAYS": 1440}
TOP_KEYS = ("version", "interpolate", "scale", "source", "twcs", "ucs")
POINT_AXES = ("ttl_s", "read_share")
# Options whose values are integers (interpolated, then rounded).
INT_OPTIONS = ("compaction_window_size", "min_threshold", "max_threshold")
TWCS_OPTIONS = ("compaction_window_size", "compaction_window_unit", "min_threshold",
                "max_threshold", "timestamp_resolution", "unsafe_aggressive_sstable_expiration")


class RulesError(UsageError):
    """A rules file is malformed; the message names the file, the field and what is valid."""


@dataclass(frozen=True)
class RulePoint:
    """One optimal point: at (ttl_s, read_share) set `options` (compaction options)."""

    ttl_s: float
    read_share: float
    options: dict[str, str]
    measurements: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        return f"ttl {self.ttl_s:g}s, reads {self.read_share:.0%}"


@dataclass(frozen=True)
class RuleChoice:
    """What the rules recommend for one table: options and the point(s) behind them."""

    options: dict[str, str]
    point: RulePoint  # the nearest point
    distance: float  # normalised distance to it
    interpolated: bool


@dataclass(frozen=True)
class RulesTable:
    """Points per strategy ('twcs', 'ucs'); `scale` is the distance unit per axis."""

    points: dict[str, tuple[RulePoint, ...]]
    interpolate: bool = False
    scale_ttl_s: float = 1.0
    scale_read_share: float = 1.0
    source: str = ""

    def strategies(self) -> list[str]:
        return [s for s, pts in self.points.items() if pts]

    def distance(self, p: RulePoint, ttl_s: float, read_share: float) -> float:
        return math.hypot((p.ttl_s - ttl_s) / self.scale_ttl_s,
                          (p.read_share - read_share) / self.scale_read_share)

    def nearest(self, strategy: str, ttl_s: float, read_share: float) -> tuple[RulePoint, float]:
        """The closest point (ties: the first in the file) and its normalised distance."""
        pts = self.points.get(strategy, ())
        if not pts:
            raise RulesError(f"the rules have no '{strategy}' points")
        best = min(range(len(pts)), key=lambda i: (self.distance(pts[i], ttl_s, read_share), i))
        return pts[best], self.distance(pts[best], ttl_s, read_share)

    def choose(self, strategy: str, ttl_s: float, read_share: float) -> RuleChoice:
        """The options for a table at (ttl_s, read_share): the nearest point's, or with
        `interpolate` a bilinear blend of the grid cell around it (clamped to the grid)."""
        point, dist = self.nearest(strategy, ttl_s, read_share)
        if not self.interpolate:
            return RuleChoice(dict(point.options), point, dist, False)
        return RuleChoice(interpolate(self.points[strategy], ttl_s, read_share, point), point,
                          dist, True)


def window_minutes(options: dict[str, str]) -> float | None:
    """A TWCS window in minutes, or None when the options have none."""
    size = options.get("compaction_window_size")
    if size is None:
        return None
    unit = str(options.get("compaction_window_unit", "DAYS")).upper()
    return float(size) * WINDOW_UNITS_MIN.get(unit, 1440)


def half_up(x: float) -> int:
    """Round half up (Python's round() rounds half to even: 2.5 -> 2)."""
    return math.floor(x + 0.5)


def _grid(points: tuple[RulePoint, ...]) -> tuple[list[float], list[float]]:
    ttls = sorted({p.ttl_s for p in points})
    shares = sorted({p.read_share for p in points})
    return ttls, shares


def check_grid(points: tuple[RulePoint, ...]) -> list[str]:
    """Missing (ttl_s, read_share) pairs for a full grid; [] when complete."""
    ttls, shares = _grid(points)
    have = {(p.ttl_s, p.read_share) for p in points}
    return [f"(ttl_s {t:g}, read_share {s:g})" for t in ttls for s in shares
            if (t, s) not in have]


def _bracket(axis: list[float], x: float) -> tuple[float, float, float]:
    """Lower and upper grid values around x and the weight of the upper (clamped)."""
    if x <= axis[0]:
        return axis[0], axis[0], 0.0
    if x >= axis[-1]:
        return axis[-1], axis[-1], 0.0
    for lo, hi in itertools.pairwise(axis):
        if lo <= x <= hi:
            return lo, hi, (x - lo) / (hi - lo)
    raise AssertionError("unreachable")


def interpolate(points: tuple[RulePoint, ...], ttl_s: float, read_share: float,
                nearest: RulePoint) -> dict[str, str]:
    """Bilinear interpolation of numeric options on a full grid.

    TWCS windows are blended in minutes and written in MINUTES (or the nearest point's
    unit when the result is a whole number of it); integer options are rounded; other
    options come from the nearest point.
    """
    ttls, shares = _grid(points)
    at = {(p.ttl_s, p.read_share): p for p in points}
    t0, t1, wt = _bracket(ttls, ttl_s)
    s0, s1, ws = _bracket(shares, read_share)
    corners = [(at[(t0, s0)], (1 - wt) * (1 - ws)), (at[(t1, s0)], wt * (1 - ws)),
               (at[(t0, s1)], (1 - wt) * ws), (at[(t1, s1)], wt * ws)]
    out = dict(nearest.options)
    if "compaction_window_size" in out:
        minutes = sum((window_minutes(p.options) or 0.0) * w for p, w in corners)
        unit = str(nearest.options.get("compaction_window_unit", "MINUTES")).upper()
        per = WINDOW_UNITS_MIN.get(unit, 1)
        whole = half_up(minutes)
        if per > 1 and whole % per == 0 and whole > 0:
            out["compaction_window_size"] = str(whole // per)
        else:
            out["compaction_window_size"] = str(max(1, whole))
            out["compaction_window_unit"] = "MINUTES"
    for key in INT_OPTIONS:
        if key == "compaction_window_size" or key not in out:
            continue
        if all(key in p.options for p, _ in corners):
            out[key] = str(half_up(sum(float(p.options[key]) * w for p, w in corners)))
    return out


# ---- the default: seed 003 (C*DynaConf), Table 2 and the min_threshold rule ---------------

# Table 2 of C*DynaConf: optimal TWCS compaction_window_size in MINUTES by read share
# (rows) and table TTL in hours (columns). Cassandra 3.11, 10 VMs, 24 stress threads.
SEED003_TABLE2_MIN: dict[float, dict[int, int]] = {
    0.03: {1: 2, 2: 12, 3: 35},
    0.10: {1: 10, 2: 10, 3: 25},
    0.30: {1: 22, 2: 35, 3: 60},
}
# Its min_threshold rule (swept 2..14 at 10 % reads): 6 for TTL 1 h, 8 for 2 h, 10 for 3 h.
SEED003_MIN_THRESHOLD: dict[int, int] = {1: 6, 2: 8, 3: 10}


# The range of a time scale of seed 003's rules (TTLs and TWCS windows x the scale). At
# 1/60 its shortest TTL, 1 h, becomes 60 s: one window of the 1-minute minimum TWCS
# allows; below it every table's data would expire inside one window (1e-9 gave TTLs of
# microseconds). Above 1 the rules would claim TTLs longer than the study measured.
TIME_SCALE_RANGE = (1 / 60, 1.0)


def check_scale(value: float, what: str, bounds: tuple[float, float], valid: str) -> float:
    """`value` if it is finite and within `bounds`; else UsageError naming `what`, the
    value and `valid` (the range in words, with why its ends are where they are)."""
    lo, hi = bounds
    if not (math.isfinite(value) and lo <= value <= hi):
        raise UsageError(f"{what} {value:g}: valid is {valid}")
    return value


def check_time_scale(value: float, what: str = "time_scale") -> float:
    """`value` if it is in TIME_SCALE_RANGE; else UsageError naming `what` and the range."""
    lo, hi = TIME_SCALE_RANGE
    return check_scale(value, what, TIME_SCALE_RANGE,
                       f"1/60 ({lo:.4g}) to {hi:g} (1/60: the 1 h TTL becomes 60 s, one "
                       "1-minute TWCS window; 1: the study's own times), e.g. 0.05")


def seed003_rules(*, interpolate: bool = False, time_scale: float = 1.0) -> RulesTable:
    """Seed 003's rule table. `time_scale` < 1 compresses TTLs and windows alike (e.g.
    1/60: TTL 1 h -> 60 s and a 10-minute window -> 10 s, rounded up to the 1-minute
    minimum TWCS allows); the min_threshold rule is kept as is. Raises UsageError for a
    time_scale outside TIME_SCALE_RANGE."""
    check_time_scale(time_scale)
    pts = []
    for share, row in SEED003_TABLE2_MIN.items():
        for hours, minutes in row.items():
            window = max(1, half_up(minutes * time_scale))
            pts.append(RulePoint(
                ttl_s=hours * 3600 * time_scale, read_share=share,
                options={"compaction_window_size": str(window),
                         "compaction_window_unit": "MINUTES",
                         "min_threshold": str(SEED003_MIN_THRESHOLD[hours])},
                measurements={"source": "C*DynaConf (seed 003) Table 2, min_threshold rule"}))
    pts.sort(key=lambda p: (p.ttl_s, p.read_share))
    return RulesTable({"twcs": tuple(pts), "ucs": ()}, interpolate=interpolate,
                      scale_ttl_s=2 * 3600 * time_scale, scale_read_share=0.27,
                      source="seed 003 (C*DynaConf, Table 2 + min_threshold 6/8/10)")


# ---- files ----------------------------------------------------------------------------------

def load_rules(path: Path) -> RulesTable:
    """Read and validate a rules file; RulesError names the file, field and what is valid."""
    return parse_rules(specio.read_text(path, "rules file", RulesError), source=str(path))


def parse_rules(text: str, *, source: str = "rules") -> RulesTable:
    """Parse rules text (YAML or JSON); see the module docstring for the format.

    Raises RulesError as `file:line: field: what is valid`.
    """
    doc = specio.Doc(text, source, error=RulesError, key_lines=True,
                     empty="no points (give a 'twcs:' or 'ucs:' list)")
    v = specio.V(doc)
    if not isinstance(doc.root, dict):
        raise doc.error((), "expected a mapping with 'twcs:' and/or 'ucs:' point lists")
    raw = v.mapping(doc.root, (), TOP_KEYS)
    if raw.get("version", 1) != 1 or isinstance(raw.get("version"), bool):
        raise doc.error(("version",), f"version {raw['version']!r} is not supported (valid: 1)")
    interp = raw.get("interpolate", False)
    if not isinstance(interp, bool):
        raise doc.error(("interpolate",), f"interpolate must be true or false, not {interp!r}")
    points: dict[str, tuple[RulePoint, ...]] = {}
    for strategy in STRATEGIES:
        points[strategy] = _points(v, strategy, raw.get(strategy), interp)
    if not any(points.values()):
        raise doc.error((), "no points (give a 'twcs:' or 'ucs:' list)")
    every = [p for pts in points.values() for p in pts]
    scale = v.mapping(raw.get("scale"), ("scale",), POINT_AXES)
    return RulesTable(
        points, interpolate=interp,
        scale_ttl_s=_scale(v, scale, "ttl_s", [p.ttl_s for p in every], 3600.0),
        scale_read_share=_scale(v, scale, "read_share", [p.read_share for p in every], 0.1),
        source=str(raw.get("source") or source))


def _points(v: specio.V, strategy: str, items: Any, interp: bool) -> tuple[RulePoint, ...]:
    if items is None:
        return ()
    if not isinstance(items, list) or not items:
        raise v.doc.error((strategy,), f"{strategy} must be a non-empty list of points")
    pts = tuple(_point(v, strategy, i, item) for i, item in enumerate(items))
    seen: set[tuple[float, float]] = set()
    for i, p in enumerate(pts):
        if (p.ttl_s, p.read_share) in seen:
            raise v.doc.error((strategy, i), f"a second point at ttl_s {p.ttl_s:g}, "
                              f"read_share {p.read_share:g}")
        seen.add((p.ttl_s, p.read_share))
    if interp:
        missing = check_grid(pts)
        if missing:
            raise v.doc.error((strategy,), f"interpolate: true needs a full grid of "
                              f"{strategy} points; missing {', '.join(missing[:3])}")
    return pts


def _scale(v: specio.V, scale: dict[str, Any], key: str, values: list[float],
           fallback: float) -> float:
    if key in scale:
        value = scale[key]
        if (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise v.doc.error(("scale", key), f"scale.{key} must be a number > 0, "
                              f"not {value!r}")
        return float(value)
    span = max(values) - min(values)
    return span if span > 0 else fallback


def _point(v: specio.V, strategy: str, i: int, item: Any) -> RulePoint:
    where: specio.Path_ = (strategy, i)
    if not isinstance(item, dict):
        raise v.doc.error(where, "a point is a mapping like {ttl_s: 3600, read_share: 0.1, "
                          "compaction_window_size: 10, ...}")
    for axis in POINT_AXES:
        if axis not in item:
            raise v.doc.error(where, f"missing {axis}")
    ttl, share = item["ttl_s"], item["read_share"]
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
        raise v.doc.error((*where, "ttl_s"), f"ttl_s must be a number of seconds > 0, "
                          f"not {ttl!r}")
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise v.doc.error((*where, "read_share"), f"read_share must be a fraction in 0..1, "
                          f"not {share!r}")
    measurements = item.get("measurements") or {}
    if not isinstance(measurements, dict):
        raise v.doc.error((*where, "measurements"), "measurements must be a mapping")
    options: dict[str, str] = {}
    for k, value in item.items():
        if k in (*POINT_AXES, "measurements"):
            continue
        if k == "class":
            raise v.doc.error((*where, k), f"'class' is implied by the '{strategy}' list; "
                              "remove it")
        if isinstance(value, dict | list) or value is None:
            raise v.doc.error((*where, k), f"option {k} must be a scalar, not {value!r}")
        options[str(k)] = str(value).upper() if isinstance(value, bool) else str(value)
    if not options:
        raise v.doc.error(where, "no compaction option to set")
    if strategy == "twcs":
        _check_twcs(v, where, options)
    return RulePoint(float(ttl), float(share), options, dict(measurements))


def _check_twcs(v: specio.V, where: specio.Path_, options: dict[str, str]) -> None:
    for k in options:
        if k not in TWCS_OPTIONS:
            raise v.doc.error((*where, k), f"'{k}' is not a TWCS option"
                              f"{specio.closest(k, TWCS_OPTIONS)} (valid: "
                              f"{', '.join(TWCS_OPTIONS)})")
    unit = options.get("compaction_window_unit")
    if unit is not None:
        options["compaction_window_unit"] = unit.upper()
        if unit.upper() not in WINDOW_UNITS_MIN:
            raise v.doc.error((*where, "compaction_window_unit"), f"compaction_window_unit "
                              f"{unit!r} is not one of {', '.join(WINDOW_UNITS_MIN)}")
    for k in INT_OPTIONS:
        if k in options:
            try:
                value = int(options[k])
            except ValueError:
                raise v.doc.error((*where, k), f"{k} must be an integer, not "
                                  f"{options[k]!r}") from None
            low = 2 if k in ("min_threshold", "max_threshold") else 1
            if value < low:
                raise v.doc.error((*where, k), f"{k} must be >= {low}, not {value}")
    lo, hi = options.get("min_threshold"), options.get("max_threshold")
    if lo is not None and hi is not None and int(lo) > int(hi):
        raise v.doc.error((*where, "min_threshold"), f"min_threshold {lo} > max_threshold {hi}")


def dump_rules(table: RulesTable) -> str:
    """The rules as YAML text that `parse_rules` reads back."""
    doc: dict[str, Any] = {"version": 1, "interpolate": table.interpolate,
                           "scale": {"ttl_s": table.scale_ttl_s,
                                     "read_share": table.scale_read_share},
                           "source": table.source}
    for strategy, pts in table.points.items():
        if not pts:
            continue
        doc[strategy] = [
            {"ttl_s": p.ttl_s, "read_share": p.read_share,
             **{k: _yaml_value(v) for k, v in p.options.items()},
             **({"measurements": json.loads(json.dumps(p.measurements))}
                if p.measurements else {})}
            for p in pts]
    return yaml.safe_dump(doc, sort_keys=False, width=100)


def _yaml_value(v: str) -> int | str:
    return int(v) if v.isdigit() else v


def json_schema() -> specio.JsonSchema:
    """The rules file format as JSON Schema for editors (`parse_rules` also checks
    duplicate points, full grids and option values)."""
    obj, num = specio.schema_object, specio.schema_number
    scalar = {"type": ["string", "number", "boolean"]}
    axes = {"ttl_s": num(0, lo_open=True, description="the table's default_time_to_live"),
            "read_share": num(0, 1, description="reads / (reads + writes)"),
            "measurements": {"type": "object"}}
    twcs = obj(axes, required=POINT_AXES)
    twcs["properties"].update(
        {k: ({"enum": list(WINDOW_UNITS_MIN)} if k == "compaction_window_unit" else
             specio.schema_integer(2 if "threshold" in k else 1) if k in INT_OPTIONS
             else scalar) for k in TWCS_OPTIONS})
    ucs = obj(axes, required=POINT_AXES, extra=scalar)
    return specio.schema_document("casslab tune rules", obj({
        "version": {"const": 1}, "interpolate": {"type": "boolean"},
        "scale": obj({k: num(0, lo_open=True) for k in POINT_AXES}),
        "source": {"type": "string"},
        "twcs": {"type": "array", "minItems": 1, "items": twcs},
        "ucs": {"type": "array", "minItems": 1, "items": ucs},
    }))
