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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmd import machine, today, write_section
from tune_compare import compare, exit_on_sigterm, load_options, rules_arg

from casslab.tune.paired import (
    changed_stage_gain,
    load_note,
    normalised,
    paired,
    start_setting,
    table,
)
from casslab.tune.rules import RulesTable


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
    rules = rules_arg(ap, a.rules, a.time_scale)
    if a.src:
        doc = json.loads(a.src.read_text())
    else:
        doc = compare(ap, rules, results=None, out=Path("results/bench-tune.json"),
                      reps=a.reps, time_scale=a.time_scale, stage_scale=a.stage_scale,
                      side_by_side=not a.sequential, lab_name="benchtune", profile="host",
                      warmup_s=a.warmup_s, load_options=load_options())
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
        f"Disk: the peak of the {doc.get('disk_scope', 'keyspace data directory')} sampled "
        "every 5 s within the stage."
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
