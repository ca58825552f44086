"""Seed 003's reproduction: the "Paper vs casslab" and window-sweep tables of
docs/reproductions/003.md, from the campaigns' results databases.

Scenario (examples/003-twcs/1-scenario.yaml): per stage and arm, operations (the study's
"partitions touched") and mean latency; per arm over the run, operations, mean latency,
the data directory's disk space (its mean over the run, its peak, its size at the end).
An arm's value is the mean of its kept runs, each run's value in brackets (the study's
tables give means of its runs), and "gain" is the study's: tuned / static - 1 for
operations, 1 - tuned / static for latency (positive = the tuned arm was better).
Sweep (2-window-sweep.yaml): ops/s of each trial per window and read share, and the
median per cell.

The paper's numbers are Tables 3 and 4 of the study (10 nodes, 150-300-minute stages),
so only the gains compare with ours.

Usage: PYTHONPATH=src .venv/bin/python scripts/repro003.py
           [--scenario DIR] [--sweep DIR]   (default: results/reproduce/003-twcs-*)
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

import yaml

from casslab.analysis.responses import trial_values
from casslab.store.records import Results

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("off", "seed003")  # static, and the tuned arm whatever its level (seed003x60 ...)


def _arm(level: object) -> str:
    return "off" if str(level) == "off" else "seed003"
STAGES = ("stage1", "stage2", "stage3", "stage4")
STAGE_NAMES = {"stage1": "1 (TTL 1 h, 10 %)", "stage2": "2 (TTL 2 h, 30 %)",
               "stage3": "3 (TTL 3 h, 3 %)", "stage4": "4 (TTL 1 h, 10 %)"}
SCENARIO_SPEC = ROOT / "examples" / "003-twcs" / "1-scenario.yaml"


def paper_tables(spec: Path = SCENARIO_SPEC) -> tuple[dict[str, tuple[float, float]],
                                                      dict[str, tuple[float, float]]]:
    """Tables 3 (partitions touched) and 4 (mean latency, ms), (static, tuned) per stage
    and "all", from the scenario spec's reference block (the only copy of them)."""
    ops: dict[str, list[float]] = {}
    ms: dict[str, list[float]] = {}
    for v in yaml.safe_load(spec.read_text())["reference"]["values"]:
        response, arm = str(v["response"]), ARMS.index(_arm(v["at"]["tuner"]))
        key = response.split(".")[1] if response.startswith("stage.") else "all"
        table = ops if response.endswith("ops") else ms if response.endswith("mean_ms") else None
        if table is not None:
            table.setdefault(key, [math.nan, math.nan])[arm] = float(v["value"])
    return ({k: (a, b) for k, (a, b) in ops.items()}, {k: (a, b) for k, (a, b) in ms.items()})


PAPER_OPS, PAPER_MS = paper_tables()

# The gains as Tables 3 and 4 print them (%). Two do not follow from the tables' own
# values: stage 2's latency (printed 7.10, 238.0 -> 220.1 is 7.52) and the total latency
# (printed 4.09, 199.7 -> 191.6 is 4.06); the table shows the printed one and, where it
# differs, the recomputation beside it.
PRINTED_GAIN = {("operations", "stage1"): -1.34, ("operations", "stage2"): 8.45,
                ("operations", "stage3"): 9.54, ("operations", "stage4"): -2.23,
                ("operations", "all"): 4.52, ("latency", "stage1"): -1.09,
                ("latency", "stage2"): 7.10, ("latency", "stage3"): 9.13,
                ("latency", "stage4"): -1.62, ("latency", "all"): 4.09}


def _paper_gain(key: str, lower_is_better: bool, paper: tuple[float, float]) -> str:
    """The printed gain, with the recomputation from the table's values beside it when
    the two differ by more than rounding."""
    printed = PRINTED_GAIN[("latency" if lower_is_better else "operations", key)]
    g = 100 * ((1 - paper[1] / paper[0]) if lower_is_better else (paper[1] / paper[0] - 1))
    if abs(g - printed) < 0.02:
        return f"{printed:+.2f} %"
    return f"{printed:+.2f} % printed ({g:.2f} % recomputed)"


def _gain(static: float, tuned: float, lower_is_better: bool) -> str:
    if not static:
        return "-"
    g = (1 - tuned / static) if lower_is_better else (tuned / static - 1)
    return f"{g * 100:+.2f} %"


