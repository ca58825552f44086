"""The spec's `design:` block: trials (or a range of rounds), order, reset, warm-ups,
`until`, budget, noise and the guard against a busy machine."""

from __future__ import annotations

import math
from typing import Any

from casslab.core.errors import UsageError
from casslab.core.specio import Path_, V
from casslab.core.units import parse_duration_s
from casslab.experiment.reference import Reference
from casslab.experiment.spec.model import DesignSpec, Guard

RESETS = ("none", "truncate", "recreate", "rebuild")

DESIGN_KEYS = ("trials", "warmup_trials", "lab_warmup_trials", "randomize", "seed", "reset",
               "order", "until", "budget", "detect", "noise_cv", "guard", "labs",
               "warmup_rounds")
ORDERS = ("random", "blocked", "interleaved")
UNTILS = ("trials", "verdicts")
# How a change of lab factor is carried out. rebuild: the lab is taken down and the next
# one built, a fresh JVM each time. keep: each lab configuration is built once and kept;
# while another runs, its nodes are paused (SIGSTOP: no CPU, JIT code, caches and heap
# kept), and going back resumes them and recreates the keyspace (the data as fresh as
# after a rebuild). Why: an interleaved design visits every lab every round, and a fresh
# JVM's warm-up then lands in every round (seed 001's here-run: throughput still rising
# 1.5-1.9x over the first 10-17 trials of each lab's life). keep-data: as keep, but a lab
# resumed for the schema (workload, records, rf...) it was paused with keeps its keyspace
# and data: no reload on every return (seed 004's 5,000 rows and warm-up per cell each
# round), the data left as the earlier trials of its cells left it. per-round (interleaved
# only): a fresh lab for every round, its cells run on it and it is taken down: a lab
# build has a state of its own (which replica a coordinator reads from, the JIT's
# choices), and rounds within one lab sample none of it, so an effect measured within one
# kept lab holds for that build only; the per-round differences of fresh labs carry it.
PER_ROUND = "per-round"
LABS = ("rebuild", "keep", "keep-data", PER_ROUND)
TRIALS_RANGE_KEYS = ("min", "max")
GUARD_KEYS = ("max_outside_cpu_pct", "reruns")
MAX_DESIGN_TRIALS = 1000
MAX_GUARD_RERUNS = 10


def parse_design(v: V, raw: Any, reference: Reference) -> DesignSpec:
    m = v.mapping(raw, ("design",), DESIGN_KEYS)
    until = v.choice(m.get("until", "trials"), ("design", "until"), UNTILS, "design.until")
    lo, hi = _trials(v, m.get("trials", 3), until)
    warm = v.integer(m.get("warmup_trials", 0), ("design", "warmup_trials"), 0, 1000)
    order = _order(v, m)
    seed = v.integer(m.get("seed", 1), ("design", "seed"), 0)
    reset = v.choice(m.get("reset", "none"), ("design", "reset"), RESETS, "reset")
    lab_warm = v.integer(m.get("lab_warmup_trials", 0), ("design", "lab_warmup_trials"), 0, 100)
    warm_rounds = v.integer(m.get("warmup_rounds", 0), ("design", "warmup_rounds"), 0, 10)
    if warm_rounds and order != "interleaved":
        raise v.doc.error(("design", "warmup_rounds"), "needs `order: interleaved` (a warm-up "
                          "round is a round of every cell, nothing kept); valid without it: "
                          "warmup_trials, lab_warmup_trials")
    if until == "verdicts":
        if order != "interleaved":
            raise v.doc.error(("design", "until"), "verdicts needs `order: interleaved` (it "
                              "adds whole rounds, one kept trial of every cell each)")
        if not reference.findings:
            raise v.doc.error(("design", "until"), "verdicts needs reference.findings (the "
                              "findings whose verdicts end the campaign); valid without "
                              "them: trials")
    budget = None
    if "budget" in m:
        if until != "verdicts":
            raise v.doc.error(("design", "budget"), "is for `until: verdicts` (a campaign of "
                              "fixed trials runs them all)")
        budget = _duration(v, m["budget"], ("design", "budget"))
    detect = None
    if "detect" in m:
        if until != "verdicts":
            raise v.doc.error(("design", "detect"), "is for `until: verdicts` (the margin, "
                              "declared before the run, of a 'smaller than this lab can "
                              "detect' verdict)")
        detect = _cv(v, m["detect"], ("design", "detect"), "a relative size")
    noise = None if "noise_cv" not in m else _cv(v, m["noise_cv"], ("design", "noise_cv"))
    guard = _guard(v, m.get("guard"))
    labs = v.choice(m.get("labs", "rebuild"), ("design", "labs"), LABS, "design.labs")
    if labs != "rebuild" and reset == "rebuild":
        raise v.doc.error(("design", "labs"), f"{labs} contradicts `reset: rebuild` (a "
                          "rebuild before every kept trial keeps no lab); valid with it: "
                          "rebuild")
    if labs == PER_ROUND and order != "interleaved":
        raise v.doc.error(("design", "labs"), f"{labs} is for `order: interleaved` (a "
                          "fresh lab for each round of every cell)")
    return DesignSpec(lo, warm, order == "random", seed, reset, lab_warm, order, hi, until,
                      budget, noise, guard, detect, labs, warm_rounds)


