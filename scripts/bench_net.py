"""`make bench` (network part): fidelity of the emulated links and casslab-netem's cost.

On a bare namespace (127.0.1.1-3 on lo, no Cassandra; the nodes' identity cgroups
casslab/itnet-bench/node1-3 made for the run, probes open node flows from them) it
measures
- round trip p50 vs configured (error in ms and %; goal: within max(5 %, 0.3 ms)),
- loss vs configured over 20k packets (goal: within +-0.5 points),
- bandwidth (htb, wire rate from TCP goodput) vs configured (goal: within +-5 %),
- casslab-netem's packets per second on a bulk TCP flow and its CPU per packet
  (goal: at least 100k packets/s),
and replaces the net section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmd import machine, today, write_section

from casslab import net
from casslab.net import NetSpec, identity
from casslab.net.linkcheck import identity_dirs, run_probe
from casslab.system import netns

NS = "itnet-bench"
ADDRS = ["127.0.1.1", "127.0.1.2", "127.0.1.3"]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def daemon_seen(lab_dir: Path) -> int:
    for _ in range(30):
        s = net.stats(lab_dir)
        if s:
            return int(s["seen"])
        time.sleep(0.1)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loss-packets", type=int, default=20_000)
    parser.add_argument("--flood-s", type=float, default=4.0)
    args = parser.parse_args()
    lab_dir = Path(tempfile.mkdtemp(prefix="itnet-bench-"))
    netns.delete(NS)
    cgroups = identity.create_bare(NS, len(ADDRS))
    lines: list[str] = []
    try:
        netns.create(NS, ADDRS)
        # --- round trip -------------------------------------------------------------
        delays = {"client-node1": 0.5, "client-node2": 5.0, "client-node3": 22.5,
                  "node1-node2": 45.0}
        state = net.apply(lab_dir, NS, ADDRS, NetSpec(
            links=tuple((k, {"delay_ms": v}) for k, v in delays.items())))
        rows = net.check(state, links=[f"{k.split('-')[0]}-to-{k.split('-')[1]}"
                                       for k in delays] + ["node2-to-node3"],
                         pings=300, loss_packets=0, bandwidth=False)
        rtt_rows = []
        for r in rows:
            assert r.rtt_p50_ms is not None
            want = r.rtt_configured_ms
            err = r.rtt_p50_ms - want
            goal = max(0.05 * want, 0.3)
            rtt_rows.append((f"{r.src}<->{r.dst}", want, r.rtt_p50_ms, r.rtt_p99_ms, err,
                             abs(err) <= goal))
            print(f"rtt {r.src}<->{r.dst}: set {want} p50 {r.rtt_p50_ms:.3f} "
                  f"p99 {r.rtt_p99_ms:.3f}", flush=True)
        # --- loss -------------------------------------------------------------------
        state = net.apply(lab_dir, NS, ADDRS, NetSpec(links=(
            ("node1-to-node2", {"loss_pct": 1.0}), ("node1-to-node3", {"loss_pct": 5.0}),
            ("node2-to-node3", {"loss_pct": 2.0, "loss_burst": 4}))))
        rows = net.check(state, links=["node1-to-node2", "node1-to-node3", "node2-to-node3"],
                         pings=10, loss_packets=args.loss_packets, bandwidth=False)
        loss_rows = []
        for r in rows:
            assert r.loss_pct is not None
            c = r.configured
            err = r.loss_pct - c.loss_pct
            label = f"{c.loss_pct:g} %" + (f" (burst {c.loss_burst:g})" if c.loss_burst > 1
                                            else "")
            loss_rows.append((f"{r.src}->{r.dst}", label, r.loss_pct, err, abs(err) <= 0.5,
                              r.reordered))
            print(f"loss {r.src}->{r.dst}: set {label} measured {r.loss_pct:.3f}", flush=True)
        # --- bandwidth --------------------------------------------------------------
        state = net.apply(lab_dir, NS, ADDRS, NetSpec(links=(
            ("node1-to-node2", {"rate_mbit": 10}), ("node1-to-node3", {"rate_mbit": 100}),
            ("client-to-node1", {"rate_mbit": 7.21, "delay_ms": 45.0}))))
        rows = net.check(state, links=["node1-to-node2", "node1-to-node3", "client-to-node1"],
                         pings=10, loss_packets=0, bandwidth=True, bandwidth_s=4.0)
        bw_rows = []
        for r in rows:
            assert r.configured.rate_mbit is not None and r.wire_rate_mbit is not None
            err = 100 * (r.wire_rate_mbit / r.configured.rate_mbit - 1)
            bw_rows.append((f"{r.src}->{r.dst}", r.configured, r.wire_rate_mbit,
                            r.rate_mbit, err, abs(err) <= 5))
            print(f"bw {r.src}->{r.dst}: set {r.configured.rate_mbit} wire "
                  f"{r.wire_rate_mbit:.2f} goodput {r.rate_mbit:.2f}", flush=True)
        # --- daemon throughput ------------------------------------------------------
        state = net.apply(lab_dir, NS, ADDRS, NetSpec(links=(
            ("node1-node2", {"delay_ms": 1.0}),)))
        assert state.daemon is not None
        pid = state.daemon.pid
        time.sleep(1.2)
        seen0, cpu0, t0 = daemon_seen(lab_dir), cpu_s(pid), time.monotonic()
        res = run_probe(NS, {"bandwidth": {"links": [[ADDRS[0], ADDRS[1], "node1"]],
                                           "duration_s": args.flood_s, "warmup_s": 0.5}},
                        timeout_s=args.flood_s + 30,
                        cgroups={"node1": identity_dirs(state.identities)["node1"]})
        time.sleep(1.2)
        seen1, cpu1, t1 = daemon_seen(lab_dir), cpu_s(pid), time.monotonic()
        packets = seen1 - seen0
        flood_wall = args.flood_s
        pps = packets / flood_wall
        cpu_us = (cpu1 - cpu0) / packets * 1e6 if packets else float("nan")
        goodput = res["bandwidth"][0]["mbit"]
        stats = net.stats(lab_dir) or {}
        print(f"daemon: {packets} packets in {flood_wall:.1f} s = {pps:.0f}/s, "
              f"{cpu_us:.2f} us CPU per packet, flow goodput {goodput:.0f} Mbit/s, "
              f"stats {json.dumps(stats)} (window {t1 - t0:.1f} s)", flush=True)
    finally:
        net.clear(lab_dir)
        netns.delete(NS)
        identity.remove_bare(cgroups)

    ok = "yes"
    lines += [f"Measured {today()} on {machine()}; bare namespace (127.0.1.1-3 on lo, MTU "
              "1500, TSO/GSO off, CUBIC), links classified by connection owner (node "
              "identity cgroup -> conntrack mark) and direction into packet marks, "
              "casslab-netem at SCHED_FIFO 50, probes (`casslab net check`'s worker) at "
              "SCHED_FIFO 40. Other engineers' labs and builds shared the 2 cores.", "",
              "Round trip (300 pings per pair, 5 ms apart; goal: p50 within max(5 %, 0.3 ms))",
              "", "| pair | set (ms) | p50 (ms) | p99 (ms) | p50 error (ms) | goal met |",
              "|---|---|---|---|---|---|"]
    for pair, want, p50, p99, err, met in rtt_rows:
        lines.append(f"| {pair} | {want:g} | {p50:.3f} | {p99:.3f} | {err:+.3f} | "
                     f"{ok if met else 'no'} |")
    lines += ["", f"Loss ({args.loss_packets} UDP packets per link; goal: within +-0.5 "
              "points)", "", "| link | set | measured (%) | error (points) | goal met | "
              "reordered |", "|---|---|---|---|---|---|"]
    for link, label, got, err, met, reo in loss_rows:
        lines.append(f"| {link} | {label} | {got:.2f} | {err:+.2f} | {ok if met else 'no'} "
                     f"| {reo} |")
    lines += ["", "Bandwidth (one CUBIC flow, 4 s, htb + bfifo 64kb; wire rate = goodput x "
              "1514 / MSS; goal: within +-5 %)", "",
              "| link | set | wire (Mbit/s) | goodput (Mbit/s) | error (%) | goal met |",
              "|---|---|---|---|---|---|"]
    for link, c, wire, good, err, met in bw_rows:
        extra = f", {c.delay_ms:g} ms" if c.delay_ms else ""
        lines.append(f"| {link} | {c.rate_mbit:g} Mbit/s{extra} | {wire:.2f} | {good:.2f} | "
                     f"{err:+.1f} | {ok if met else 'no'} |")
    lines += ["", "casslab-netem (one bulk TCP flow through a 1 ms link each way, both "
              "directions queued; goal: >= 100k packets/s)", "",
              "| packets/s handled | CPU per packet (us) | capacity at 1 core (packets/s) | "
              "flow goodput (Mbit/s) |", "|---|---|---|---|",
              f"| {pps:,.0f} | {cpu_us:.2f} | {1e6 / cpu_us:,.0f} | {goodput:.0f} |"]
    write_section("net", "Network emulation fidelity and cost (`casslab net`)", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
