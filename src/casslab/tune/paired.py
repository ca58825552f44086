"""A paired comparison of compaction tuning, the pure parts: seed 003's scenario in
compressed time, the pairing and core-swapping schedule, where each arm's stages land in
the results store, and the summaries of paired differences.

The scenario (C*DynaConf, section 4.1): TTL 1 h / 10 % reads for 150 min, 2 h / 30 % for
200 min, 3 h / 3 % for 300 min, 1 h / 10 % for 150 min. TTLs scale by `time_scale` (the
rules and TWCS windows scale alike), stage lengths by `stage_scale`. The running side is
casslab.tune.paired_run; the comparison document both write and read is a JSON dict
(`{..head.., "runs": [{"rep", "mode", "core", "stages": [StageResult...]}]}`), so
summaries also read documents written by earlier versions.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from casslab.core.errors import UsageError
from casslab.tune.learn import mix_for
from casslab.tune.rules import RulesTable, check_scale, check_time_scale

MODES = ("static", "dynamic", "observe")
# Stages whose TTL or read share differ from the start: where a tuner can gain.
CHANGED_STAGES = (2, 3)


@dataclass(frozen=True)
class ScenarioStage:
    ttl_h: float
    read_share: float
    minutes: float


SCENARIO = (ScenarioStage(1, 0.10, 150), ScenarioStage(2, 0.30, 200),
            ScenarioStage(3, 0.03, 300), ScenarioStage(1, 0.10, 150))


@dataclass(frozen=True)
class StagePlan:
    """One stage as run: its number (from 1), TTL (s), read share, mix and length (s)."""

    stage: int
    ttl_s: int
    read_share: float
    mix: str
    duration_s: float


@dataclass(frozen=True)
class Arm:
    """One arm of one repetition: `position` is its core (side by side) or its turn
    (sequential)."""

    rep: int
    mode: str
    position: int


@dataclass
class StageResult:
    stage: int
    ttl_s: int
    read_share: float
    duration_s: float
    ops: int
    ops_s: float
    mean_ms: float
    p99_ms: float
    errors: int
    disk_peak_mib: float
    compaction_at_end: dict[str, str]
    load_avg_1m: float  # of the machine at the stage's end: is anything else running?


# The range of `stage_scale` (stage lengths x the scale). At 0.0005 the shortest stage,
# 150 min, lasts 4.5 s: a few one-second reporting intervals, the least a stage's
# throughput and percentiles can be read from. Above 1 a stage would outlast the study's.
STAGE_SCALE_RANGE = (0.0005, 1.0)


def check_stage_scale(value: float, what: str = "stage_scale") -> float:
    """`value` if it is in STAGE_SCALE_RANGE; else UsageError naming `what` and the range."""
    lo, hi = STAGE_SCALE_RANGE
    return check_scale(value, what, STAGE_SCALE_RANGE,
                       f"{lo:g} to {hi:g} (0.0005: the shortest stage, 150 min, lasts 4.5 s; "
                       "1: the study's own lengths), e.g. 0.01")


def stage_plan(time_scale: float, stage_scale: float,
               scenario: tuple[ScenarioStage, ...] = SCENARIO) -> list[StagePlan]:
    """The scenario's stages in compressed time. Raises UsageError for a scale outside
    its range (TIME_SCALE_RANGE, STAGE_SCALE_RANGE)."""
    check_time_scale(time_scale)
    check_stage_scale(stage_scale)
    return [StagePlan(i, int(s.ttl_h * 3600 * time_scale), s.read_share, mix_for(s.read_share),
                      s.minutes * 60 * stage_scale)
            for i, s in enumerate(scenario, 1)]


def check_modes(modes: tuple[str, ...]) -> tuple[str, str]:
    """Two distinct modes of MODES. Raises UsageError naming what is valid."""
    if len(modes) != 2 or not set(modes) <= set(MODES) or modes[0] == modes[1]:
        raise UsageError(f"modes {','.join(modes)!r}: give two different of "
                         f"{', '.join(MODES)}")
    return modes[0], modes[1]


def schedule(reps: int, modes: tuple[str, str]) -> list[tuple[Arm, Arm]]:
    """Per repetition, its two arms; they swap positions (cores) every repetition, so a
    faster core or an earlier turn favours neither mode. Raises UsageError for reps < 1."""
    if reps < 1:
        raise UsageError(f"reps {reps}: must be >= 1")
    pairs = []
    for rep in range(1, reps + 1):
        first, second = modes if rep % 2 else (modes[1], modes[0])
        pairs.append((Arm(rep, first, 0), Arm(rep, second, 1)))
    return pairs


def cell_index(modes: tuple[str, str], mode: str, stage: int, stages: int) -> int:
    """The store's cell of (mode, stage): modes major, stages minor, from 0."""
    return modes.index(mode) * stages + stage - 1


def trial_seq(arm: Arm, stage: int, stages: int) -> int:
    """The store's trial sequence number: repetition, then position, then stage."""
    return ((arm.rep - 1) * 2 + arm.position) * stages + stage


def cell_key(mode: str, stage: int) -> str:
    return f"mode={mode} stage={stage}"


def digest_input(head: dict[str, Any]) -> dict[str, Any]:
    """What makes two comparisons the same one (for the store's spec digest)."""
    return {k: v for k, v in head.items() if k != "results"}


# ---- summaries of a comparison document ----------------------------------------------


def _changed_ops(run: dict[str, Any]) -> int:
    return sum(s["ops"] for s in run["stages"] if s["stage"] in CHANGED_STAGES)


