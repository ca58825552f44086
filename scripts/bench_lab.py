"""`make bench` (lab part): seconds from `lab up` to ready for 1, 3 and 6 nodes.

Each size is brought up `--reps` times with the `host` profile (no limits) on a
wiped lab, timing the real `casslab lab up` command end to end. The results
replace the lab section of BENCHMARKS.md, with the machine and date.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmd import machine, today, write_section

CASSLAB = str(Path(sys.executable).parent / "casslab")


def time_up(nodes: int) -> float:
    name = f"bench{nodes}"
    subprocess.run([CASSLAB, "lab", "down", "--name", name, "--wipe"], capture_output=True,
                   check=False)
    started = time.monotonic()
    subprocess.run([CASSLAB, "lab", "up", "--nodes", str(nodes), "--name", name], check=True)
    took = time.monotonic() - started
    subprocess.run([CASSLAB, "lab", "down", "--name", name, "--wipe"], check=True)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,3,6")
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    rows = []
    for nodes in (int(s) for s in args.sizes.split(",")):
        times = [time_up(nodes) for _ in range(args.reps)]
        rows.append((nodes, times))
        print(f"{nodes} nodes: " + ", ".join(f"{t:.1f} s" for t in times), flush=True)
    lines = [f"Measured {today()} on {machine()}; Cassandra 5.0.6, profile `host`, "
             f"{args.reps} runs per size, timing `casslab lab up` from start until every node "
             "is UN and answers CQL (jars already cached).", "",
             "| nodes | median (s) | runs (s) |", "|---|---|---|"]
    for nodes, times in rows:
        lines.append(f"| {nodes} | {statistics.median(times):.1f} | "
                     f"{', '.join(f'{t:.1f}' for t in times)} |")
    write_section("lab", "Lab start-up (`casslab lab up` to ready)", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
