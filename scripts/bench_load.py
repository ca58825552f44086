"""`make bench` (load part): client CPU per operation and throughput of casslab-load.

A 1-node lab (profile `host`) is pinned to core 0 and casslab-load to core 1, as
issue 3 asks. For inserts (cassandra-stress write) and reads (stress read of the
written keys), 128 requests in flight, it records ops/s and client CPU per op =
(user + system CPU seconds of casslab-load) / ops, with every feature on: HdrHistograms,
1-second interval lines, and a fixed-rate schedule run. Then a longer fixed-rate run
samples the client's RSS to check memory stays flat. Results replace the `load`
section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from benchmd import machine, today, write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from casslab.lab import Lab, LabOptions  # noqa: E402
from casslab.paths import default_cache, default_home  # noqa: E402

LOAD = str(ROOT / "target" / "release" / "casslab-load")
NAME = "benchload"


@dataclass
class Measure:
    label: str
    ops: int
    ops_s: float
    cpu_s: float
    p99_ms: float
    rss_mib: list[float]

    @property
    def us_per_op(self) -> float:
        return self.cpu_s / self.ops * 1e6


def pin_node(lab: Lab) -> None:
    for n in lab.state().nodes:
        subprocess.run(["taskset", "-a", "-p", "-c", "0", str(n.pid)], check=True,
                       capture_output=True)


def run(lab: Lab, label: str, args: list[str], sample_rss: bool = False) -> Measure:
    cmd = ["taskset", "-c", "1", *lab.exec_prefix(), LOAD, *args,
           "--hosts", ",".join(f"{n.address}:9042" for n in lab.state().nodes)]
    rss: list[float] = []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(5.0):
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        rss.append(int(line.split()[1]) / 1024)
            except OSError:
                return

    thread = threading.Thread(target=sampler, daemon=True)
    if sample_rss:
        thread.start()
    assert proc.stdout is not None
    summary = None
    for line in proc.stdout:
        obj = json.loads(line)
        if obj.get("type") == "summary":
            summary = obj
    _, status, usage = os.wait4(proc.pid, 0)
    stop.set()
    if summary is None or os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{label}: casslab-load failed ({status})")
    ops = int(summary["ops"])
    p99 = max(o["latency"]["p99_us"] for o in summary["by_op"].values() if o["ops"]) / 1000
    return Measure(label, ops, float(summary["ops_s"]), usage.ru_utime + usage.ru_stime, p99,
                   rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--soak-s", type=int, default=120, help="fixed-rate run for RSS")
    args = parser.parse_args()
    lab = Lab(NAME, home=default_home(), cache=default_cache())
    if lab.exists():
        lab.down(wipe=True)
    lab.up(LabOptions(nodes=1, profile="host"))
    try:
        pin_node(lab)
        common = ["--in-flight", "128", "--keyspace", "bench"]
        n = str(args.ops)
        run(lab, "warm-up", ["stress", "write", "--ops", "50000", *common])
        writes = run(lab, "insert (stress write)", ["stress", "write", "--ops", n, *common])
        reads = run(lab, "read (stress read)", ["stress", "read", "--ops", n, "--records", n,
                                                "--pop", f"uniform(1..{n})", *common])
        target = int(writes.ops_s * 0.8)
        rated = run(lab, f"insert at fixed rate {target} ops/s",
                    ["stress", "write", "--ops", n, "--rate", str(target), *common])
        soak = run(lab, f"insert soak {args.soak_s} s at {target // 2} ops/s",
                   ["stress", "write", "--duration", f"{args.soak_s}s", "--rate",
                    str(target // 2), "--records", n, "--pop", f"uniform(1..{n})", *common],
                   sample_rss=True)
    finally:
        lab.down(wipe=True)
    rows = [writes, reads, rated, soak]
    for m in rows:
        print(f"{m.label}: {m.ops_s:,.0f} ops/s, {m.us_per_op:.2f} us CPU/op, "
              f"p99 {m.p99_ms:.2f} ms", flush=True)
    lines = [f"Measured {today()} on {machine()}. One node (profile `host`, Cassandra 5.0.6) "
             "pinned to core 0 with `taskset`, casslab-load pinned to core 1, 128 requests in "
             "flight, HdrHistograms and 1 s interval lines on. CPU per op = (user + system CPU "
             "s of casslab-load, from wait4) / ops, so it includes connecting and preparing.",
             "", "| run | ops | ops/s | client CPU per op (us) | p99 (ms) |",
             "|---|---|---|---|---|"]
    for m in rows:
        lines.append(f"| {m.label} | {m.ops:,} | {m.ops_s:,.0f} | {m.us_per_op:.2f} | "
                     f"{m.p99_ms:.2f} |")
    if soak.rss_mib:
        lines += ["", f"Client RSS during the {args.soak_s} s soak, sampled every 5 s (MiB): "
                  f"first {soak.rss_mib[0]:.1f}, last {soak.rss_mib[-1]:.1f}, "
                  f"max {max(soak.rss_mib):.1f} ({len(soak.rss_mib)} samples)."]
    lines += ["", "Reference points from issue 3 (same machine, same method): latte 0.29 "
              "11.2 us/op at 10.1k ops/s; a bare 30-line scylla-driver loop 7.0 us/op at 11.8k "
              "ops/s. Goal: at most 6.5 us/op with every feature on."]
    write_section("load", "Load generator: client CPU per operation", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
