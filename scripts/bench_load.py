"""`make bench` (load part): client CPU per operation and throughput of casslab-load,
beside a bare scylla-driver loop (crates/load/examples/bare_loop.rs) on the same lab.

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
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmd import machine, today, write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from casslab.core.paths import default_cache, default_home  # noqa: E402
from casslab.lab import Lab, LabOptions  # noqa: E402
from casslab.testbed import open_lab  # noqa: E402

LOAD = str(ROOT / "target" / "release" / "casslab-load")
# `make bench` builds into the machine-wide CARGO_TARGET_DIR (Makefile); by hand, ./target.
BARE = str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "examples"
           / "bare_loop")
NAME = "benchload"


@dataclass
class Measure:
    label: str
    ops: int
    ops_s: float
    cpu_s: float
    p99_ms: float | None
    rss_mib: list[float]

    @property
    def us_per_op(self) -> float:
        return self.cpu_s / self.ops * 1e6


def pin_node(lab: Lab) -> None:
    for n in lab.state().nodes:
        subprocess.run(["taskset", "-a", "-p", "-c", "0", str(n.pid)], check=True,
                       capture_output=True)


def _rss_sampler(pid: int, rss: list[float], stop: threading.Event) -> threading.Thread:
    def sample() -> None:
        while not stop.wait(5.0):
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        rss.append(int(line.split()[1]) / 1024)
            except OSError:
                return

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    return thread


def _measure(label: str, cmd: list[str], sample_rss: bool) -> tuple[list[dict[str, Any]],
                                                                   float, list[float]]:
    """Runs `cmd` on core 1; its JSON lines, CPU seconds (wait4) and RSS samples."""
    rss: list[float] = []
    proc = subprocess.Popen(["taskset", "-c", "1", *cmd], stdout=subprocess.PIPE, text=True)
    stop = threading.Event()
    if sample_rss:
        _rss_sampler(proc.pid, rss, stop)
    assert proc.stdout is not None
    lines = [json.loads(line) for line in proc.stdout if line.startswith("{")]
    _, status, usage = os.wait4(proc.pid, 0)
    stop.set()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{label}: {cmd[0]} failed ({status})")
    return lines, usage.ru_utime + usage.ru_stime, rss


def _hosts(lab: Lab) -> str:
    return ",".join(f"{n.address}:9042" for n in lab.state().nodes)


def run(lab: Lab, label: str, args: list[str], sample_rss: bool = False) -> Measure:
    lines, cpu_s, rss = _measure(label, [*lab.exec_prefix(), LOAD, *args, "--hosts",
                                         _hosts(lab)], sample_rss)
    summary = next((o for o in lines if o.get("type") == "summary"), None)
    if summary is None:
        raise SystemExit(f"{label}: no summary")
    ops = int(summary["ops"])
    p99 = max(o["latency"]["p99_us"] for o in summary["by_op"].values() if o["ops"]) / 1000
    return Measure(label, ops, float(summary["ops_s"]), cpu_s, p99, rss)


def run_bare(lab: Lab, label: str, ops: int, rate: int | None = None) -> Measure:
    host = lab.state().nodes[0].address
    cmd = [*lab.exec_prefix(), BARE, f"{host}:9042", "bench", str(ops), "128",
           *([str(rate)] if rate else [])]
    lines, cpu_s, rss = _measure(label, cmd, False)
    return Measure(label, ops, float(lines[-1]["ops_s"]), cpu_s, None, rss)


def build_bare_loop() -> None:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "casslab-load", "--example",
                    "bare_loop", "-j", "2"], cwd=ROOT, check=True)


def measure_all(lab: Lab, ops: int, soak_s: int) -> tuple[list[Measure], Measure]:
    common = ["--in-flight", "128", "--keyspace", "bench"]
    n = str(ops)
    # A fresh node runs interpreted for its first minute or so: measured after 50k ops of
    # warm-up, the node's throughput still doubled across the next four runs.
    run(lab, "warm-up", ["stress", "write", "--duration", "90s", *common])
    rows: list[Measure] = []
    # Alternate the two clients so drift of the node (compaction, JIT) hits both.
    for i in (1, 2):
        rows.append(run_bare(lab, f"bare loop insert, unthrottled (#{i})", ops))
        rows.append(run(lab, f"insert (stress write), unthrottled (#{i})",
                        ["stress", "write", "--ops", n, *common]))
    peak = max(m.ops_s for m in rows if m.label.startswith("insert"))
    rows.append(run(lab, "read (stress read), unthrottled",
                    ["stress", "read", "--ops", n, "--records", n, "--pop",
                     f"uniform(1..{n})", *common]))
    over = int(peak * 1.3)
    rows.append(run(lab, f"insert, rate schedule at {over} ops/s (130 % of peak)",
                    ["stress", "write", "--ops", n, "--rate", str(over), *common]))
    # Near the peak, at the same rate for both clients (CPU per op falls as throughput
    # rises, so unthrottled runs of different speed do not compare): three pairs.
    rate = int(peak * 0.8)
    for i in (1, 2, 3):
        rows.append(run_bare(lab, f"matched #{i}: bare loop insert at {rate} ops/s (80% of "
                             "peak)", rate * 20, rate))
        rows.append(run(lab, f"matched #{i}: insert at {rate} ops/s (80% of peak), tick 1ms",
                        ["stress", "write", "--ops", str(rate * 20), "--rate", str(rate),
                         *common]))
    for share in (0.5, 0.15):
        rate = int(peak * share)
        count = rate * 15
        rows.append(run_bare(lab, f"bare loop insert at {rate} ops/s ({share:.0%} of peak)",
                             count, rate))
        for tick in ("1ms", "5ms"):
            rows.append(run(lab, f"insert at {rate} ops/s ({share:.0%} of peak), tick {tick}",
                            ["stress", "write", "--ops", str(count), "--rate", str(rate),
                             "--tick", tick, *common]))
    rate = int(peak * 0.15)
    soak = run(lab, f"insert soak {soak_s} s at {rate} ops/s",
               ["stress", "write", "--duration", f"{soak_s}s", "--rate", str(rate),
                "--records", n, "--pop", f"uniform(1..{n})", *common], sample_rss=True)
    return rows, soak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=300_000)
    parser.add_argument("--soak-s", type=int, default=600, help="fixed-rate run for RSS")
    args = parser.parse_args()
    build_bare_loop()
    lab = open_lab(NAME, home=default_home(), cache=default_cache())
    if lab.exists():
        lab.down(wipe=True)
    lab.up(LabOptions(nodes=1, profile="host"))
    try:
        pin_node(lab)
        rows, soak = measure_all(lab, args.ops, args.soak_s)
    finally:
        lab.down(wipe=True)
    rows.append(soak)
    for m in rows:
        print(f"{m.label}: {m.ops_s:,.0f} ops/s, {m.us_per_op:.2f} us CPU/op", flush=True)
    lines = [f"Measured {today()} on {machine()}. One node (profile `host`, Cassandra 5.0.6) "
             "pinned to core 0 with `taskset`, the client pinned to core 1, 128 requests in "
             "flight. casslab-load runs with every feature on: HdrHistograms per operation "
             "type, 1 s interval lines, and the rate schedule where a rate is given. The bare "
             "loop is `crates/load/examples/bare_loop.rs` (the scylla driver, 128 requests in "
             "flight, same rows, nothing else; with a rate each request sleeps until its due "
             "time). CPU per op = (user + system CPU s of the client, from wait4) / ops, so it "
             "includes connecting and preparing.",
             "", "| run | ops | ops/s | client CPU per op (us) | p99 (ms) |",
             "|---|---|---|---|---|"]
    for m in rows:
        p99 = f"{m.p99_ms:.2f}" if m.p99_ms is not None else "-"
        lines.append(f"| {m.label} | {m.ops:,} | {m.ops_s:,.0f} | {m.us_per_op:.2f} | {p99} |")
    matched = {who: statistics.median(m.us_per_op for m in rows if m.label.startswith("matched")
                                      and (("bare" in m.label) == (who == "bare")))
               for who in ("bare", "casslab-load")}
    lines += ["", f"At 80 % of the peak, same rate for both (median of 3 alternating pairs): "
              f"casslab-load {matched['casslab-load']:.2f} us/op, bare loop "
              f"{matched['bare']:.2f} us/op."]
    if soak.rss_mib:
        lines += ["", f"Client RSS during the {args.soak_s} s soak, sampled every 5 s (MiB): "
                  f"first {soak.rss_mib[0]:.1f}, last {soak.rss_mib[-1]:.1f}, "
                  f"max {max(soak.rss_mib):.1f} ({len(soak.rss_mib)} samples)."]
    lines += ["", "Reference points from issue 3 (same machine, same method): latte 0.29 "
              "11.2 us/op at 10.1k ops/s; a bare 30-line scylla-driver loop 7.0 us/op at 11.8k "
              "ops/s. Goal: at most 6.5 us/op with every feature on, cheaper than the bare "
              "loop."]
    write_section("load", "Load generator: client CPU per operation", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
