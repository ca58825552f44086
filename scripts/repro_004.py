"""Seed 004's reproduction: per-cell medians and the three runtime comparisons.

Reads the campaigns of examples/004-containers/ (results/reproduce/004-containers-*)
through casslab's results repository and prints the Markdown tables of
docs/reproductions/004.md: the median of the kept trials per (runtime, threads) cell for
CPU, disk write, mean latency and throughput, CPU per operation (node CPU seconds per
1,000 operations: CPU that does not depend on how many operations the shared machine let
through), and the ratio of the medians of the three runtime pairs pooled over both thread
counts: process -> netns (the container's network path), netns -> lxc (the rest of the
container) and process -> lxc (the study's comparison). Formatting only: no test here;
every verdict, paired per interleaved round, is the package's (`casslab reproduce 004`,
casslab.analysis.findings). Each trial's machine load is the
1-minute load average sampled every 30 s (results/reproduce/004-loadavg.txt, or
--loadavg: lines of epoch seconds or UTC HH:MM:SS, then the load averages) nearest its
start. Each cell's median comes with its order-statistic 95 % CI (with 3 trials that is
[min, max], 75 % coverage).

Usage: PYTHONPATH=src .venv/bin/python scripts/repro_004.py [--results DIR]
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

from casslab.analysis.intervals import median_ci
from casslab.analysis.responses import profile_cores, trial_values
from casslab.store.records import Results

ROOT = Path(__file__).resolve().parents[1]
SPECS = ("1-mixed", "2-write", "3-read")
RUNTIMES = ("process", "netns", "lxc")
PAIRS = (("process", "netns"), ("netns", "lxc"), ("process", "lxc"))
RESPONSES = ("node_cpu_profile_pct", "disk_write_kib_s.sum", "mean_ms", "p99_ms", "ops_s",
             "cpu_ms_per_op")
Rows = dict[str, dict[int, float]]


def load_average(path: Path) -> list[tuple[float, float]]:
    """(s, 1-minute load average) samples; none when the file is missing. The time is epoch
    seconds, or seconds of the UTC day when the file writes HH:MM:SS (`uptime`-style logs);
    lines that are neither (a log's last "Terminated") are skipped."""
    if not path.exists():
        return []
    out = []
    for f in (line.split() for line in path.read_text().splitlines()):
        if len(f) < 3:
            continue
        hms = f[0].split(":")
        try:
            t = (float(f[0]) if len(hms) == 1 else
                 float(int(hms[0]) * 3600 + int(hms[1]) * 60 + int(hms[2])))
            out.append((t, float(f[1])))
        except ValueError:
            continue
    return out


def nearest_load(loads: list[tuple[float, float]], start: float) -> float:
    """The load average sampled nearest `start` (epoch s); a seconds-of-day log is matched
    on the start's second of the UTC day."""
    day = all(t < 86_400 for t, _ in loads)
    at = start % 86_400 if day else start
    return min(loads, key=lambda p: abs(p[0] - at))[1]


def values(directory: Path) -> tuple[list[tuple[str, int, int, float | None]], Rows]:
    """Kept trials as (runtime, threads, id, start) and each response per trial id."""
    store, results = Results.open(directory)
    try:
        kept = results.kept_trials()
        ids = [t.trial_id for t in kept]
        camp = results.campaign()
        cores = profile_cores(camp.spec_yaml if camp else "", results.trials())
        out: Rows = {r: trial_values(results, r, ids, cores=cores)
                     for r in RESPONSES if r != "cpu_ms_per_op"}
        cpu = trial_values(results, "node_cpu_pct", ids)
        # % of one core x 10 = CPU ms per s; divided by ops/s: CPU ms per operation.
        out["cpu_ms_per_op"] = {i: 10 * cpu[i] / out["ops_s"][i] if out["ops_s"][i] else
                                math.nan for i in ids}
        rows = [(str(t.cell_params["runtime"]), int(t.cell_params["threads"]), t.trial_id,
                 t.started_at) for t in kept]
        return rows, out
    finally:
        store.close()


def fmt(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def with_ci(x: list[float]) -> str:
    """Median and its 95 % order-statistic CI, '-' with no values."""
    x = [v for v in x if not math.isnan(v)]
    if not x:
        return "-"
    ci = median_ci(x)
    return f"{fmt(statistics.median(x))} ({fmt(ci.low)}-{fmt(ci.high)})"


def report(spec: str, directories: list[Path], loads: list[tuple[float, float]]) -> None:
    rows: list[tuple[str, int, int, float | None]] = []
    vals: Rows = {r: {} for r in RESPONSES}
    # Trial ids are per database: offset each directory's so they stay apart.
    for k, directory in enumerate(directories):
        got_rows, got = values(directory)
        rows += [(r, t, i + 1_000_000 * k, s) for r, t, i, s in got_rows]
        for r in RESPONSES:
            vals[r].update({i + 1_000_000 * k: v for i, v in got[r].items()})
    print(f"\n### {spec} ({len(rows)} kept trials)\n")
    print("| runtime | threads | n | " + " | ".join(RESPONSES) + " | load avg |")
    print("|---|---|---|" + "---|" * (len(RESPONSES) + 1))
    for rt in RUNTIMES:
        for th in (450, 150):
            ids = [i for r, t, i, _ in rows if r == rt and t == th]
            starts = [s for r, t, _, s in rows if r == rt and t == th and s]
            la = [nearest_load(loads, s) for s in starts] if loads else []
            med = [with_ci([vals[r][i] for i in ids]) for r in RESPONSES]
            print(f"| {rt} | {th} | {len(ids)} | " + " | ".join(med)
                  + f" | {fmt(statistics.median(la)) if la else '-'} |")
    print("\n| comparison | response | from (median) | to (median) | to/from |")
    print("|---|---|---|---|---|")
    for a, b in PAIRS:
        for r in RESPONSES:
            x = [vals[r][i] for rt, _, i, _ in rows if rt == a and not math.isnan(vals[r][i])]
            y = [vals[r][i] for rt, _, i, _ in rows if rt == b and not math.isnan(vals[r][i])]
            if not x or not y:
                continue
            mx, my = statistics.median(x), statistics.median(y)
            print(f"| {a} -> {b} | {r} | {fmt(mx)} | {fmt(my)} | "
                  f"{fmt(my / mx) if mx else '-'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "reproduce")
    ap.add_argument("--also", default="",
                    help="another run's prefix to pool, e.g. 004-attempt2 (its kept trials "
                         "of the same spec, e.g. an arm the final run did not reach)")
    ap.add_argument("--loadavg", type=Path, default=None,
                    help="load average log (default: RESULTS/004-loadavg.txt)")
    args = ap.parse_args()
    loads = load_average(args.loadavg or args.results / "004-loadavg.txt")
    for spec in SPECS:
        dirs = [args.results / f"{prefix}-{spec}" for prefix in
                ("004-containers", *([args.also] if args.also else []))]
        dirs = [d for d in dirs if (d / "results.db").exists()]
        if dirs:
            report(spec, dirs, loads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