def _trials(v: V, raw: Any, until: str) -> tuple[int, int]:
    """design.trials: N, or {min: N, max: M} with `until: verdicts` (min >= 2: one round
    has no within-round spread to decide from)."""
    path: Path_ = ("design", "trials")
    if not isinstance(raw, dict):
        n = v.integer(raw, path, 1, MAX_DESIGN_TRIALS)
        if until == "verdicts":
            raise v.doc.error(path, f"{n}: with `until: verdicts` give a range, e.g. "
                              "{min: 3, max: 20}")
        return n, n
    m = v.mapping(raw, path, TRIALS_RANGE_KEYS)
    if until != "verdicts":
        raise v.doc.error(path, "a range {min, max} needs `design.until: verdicts` (else "
                          "give one number)")
    for key in TRIALS_RANGE_KEYS:
        if key not in m:
            raise v.doc.error((*path, key), "is required (e.g. trials: {min: 3, max: 20})")
    lo = v.integer(m["min"], (*path, "min"), 2, MAX_DESIGN_TRIALS)
    hi = v.integer(m["max"], (*path, "max"), lo, MAX_DESIGN_TRIALS)
    return lo, hi


def _order(v: V, m: dict[str, Any]) -> str:
    """design.order, or the older `randomize` (true: random, false: blocked)."""
    rnd = v.boolean(m["randomize"], ("design", "randomize")) if "randomize" in m else None
    if "order" not in m:
        return "random" if rnd else "blocked"
    order = v.choice(m["order"], ("design", "order"), ORDERS, "order")
    if rnd is not None and rnd != (order == "random"):
        raise v.doc.error(("design", "randomize"), f"{str(rnd).lower()} contradicts "
                          f"`order: {order}`; remove randomize")
    return order


def _duration(v: V, raw: Any, path: Path_) -> float:
    """A wall time: `5m`, `90s`, `1h` or a number of seconds, more than 0."""
    try:
        out = parse_duration_s(raw, "value", bare="s") if not isinstance(raw, bool) else -1.0
    except UsageError:
        out = -1.0
    if not out > 0 or not math.isfinite(out):
        raise v.doc.error(path, f"{raw!r} is not a wall time (valid: e.g. 5m, 90s, 1h, or "
                          "seconds > 0)")
    return out


def fraction(raw: Any) -> float:
    """A fraction as a spec writes it: a number (0.05) or a percentage (`5%`); NaN when
    it is neither (the caller says what is valid)."""
    if isinstance(raw, str) and raw.strip().endswith("%"):
        try:
            return float(raw.strip()[:-1]) / 100
        except ValueError:
            return math.nan
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    return math.nan


def _cv(v: V, raw: Any, path: Path_, what: str = "a coefficient of variation") -> float:
    """A coefficient of variation (or a relative size, design.detect): a fraction in
    (0, 1) or a percentage `5%`."""
    out = fraction(raw)
    if not 0 < out < 1:
        raise v.doc.error(path, f"{raw!r} is not {what} (valid: a fraction > 0 and < 1, "
                          "e.g. 0.05, or a percentage, e.g. 5%)")
    return out


def _guard(v: V, raw: Any) -> Guard | None:
    if raw is None:
        return None
    path: Path_ = ("design", "guard")
    m = v.mapping(raw, path, GUARD_KEYS)
    if "max_outside_cpu_pct" not in m:
        raise v.doc.error((*path, "max_outside_cpu_pct"), "is required (the CPU % of the "
                          "whole machine the world outside the lab may use, e.g. 10)")
    pct = v.number(m["max_outside_cpu_pct"], (*path, "max_outside_cpu_pct"), 0.0, 100.0,
                   lo_open=True)
    reruns = v.integer(m.get("reruns", 2), (*path, "reruns"), 0, MAX_GUARD_RERUNS)
    return Guard(pct, reruns)
