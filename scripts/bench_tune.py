"""Static vs dynamic (tuner on) on seed 003's compressed four-stage scenario, written to
BENCHMARKS.md between <!-- bench:tune:begin/end --> (seed 003's rules) or
<!-- bench:tune-learned:begin/end --> (a rules file from `casslab tune learn`).

    .venv/bin/python scripts/bench_tune.py --reps 2            # runs tune_compare
    .venv/bin/python scripts/bench_tune.py --reps 3 --rules results/tune-rules-scenario.yaml
    .venv/bin/python scripts/bench_tune.py --from results/tune-compare.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmd import machine, today, write_section
from tune_compare import compare, compare_parallel, exit_on_sigterm, rules_arg, table

from casslab.tune.rules import RulesTable


def changed_stage_gain(doc: dict[str, Any]) -> str:
    """Ops gain of dynamic over static in the stages where the scenario changed (2, 3)."""
    def ops(mode: str) -> list[int]:
        return [sum(s["ops"] for s in r["stages"] if s["stage"] in (2, 3))
                for r in doc["runs"] if r["mode"] == mode]
    st, dy = ops("static"), ops("dynamic")
    if not st or not dy:
        return "not enough runs"
    gain = statistics.median(dy) / statistics.median(st) - 1
    return (f"stages 2+3 operations, median over {len(st)} static / {len(dy)} dynamic runs: "
            f"{statistics.median(st):,.0f} vs {statistics.median(dy):,.0f} ({gain:+.1%})")


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


def paired(doc: dict[str, Any]) -> str:
    """Per repetition, dynamic vs static stages 2+3 operations (each rep ran both)."""
    by: dict[int, dict[str, int]] = {}
    for r in doc["runs"]:
        by.setdefault(r["rep"], {})[r["mode"]] = sum(s["ops"] for s in r["stages"]
                                                     if s["stage"] in (2, 3))
    parts = [f"rep {rep} {d['dynamic'] / d['static'] - 1:+.1%}" for rep, d in sorted(by.items())
             if "static" in d and "dynamic" in d]
    return "Paired by repetition (dynamic vs static, stages 2+3): " + ", ".join(parts) + "."


def normalised(doc: dict[str, Any]) -> str:
    """Stages 2+3 operations per second over the same run's stage 1 (identical settings
    in both modes), so a run on a slower core or a slower hour is compared with itself."""
    by: dict[int, dict[str, float]] = {}
    for r in doc["runs"]:
        st = {s["stage"]: s for s in r["stages"]}
        if not {1, 2, 3} <= set(st) or not st[1]["ops_s"]:
            continue
        changed = (st[2]["ops"] + st[3]["ops"]) / (st[2]["duration_s"] + st[3]["duration_s"])
        by.setdefault(r["rep"], {})[r["mode"]] = changed / st[1]["ops_s"]
    pairs = [(rep, d["dynamic"] / d["static"] - 1) for rep, d in sorted(by.items())
             if "static" in d and "dynamic" in d]
    if not pairs:
        return ""
    med = statistics.median(g for _, g in pairs)
    return ("Relative to each run's own stage 1 (stages 2+3 ops/s over stage 1 ops/s; stage 1 "
            "is identical in both modes), dynamic vs static: "
            + ", ".join(f"rep {rep} {g:+.1%}" for rep, g in pairs) + f" (median {med:+.1%}).")


def start_setting(rules: RulesTable, doc: dict[str, Any]) -> str:
    hours, share, _ = doc["scenario"][0]
    o = rules.choose("twcs", hours * 3600 * doc["time_scale"], share).options
    return (f"window {o['compaction_window_size']} {o['compaction_window_unit']}, "
            f"min_threshold {o['min_threshold']}")


def rules_lines(rules: RulesTable) -> list[str]:
    """The learned points: the chosen setting and what every alternative measured."""
    lines = ["", "The learned rules (per TTL and read share: the chosen TWCS setting, then each "
             "alternative's ops/s in its one trial):", ""]
    for p in rules.points.get("twcs", ()):
        alts = p.measurements.get("alternatives", [])
        mix = p.measurements.get("mix_read_share")
        lines.append(f"- TTL {p.ttl_s:g} s, reads {p.read_share:.1%} as the node counted them"
                     + (f" (mix {mix:.0%})" if mix is not None else "") + ": window "
                     f"{p.options['compaction_window_size']} min, min_threshold "
                     f"{p.options['min_threshold']}; " + ", ".join(
                         f"w{a['compaction_window_size']}/mt{a['min_threshold']} "
                         f"{a['ops_s']:g}" for a in alts) + " ops/s")
    return lines


def main() -> int:
    exit_on_sigterm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--from", dest="src", type=Path)
    ap.add_argument("--stage-scale", type=float, default=0.01)
    ap.add_argument("--time-scale", type=float, default=0.05)
    ap.add_argument("--warmup-s", type=int, default=90, help="unrecorded load first (JIT)")
    ap.add_argument("--sequential", action="store_true",
                    help="one 2-core lab, modes one after the other (default: side by side)")
    ap.add_argument("--rules", type=Path,
                    help="rules file (from `casslab tune learn`); default: seed 003's")
    a = ap.parse_args()
    load_options: dict[str, Any] = {"devices": 100, "in-flight": 16}
    rules = rules_arg(ap, a.rules, a.time_scale)
    if a.src:
        doc = json.loads(a.src.read_text())
    elif a.sequential:
        doc = compare(reps=a.reps, time_scale=a.time_scale, stage_scale=a.stage_scale,
                      lab_name="benchtune", keep_lab=False,
                      out=Path("results/bench-tune.json"), profile="host",
                      load_options=load_options, warmup_s=a.warmup_s, rules=rules)
    else:
        doc = compare_parallel(reps=a.reps, time_scale=a.time_scale,
                               stage_scale=a.stage_scale, lab_name="benchtune",
                               out=Path("results/bench-tune.json"), profile="host",
                               load_options=load_options, warmup_s=a.warmup_s,
                               rules=rules)
    learned = "learn" in doc.get("rules", "")
    if learned and not a.rules:
        ap.error("these runs used a learned rules file: give it with --rules")
    stage_min = [round(m * 60 * doc["stage_scale"] / 60, 2) for _, _, m in doc["scenario"]]
    if doc.get("parallel"):
        setup = ("two 1-node labs (profile host) run side by side, static on one and dynamic "
                 "on the other, each node and its casslab-load client pinned to its own core; "
                 "the modes swap cores every repetition")
        order = "static and dynamic ran at the same time, paired per repetition"
    else:
        setup = f"1 node (profile {doc['profile']})"
        order = "static and dynamic alternated"
    lines = [
        f"Machine: {machine()}; {today()}. {setup}. casslab-load "
        f"iot closed loop ({doc['load_options']}), seed 003's scenario with TTLs and windows "
        f"x {doc['time_scale']:g} and stages x {doc['stage_scale']:g} "
        f"({' / '.join(f'{m:g}' for m in stage_min)} min). Rules: "
        f"{doc.get('rules', 'seed 003')}. static: the table keeps the rules' choice for stage "
        f"1 ({start_setting(rules, doc)}); dynamic: `Tuner` with the same rules every 10 s on "
        "count-delta rates, >= 30 s between changes. "
        f"{len(doc['runs'])} runs, {order}; median (min-max).",
        "",
        *table(doc),
        "",
        changed_stage_gain(doc) + ".",
        paired(doc),
        normalised(doc),
        "Disk: the peak of the keyspace's data directory sampled every 5 s within the stage."
        + ("" if doc.get("disk_excludes_snapshots") else
           " CAVEAT: this run's sampler still counted the auto-snapshots that DROP KEYSPACE "
           "left from earlier runs, so only each mode's first run (rep 1 static) is clean and "
           "the disk column is NOT comparable between modes (fixed in tune_compare.py since)."),
        load_note(doc),
        *(rules_lines(rules) if learned else []),
    ]
    if learned:
        write_section("tune-learned", "Compaction tuner with rules learned here "
                      "(`casslab tune learn`): static vs dynamic", lines)
    else:
        write_section("tune", "Compaction tuner: static vs dynamic (seed 003 scenario)", lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
