"""Seed 001's here-runs trial by trial: throughput beside the CPU the node got, the host's
CPU and the machine's load average when the trial ran (docs/reproductions/001.md uses it
to tell the profile's effect from the contention's).

Usage: python scripts/repro001_trials.py LOAD_LOG RESULTS_DIR [RESULTS_DIR ...]
LOAD_LOG: lines `TIME load1 load5 load15` (sampled every 30 s during the runs), TIME an ISO
date-time or a UTC `HH:MM:SS` (the rerun's `uptime`-style log).
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

QUERY = """
SELECT t.id, t.params_json, t.started_at, t.warmup, s.ops_s,
  (SELECT avg(cpu_user_pct + coalesce(cpu_sys_pct, 0)) FROM node_metrics n
     WHERE n.trial_id = t.id) AS node_cpu,
  (SELECT avg(cpu_user_pct + coalesce(cpu_sys_pct, 0)) FROM host_metrics h
     WHERE h.trial_id = t.id) AS host_cpu
FROM trials t JOIN summaries s ON s.trial_id = t.id AND s.op = 'ALL'
WHERE t.status = 'done' ORDER BY t.started_at
"""


DAY_S = 86400.0


def sample_time(stamp: str) -> float:
    """Epoch seconds of an ISO date-time; seconds of the UTC day of a bare HH:MM:SS (the
    log then has no date, so trials are matched by their time of day, see load_at)."""
    hms = stamp.split(":")
    if len(hms) == 3 and all(x.isdigit() for x in hms):
        return float(int(hms[0]) * 3600 + int(hms[1]) * 60 + int(hms[2]))
    return datetime.fromisoformat(stamp).timestamp()


def load_samples(path: Path) -> tuple[list[float], list[float]]:
    """(time, 1-minute load average) of each sample line; lines without a number in the
    second field (a log's last "Terminated") are skipped."""
    times, loads = [], []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            t, la = sample_time(parts[0]), float(parts[1])
        except ValueError:
            continue
        times.append(t)
        loads.append(la)
    return times, loads


def load_at(times: list[float], loads: list[float], t: float) -> float | None:
    """The first sample at or after t (the 1-minute average then covers the trial); a
    log of times of day is matched by t's UTC time of day."""
    if times and times[-1] < DAY_S:
        t = t - datetime.fromtimestamp(t, UTC).replace(
            hour=0, minute=0, second=0, microsecond=0).timestamp()
    i = bisect.bisect_left(times, t)
    return loads[i] if i < len(loads) else None


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    times, loads = load_samples(Path(argv[0]))
    print("| campaign | trial | profile | workload | threads | warm-up | ops/s | node CPU "
          "(% of one core) | host CPU (% of 2 cores) | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    by_profile: dict[str, list[tuple[float, float]]] = {}
    for d in argv[1:]:
        con = sqlite3.connect(Path(d) / "results.db")
        for tid, params, started, warm, ops_s, node, host in con.execute(QUERY):
            p = json.loads(params)
            la = load_at(times, loads, started)
            fmt = lambda x: "-" if x is None else f"{x:.0f}"  # noqa: E731
            print(f"| {Path(d).name} | {tid} | {p.get('profile')} | {p.get('workload')} | "
                  f"{p.get('threads', 10)} | {'yes' if warm else ''} | {ops_s:.0f} | "
                  f"{fmt(node)} | {fmt(host)} | {'-' if la is None else f'{la:.1f}'} |")
            if not warm and la is not None:
                by_profile.setdefault(str(p.get("profile")), []).append((la, ops_s))
    for prof, pts in sorted(by_profile.items()):
        print(f"\n{prof}: median load {statistics.median(x for x, _ in pts):.1f}, "
              f"median ops/s {statistics.median(y for _, y in pts):.0f} ({len(pts)} trials)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
