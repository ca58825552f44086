"""`make bench` (lab part): seconds from `lab up` to ready for 1, 3 and 6 nodes.

Each size is brought up `--reps` times with the `host` profile (no limits) on a
wiped lab, timing the real `casslab lab up` command end to end. The results
replace the lab section of BENCHMARKS.md, with the machine and date.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASSLAB = str(Path(sys.executable).parent / "casslab")
ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench:lab:begin -->", "<!-- bench:lab:end -->"


def time_up(nodes: int) -> float:
    name = f"bench{nodes}"
    subprocess.run([CASSLAB, "lab", "down", "--name", name, "--wipe"], capture_output=True,
                   check=False)
    started = time.monotonic()
    subprocess.run([CASSLAB, "lab", "up", "--nodes", str(nodes), "--name", name], check=True)
    took = time.monotonic() - started
    subprocess.run([CASSLAB, "lab", "down", "--name", name, "--wipe"], check=True)
    return took


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text()
                .splitlines() if ln.startswith("model name")), platform.processor())
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB, {platform.platform()}"


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
    today = datetime.date.today().isoformat()
    lines = [BEGIN, f"Measured {today} on {machine()}; Cassandra 5.0.6, profile `host`, "
             f"{args.reps} runs per size, timing `casslab lab up` from start until every node "
             "is UN and answers CQL (jars already cached).", "",
             "| nodes | median (s) | runs (s) |", "|---|---|---|"]
    for nodes, times in rows:
        lines.append(f"| {nodes} | {statistics.median(times):.1f} | "
                     f"{', '.join(f'{t:.1f}' for t in times)} |")
    lines.append(END)
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if BEGIN in text:
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        text = head + "\n".join(lines) + tail
    else:
        text += "\n## Lab start-up (`casslab lab up` to ready)\n\n" + "\n".join(lines) + "\n"
    path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