def _cell(values: Sequence[float], fmt: str) -> str:
    inner = "; ".join(format(v, fmt) for v in values)
    return f"{format(statistics.fmean(values), fmt)} ({inner})"


def scenario_rows(directory: Path) -> list[str]:
    """The Markdown rows of the scenario's comparison table."""
    _, results = Results.open(directory)
    kept = sorted(results.kept_trials(), key=lambda t: t.seq)
    by_arm = {a: [t.trial_id for t in kept if _arm(t.cell_params.get("tuner")) == a]
              for a in ARMS}
    peaks = results.peak_data_mib()

    def arm_values(response: str) -> dict[str, list[float]]:
        return {a: list(trial_values(results, response, ids).values())
                for a, ids in by_arm.items()}

    rows = []
    for key, what, resp, paper, lower, fmt in (
            [(s, "operations", f"stage.{s}.ops", PAPER_OPS[s], False, ",.0f")
             for s in STAGES]
            + [("all", "operations", "all.ops", PAPER_OPS["all"], False, ",.0f")]
            + [(s, "mean latency, ms", f"stage.{s}.mean_ms", PAPER_MS[s], True, ".1f")
               for s in STAGES]
            + [("all", "mean latency, ms", "mean_ms", PAPER_MS["all"], True, ".1f")]):
        v = arm_values(resp)
        static, tuned = statistics.fmean(v["off"]), statistics.fmean(v["seed003"])
        stage = STAGE_NAMES.get(key, "all")
        rows.append(f"| {stage} | {what} | {format(paper[0], fmt)} | {format(paper[1], fmt)} "
                    f"| {_paper_gain(key, lower, paper)} | {_cell(v['off'], fmt)} | "
                    f"{_cell(v['seed003'], fmt)} | {_gain(static, tuned, lower)} |")
    # data_mib is the size at the end of the window; the study's "+3.6 % on average" is
    # a mean over time, which is data_mib_avg (summed over nodes, as is the peak).
    mean = arm_values("data_mib_avg.sum")
    end = arm_values("data_mib.sum")
    peak = {a: [peaks[i] for i in ids if i in peaks] for a, ids in by_arm.items()}
    for what, v, published in (("disk, mean over the run, MiB", mean, "+3.6 % (tuned more)"),
                               ("disk, peak, MiB", peak, "+16.7 % (tuned more)"),
                               ("disk, at the end of the run, MiB", end, "-")):
        static, tuned = statistics.fmean(v["off"]), statistics.fmean(v["seed003"])
        rows.append(f"| all | {what} | - | - | {published} | {_cell(v['off'], '.1f')} | "
                    f"{_cell(v['seed003'], '.1f')} | tuned {(tuned / static - 1) * 100:+.1f} % |")
    return rows


def sweep_rows(directory: Path) -> list[str]:
    """Markdown rows: per read share, each window's trials (ops/s) and median."""
    _, results = Results.open(directory)
    kept = results.kept_trials()
    ops = trial_values(results, "ops_s", [t.trial_id for t in kept])
    cells: dict[tuple[str, str], list[float]] = {}
    for t in sorted(kept, key=lambda t: t.seq):
        comp = str(t.cell_params.get("option.compaction", ""))
        window = comp.split("'compaction_window_size': '")[1].split("'")[0] + " min"
        reads = 1 - float(str(t.cell_params["option.mix"]).split(",")[0].split("=")[1])
        cells.setdefault((f"{reads * 100:.0f} %", window), []).append(ops[t.trial_id])
    rows = []
    for share in sorted({s for s, _ in cells}, key=lambda s: float(s.split()[0])):
        parts = []
        for window in ("2 min", "22 min"):
            v = cells.get((share, window), [])
            parts.append(", ".join(f"{x:.1f}" for x in v) +
                         (f" (median {statistics.median(v):.1f})" if v else ""))
        rows.append(f"| {share} | {parts[0]} | {parts[1]} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    base = ROOT / "results" / "reproduce"
    ap.add_argument("--scenario", type=Path, default=base / "003-twcs-1-scenario")
    ap.add_argument("--sweep", type=Path, default=base / "003-twcs-2-window-sweep")
    args = ap.parse_args()
    print("| stage | what | paper static | paper tuned | paper gain | lab static | lab tuned "
          "| lab gain |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(scenario_rows(args.scenario)))
    if args.sweep.exists():
        print("\n| read share | window 2 min (ops/s) | window 22 min (ops/s) |")
        print("|---|---|---|")
        print("\n".join(sweep_rows(args.sweep)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