def per_rep(doc: dict[str, Any], value: Any) -> dict[int, dict[str, float]]:
    """rep -> mode -> value(run) for every run; value may return None to skip a run."""
    by: dict[int, dict[str, float]] = {}
    for run in doc["runs"]:
        v = value(run)
        if v is not None:
            by.setdefault(run["rep"], {})[run["mode"]] = v
    return by


def paired_gains(by: dict[int, dict[str, float]], mode: str = "dynamic",
                 base: str = "static") -> list[tuple[int, float]]:
    """(rep, mode's value over base's - 1) for every repetition that ran both."""
    return [(rep, d[mode] / d[base] - 1) for rep, d in sorted(by.items())
            if mode in d and base in d and d[base]]


def normalised_rate(run: dict[str, Any]) -> float | None:
    """Stages 2+3 ops/s over the same run's stage 1 ops/s (None without stages 1-3)."""
    st = {s["stage"]: s for s in run["stages"]}
    if not {1, *CHANGED_STAGES} <= set(st) or not st[1]["ops_s"]:
        return None
    changed = (sum(st[i]["ops"] for i in CHANGED_STAGES)
               / sum(st[i]["duration_s"] for i in CHANGED_STAGES))
    return float(changed / st[1]["ops_s"])


def changed_stage_gain(doc: dict[str, Any]) -> str:
    """Ops gain of dynamic over static in the stages where the scenario changed (2, 3)."""
    def ops(mode: str) -> list[int]:
        return [_changed_ops(r) for r in doc["runs"] if r["mode"] == mode]
    st, dy = ops("static"), ops("dynamic")
    if not st or not dy:
        return "not enough runs"
    gain = statistics.median(dy) / statistics.median(st) - 1
    return (f"stages 2+3 operations, median over {len(st)} static / {len(dy)} dynamic runs: "
            f"{statistics.median(st):,.0f} vs {statistics.median(dy):,.0f} ({gain:+.1%})")


def paired(doc: dict[str, Any]) -> str:
    """Per repetition, dynamic vs static stages 2+3 operations (each rep ran both)."""
    gains = paired_gains(per_rep(doc, _changed_ops))
    return ("Paired by repetition (dynamic vs static, stages 2+3): "
            + ", ".join(f"rep {rep} {g:+.1%}" for rep, g in gains) + ".")


def normalised(doc: dict[str, Any]) -> str:
    """Stages 2+3 operations per second over the same run's stage 1 (identical settings
    in both modes), so a run on a slower core or a slower hour is compared with itself."""
    gains = paired_gains(per_rep(doc, normalised_rate))
    if not gains:
        return ""
    med = statistics.median(g for _, g in gains)
    return ("Relative to each run's own stage 1 (stages 2+3 ops/s over stage 1 ops/s; stage 1 "
            "is identical in both modes), dynamic vs static: "
            + ", ".join(f"rep {rep} {g:+.1%}" for rep, g in gains) + f" (median {med:+.1%}).")


def table(doc: dict[str, Any]) -> list[str]:
    """Markdown rows: per stage and mode, median and range over repetitions."""
    lines = ["| stage | TTL / reads | mode | ops (median, min-max) | mean ms | p99 ms | "
             "disk peak MiB | ops vs static |",
             "|---|---|---|---|---|---|---|---|"]
    by: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for run in doc["runs"]:
        for s in run["stages"]:
            by.setdefault((s["stage"], run["mode"]), []).append(s)
    for stage in sorted({k[0] for k in by}):
        base = statistics.median(s["ops"] for s in by.get((stage, "static"), [{"ops": 0}]))
        for mode in MODES:
            rows = by.get((stage, mode))
            if rows:
                lines.append(_table_row(stage, mode, rows, base))
    return lines


def _table_row(stage: int, mode: str, rows: list[dict[str, Any]], base: float) -> str:
    ops = [r["ops"] for r in rows]
    gain = f"{(statistics.median(ops) / base - 1):+.1%}" if base and mode != "static" else ""

    def med(key: str) -> str:
        vals = [r[key] for r in rows]
        return (f"{statistics.median(vals):g} ({min(vals):g}-{max(vals):g})"
                if len(vals) > 1 else f"{vals[0]:g}")
    return (f"| {stage} | {rows[0]['ttl_s']} s / {rows[0]['read_share']:.0%} | {mode} | "
            f"{med('ops')} | {med('mean_ms')} | {med('p99_ms')} | {med('disk_peak_mib')} | "
            f"{gain} |")


def load_note(doc: dict[str, Any]) -> str:
    """The machine's 1-minute load average at stage ends. The node's own runnable threads
    count in it (16 requests in flight keep ~15 runnable), so it shows a busy lab, not
    other jobs; it is recorded to compare runs with each other."""
    loads = [s["load_avg_1m"] for r in doc["runs"] for s in r["stages"] if "load_avg_1m" in s]
    if not loads:
        return "Other engineers' jobs shared the 2 cores during these runs: read the spread."
    return (f"Machine load average (1 min) at stage ends: median {statistics.median(loads):.1f}"
            f", range {min(loads):.1f}-{max(loads):.1f} (the node's own runnable threads count "
            "in it).")


def start_setting(rules: RulesTable, doc: dict[str, Any]) -> str:
    """The static arm's setting: the rules' choice for the scenario's first stage."""
    hours, share, _ = doc["scenario"][0]
    o = rules.choose("twcs", hours * 3600 * doc["time_scale"], share).options
    return (f"window {o['compaction_window_size']} {o['compaction_window_unit']}, "
            f"min_threshold {o['min_threshold']}")
