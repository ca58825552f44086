"""Seed 000's reproduction: paper vs casslab tables, finding verdicts and Figs 23-26.

Reads the three campaigns of examples/000-rpi-iot/ (results/reproduce/000-rpi-iot-*)
through casslab.store.records.Results and prints the Markdown tables of
docs/reproductions/000.md; with --img DIR it also draws the Figs 23-26 analogue (median
run time per node count: the Pi cluster, the 1 GB VMs, Abramova et al.'s Table 3).

Run times are compared per 1,000 operations: the study timed 10,000 operations per
trial, this lab 1,000 (the paper's ms / 10 against ours in ms). Only kept trials count
(warm-ups dropped, as the study dropped trials 1-9).

With results of ram.yaml's `memory` scale (000-rpi-iot-ram-memory) it also prints their run
times and what the nodes did.

Usage: PYTHONPATH=src .venv/bin/python scripts/repro_000.py [--results DIR] [--img DIR]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import scipy.stats as st
import yaml

from casslab.analysis.stats import mann_whitney
from casslab.store.records import Results

ROOT = Path(__file__).resolve().parents[1]
SPEC_RAM = ROOT / "examples" / "000-rpi-iot" / "ram.yaml"


def table3_ms(spec: Path = SPEC_RAM) -> dict[tuple[str, int], float]:
    """Table 3 of the thesis (Abramova et al. 2014's reference cluster, not the Pi): run
    time of 10,000 operations, ms, per (workload, nodes), from ram.yaml's paper scale's
    reference block (the only copy of these numbers)."""
    values = yaml.safe_load(spec.read_text())["scales"]["paper"]["reference.values"]
    return {(str(v["at"]["workload"]), int(v["at"]["nodes"])): float(v["value"])
            for v in values}


TABLE3_MS = table3_ms()
# Section 5.1: greatest |wired - wireless| deviation of any trial, ms (10,000 ops).
WIFI_DEV_MS = {"ycsb-a": 367262, "ycsb-c": 211759, "ycsb-e": 1463335, "ycsb-i": 227459}
WORKLOADS = ("ycsb-a", "ycsb-c", "ycsb-e", "ycsb-i")
ALPHA = 0.05
BOOT = 10_000

Cells = dict[tuple[object, ...], list[float]]


@dataclass(frozen=True)
class Verdict:
    finding: str
    verdict: str  # holds, does not hold, inconclusive
    evidence: str


def cells(directory: Path, keys: Sequence[str]) -> Cells:
    """Kept run times (ms) per combination of the factors `keys`."""
    store, results = Results.open(directory)
    try:
        out: Cells = {}
        for t in results.kept_trials():
            key = tuple(t.cell_params.get(k) for k in keys)
            out.setdefault(key, []).append(1000.0 * float(t.runtime_s or math.nan))
        return out
    finally:
        store.close()


def resources(directory: Path, keys: Sequence[str]) -> list[str]:
    """Per cell, medians over kept trials of: CPU per node (% of one core), RSS per node,
    disk reads per node, data size (all nodes), host CPU (% of all cores): what the
    nodes and the machine did, for the causes of a finding."""
    store, results = Results.open(directory)
    try:
        acc: dict[tuple[object, ...], list[tuple[float, float, float, float, float]]] = {}
        peak = results.peak_data_mib()
        for t in results.kept_trials():
            nm = results.node_metrics(t.trial_id)
            hm = results.host_metrics(t.trial_id)
            nodes = max(1, len({m.node for m in nm}))
            cpu = sum((m.cpu_user_pct or 0) + (m.cpu_sys_pct or 0) for m in nm)
            rss = [m.rss_mib for m in nm if m.rss_mib is not None]
            rd = [m.read_kb_s for m in nm if m.read_kb_s is not None]
            host = [(h.cpu_user_pct or 0) + (h.cpu_sys_pct or 0) for h in hm]
            samples = max(1, len(nm) // nodes)
            acc.setdefault(tuple(t.cell_params.get(k) for k in keys), []).append((
                cpu / samples / nodes, med(rss), med(rd), peak.get(t.trial_id, math.nan),
                med(host)))
    finally:
        store.close()
    rows = [f"| {' | '.join(keys)} | CPU per node (% of a core) | RSS per node (MiB) | disk "
            "reads per node (kB/s) | data, all nodes (MiB) | host CPU (% of 2 cores) | n |",
            "|" + "---|" * (len(keys) + 6)]
    for key in sorted(acc, key=str):
        cols = list(zip(*acc[key], strict=True))
        rows.append(f"| {' | '.join(str(k) for k in key)} | "
                    + " | ".join(f"{med(list(c)):.1f}" for c in cols) + f" | {len(acc[key])} |")
    return rows


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def iqr(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return math.nan
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[2] - q[0]


def fmt_p(p: float) -> str:
    return "n/a" if math.isnan(p) else (f"{p:.2g}" if p >= 0.001 else f"{p:.1e}")


def node_count(links: Cells, ram: Cells) -> tuple[list[str], Verdict]:
    """Finding 1: run time grows with node count (small database)."""
    rows = ["| workload | nodes | paper (ms / 1,000 ops) | paper ratio to 1 node | casslab Pi eth "
            "median (ms / 1,000 ops) | casslab ratio to 1 node | n |",
            "|---|---|---|---|---|---|---|"]
    tests = []
    for wl in WORKLOADS:
        base = med(links.get((1, "ethernet-100", wl), []))
        for n in (1, 2, 3, 6):
            ours = links.get((n, "ethernet-100", wl), [])
            paper = TABLE3_MS.get((wl, n))
            pbase = TABLE3_MS.get((wl, 1))
            if not ours and paper is None:
                continue
            p_ms = f"{paper / 10:.0f}" if paper else "-"
            p_ratio = f"{paper / pbase:.2f}" if paper and pbase else "-"
            o_ms = f"{med(ours):.0f}" if ours else "not run here"
            o_ratio = f"{med(ours) / base:.2f}" if ours else "-"
            rows.append(f"| {wl} | {n} | {p_ms} | {p_ratio} | {o_ms} | {o_ratio} | {len(ours)} |")
        xs = [(n, v) for n in (1, 2, 3) for v in links.get((n, "ethernet-100", wl), [])]
        if len({n for n, _ in xs}) > 1:
            rho, p = st.spearmanr([n for n, _ in xs], [v for _, v in xs])
            tests.append((f"Pi eth {wl}", float(rho), float(p)))
    for mem in ("vm-1g", "vm-2g", "vm-4g"):
        a, b = ram.get((1, mem, "ycsb-i"), []), ram.get((2, mem, "ycsb-i"), [])
        if a and b:
            rho, p = st.spearmanr([1] * len(a) + [2] * len(b), a + b)
            tests.append((f"VM {mem} ycsb-i", float(rho), float(p)))
    grows = [t for t in tests if t[1] > 0 and t[2] < ALPHA]
    shrinks = [t for t in tests if t[1] < 0 and t[2] < ALPHA]
    ev = "; ".join(f"{name}: rho {rho:+.2f}, p {fmt_p(p)}" for name, rho, p in tests)
    if not tests:
        verdict = "inconclusive"
    elif len(grows) == len(tests):
        verdict = "holds"
    elif shrinks or len(grows) <= len(tests) // 2:
        verdict = "does not hold"
    else:
        verdict = "inconclusive"
    return rows, Verdict("Run time grows with node count for a small database (Table 3, "
                         "Figs 23-26)", verdict, f"Spearman rank correlation of run time "
                         f"with node count per series ({len(grows)} of {len(tests)} rise "
                         f"at p < 0.05): {ev}")


def wifi(links: Cells) -> tuple[list[str], Verdict]:
    """Finding 2: Wi-Fi slower than Ethernet. (The thesis makes no claim that Wi-Fi is
    more variable: section 5.1's deviation is a wired-vs-wireless difference, so the
    spread is described, IQR columns, and not tested.)"""
    rows = ["| workload | nodes | eth median (ms) | wifi median (ms) | wifi / eth | eth IQR "
            "(ms) | wifi IQR (ms) | Mann-Whitney p | paper: max eth-wlan deviation "
            "(ms / 1,000 ops) | casslab: max deviation (ms) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    slower, total = 0, 0
    ps: list[float] = []
    for wl in WORKLOADS:
        for n in (1, 2, 3):
            e, w = links.get((n, "ethernet-100", wl), []), links.get((n, "wifi", wl), [])
            if not e or not w:
                continue
            _, p, _ = mann_whitney(w, e)
            total += 1
            slower += int(med(w) > med(e) and p < ALPHA)
            ps.append(p)
            maxdev = max(abs(a - b) for a in w for b in e)
            rows.append(f"| {wl} | {n} | {med(e):.0f} | {med(w):.0f} | {med(w) / med(e):.2f} | "
                        f"{iqr(e):.0f} | {iqr(w):.0f} | {fmt_p(p)} | "
                        f"{WIFI_DEV_MS[wl] / 10:.0f} | {maxdev:.0f} |")
    return rows, Verdict("Wi-Fi is slower than Ethernet at every cluster size (Figs 19-22)",
                         "holds" if total and slower == total else
                         ("inconclusive" if slower else "does not hold"),
                         f"Mann-Whitney U, wifi vs eth per (workload, nodes) cell: wifi "
                         f"slower at p < 0.05 in {slower} of {total} cells (largest p "
                         f"{fmt_p(max(ps)) if ps else 'n/a'})")


def odd_even(links: Cells) -> Verdict:
    """Under Wi-Fi, odd node counts beat even ones for A, C, E (section 4.2)."""
    parts, hits, tested = [], 0, 0
    for wl in ("ycsb-a", "ycsb-c", "ycsb-e"):
        one, two, three = (links.get((n, "wifi", wl), []) for n in (1, 2, 3))
        if not (one and two and three):
            continue
        tested += 1
        _, p, _ = mann_whitney(two, one + three)
        up = med(two) > max(med(one), med(three))
        hits += int(up and p < ALPHA)
        parts.append(f"{wl}: 2-node median {med(two):.0f} ms vs 1 {med(one):.0f} / 3 "
                     f"{med(three):.0f}, p {fmt_p(p)}")
    if not tested:
        return Verdict("Under Wi-Fi, odd node counts beat even ones for A, C, E (section 4.2)",
                       "not tested", "needs 1, 2 and 3 nodes of one of A, C, E under Wi-Fi")
    verdict = ("holds" if hits == tested else "does not hold" if hits == 0 else
               "inconclusive")
    return Verdict("Under Wi-Fi, odd node counts beat even ones for A, C, E (section 4.2)",
                   verdict, "Mann-Whitney U, 2 nodes vs 1 and 3 pooled: " + "; ".join(parts))


def _boot_diff(one: Sequence[float], two: Sequence[float], four: Sequence[float],
               rng: random.Random) -> float:
    """(median 2g - median 4g) - (median 1g - median 2g) of one resample."""
    r1, r2, r4 = ([rng.choice(xs) for _ in xs] for xs in (one, two, four))
    return (med(r2) - med(r4)) - (med(r1) - med(r2))


def ram_effect(ram: Cells) -> tuple[list[str], Verdict]:
    """Finding 3: RAM 2 -> 4 GB helps more than 1 -> 2 GB (workload I, Fig 18)."""
    rows = ["| nodes | 1 GB median (ms) | 2 GB median (ms) | 4 GB median (ms) | gain 1->2 GB "
            "(ms) | gain 2->4 GB (ms) | p 1 vs 2 GB | p 2 vs 4 GB | P(gain 2->4 <= gain "
            "1->2), bootstrap |", "|---|---|---|---|---|---|---|---|---|"]
    rng = random.Random(0)
    holds, tested, parts = 0, 0, []
    for n in (1, 2):
        one, two, four = (ram.get((n, m, "ycsb-i"), []) for m in ("vm-1g", "vm-2g", "vm-4g"))
        if not (one and two and four):
            continue
        tested += 1
        g12, g24 = med(one) - med(two), med(two) - med(four)
        p12, p24 = mann_whitney(one, two)[1], mann_whitney(two, four)[1]
        boot = [_boot_diff(one, two, four, rng) for _ in range(BOOT)]
        p_more = sum(d <= 0 for d in boot) / BOOT
        rows.append(f"| {n} | {med(one):.0f} | {med(two):.0f} | {med(four):.0f} | {g12:.0f} | "
                    f"{g24:.0f} | {fmt_p(p12)} | {fmt_p(p24)} | {p_more:.3f} |")
        holds += int(g24 > 0 and p24 < ALPHA and p_more < ALPHA)
        parts.append(f"{n} node(s): gain 1->2 GB {g12:.0f} ms (p {fmt_p(p12)}), 2->4 GB "
                     f"{g24:.0f} ms (p {fmt_p(p24)}), bootstrap P(2->4 <= 1->2) {p_more:.3f}")
    verdict = ("holds" if tested and holds == tested else
               "does not hold" if tested and holds == 0 else "inconclusive")
    return rows, Verdict("RAM 2 -> 4 GB helps more than 1 -> 2 GB (workload I, Fig 18)",
                         verdict, "Mann-Whitney U per step and a bootstrap of the medians' "
                         f"gains ({BOOT} resamples): " + "; ".join(parts))


def sweep(sw: Cells) -> tuple[list[str], Verdict]:
    """Fig 17: 1-node VM, workload E: falls 1024 -> ~1408 MB, flat from ~1532 MB."""
    levels = sorted(k[0] for k in sw)  # type: ignore[type-var]
    rows = ["| VM RAM (MiB) | median (ms / 1,000 ops) | IQR (ms) | n |", "|---|---|---|---|"]
    for m in levels:
        xs = sw[(m,)]
        rows.append(f"| {m} | {med(xs):.0f} | {iqr(xs):.0f} | {len(xs)} |")
    if len(levels) < 3:
        return rows, Verdict("Fig 17: run time falls from 1024 to ~1408 MB, then flattens",
                             "inconclusive", "fewer than 3 RAM levels ran")
    lo, mid, hi = (sw[(m,)] for m in (levels[0], levels[len(levels) // 2], levels[-1]))
    _, p_fall, _ = mann_whitney(lo, mid)
    _, p_flat, _ = mann_whitney(mid, hi)
    falls = med(lo) > med(mid) and p_fall < ALPHA
    rises = med(lo) < med(mid) and p_fall < ALPHA
    # "flattens": no significant further fall, or one under half the first step's
    keeps_falling = (med(mid) > med(hi) and p_flat < ALPHA
                     and med(mid) - med(hi) >= (med(lo) - med(mid)) / 2)
    verdict = ("holds" if falls and not keeps_falling else
               "does not hold" if rises or (falls and keeps_falling) else "inconclusive")
    kw = st.kruskal(*(sw[(m,)] for m in levels))
    return rows, Verdict(
        "Fig 17: run time falls from 1024 MB to ~1408 MB, then flattens (1 node, workload E)",
        verdict, f"Kruskal-Wallis over the levels p {fmt_p(float(kw.pvalue))}; Mann-Whitney "
        f"{levels[0]} vs {levels[len(levels) // 2]} MiB p {fmt_p(p_fall)} (medians "
        f"{med(lo):.0f} -> {med(mid):.0f} ms), {levels[len(levels) // 2]} vs {levels[-1]} MiB "
        f"p {fmt_p(p_flat)} ({med(mid):.0f} -> {med(hi):.0f} ms)")


def draw_23_26(links: Cells, ram: Cells, out: Path) -> None:
    """Median run time per node count: rp-1GB (Pi eth), vm-1GB, ref-2GB (Table 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6), sharex=True)
    for ax, wl, num in zip(axes, WORKLOADS, (23, 24, 25, 26), strict=True):
        for label, series, style in (
                ("rp-1GB (casslab rpi2, eth)",
                 {n: med(links.get((n, "ethernet-100", wl), [])) for n in (1, 2, 3)}, "o-C0"),
                ("vm-1GB (casslab vm-1g)",
                 {n: med(ram.get((n, "vm-1g", wl), [])) for n in (1, 2)}, "s-C2"),
                ("ref-2GB (Table 3, / 10)",
                 {n: TABLE3_MS[(wl, n)] / 10 for n in (1, 3, 6) if (wl, n) in TABLE3_MS},
                 "^--C1")):
            pts = [(n, v) for n, v in series.items() if not math.isnan(v)]
            if pts:
                ax.plot([n for n, _ in pts], [v for _, v in pts], style, label=label)
        ax.set_title(f"Fig {num} analogue: {wl}")
        ax.set_xlabel("nodes")
        ax.set_xticks([1, 2, 3, 4, 5, 6])
    axes[0].set_ylabel("median run time, ms per 1,000 ops")
    handles = {lab: h for ax in axes for h, lab in zip(*ax.get_legend_handles_labels(),
                                                        strict=True)}
    fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=3, fontsize=8)
    fig.subplots_adjust(top=0.8)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "reproduce")
    ap.add_argument("--img", type=Path, help="draw the Figs 23-26 analogue into this folder")
    args = ap.parse_args()
    base = args.results
    links = cells(base / "000-rpi-iot-links", ("nodes", "network", "workload"))
    ram_dir = base / "000-rpi-iot-ram"
    ram = cells(ram_dir, ("nodes", "profile", "workload")) if ram_dir.is_dir() else {}
    sw_dir = base / "000-rpi-iot-ram-sweep"
    sw = cells(sw_dir, ("profile.memory_mib",)) if sw_dir.is_dir() else {}
    verdicts: list[Verdict] = []
    t1, v1 = node_count(links, ram)
    t2, v2 = wifi(links)
    verdicts += [v1, v2, odd_even(links)]
    print("### Node count (Table 3; Figs 23-26)\n\n" + "\n".join(t1) + "\n")
    print("### Ethernet vs Wi-Fi (Figs 19-22; section 5.1)\n\n" + "\n".join(t2) + "\n")
    if ram:
        t3, v3 = ram_effect(ram)
        verdicts.append(v3)
        print("### VM RAM, workload I (Fig 18)\n\n" + "\n".join(t3) + "\n")
    if sw:
        t4, v4 = sweep(sw)
        verdicts.append(v4)
        print("### RAM sweep, 1 node, workload E (Fig 17)\n\n" + "\n".join(t4) + "\n")
    print("### What the nodes did (medians of kept trials)\n")
    print("Links campaign:\n\n" + "\n".join(resources(base / "000-rpi-iot-links",
                                                      ("nodes", "network", "workload"))) + "\n")
    if ram:
        print("RAM campaign:\n\n" + "\n".join(resources(ram_dir, ("nodes", "profile")))
              + "\n")
    if sw:
        print("RAM sweep:\n\n" + "\n".join(resources(sw_dir, ("profile.memory_mib",)))
              + "\n")
    mem_dir = base / "000-rpi-iot-ram-memory"
    if mem_dir.is_dir():
        # ram.yaml's `memory` scale: the study's 1,000,000 rows on the one-node VMs.
        mem = cells(mem_dir, ("profile", "workload"))
        print("### VM RAM at 1,000,000 rows (scale `memory`)\n\n| profile | workload | run "
              "time, ms per 1,000 ops (median) | IQR | n |\n|---|---|---|---|---|")
        for (profile, workload), ms in sorted(mem.items(), key=str):
            print(f"| {profile} | {workload} | {med(ms):.0f} | {iqr(ms):.0f} | {len(ms)} |")
        print("\n" + "\n".join(resources(mem_dir, ("profile", "workload"))) + "\n")
    print("### Verdicts\n\n| finding | verdict | test and p |\n|---|---|---|")
    for v in verdicts:
        print(f"| {v.finding} | **{v.verdict}** | {v.evidence} |")
    if args.img:
        draw_23_26(links, ram, args.img / "000-fig23-26.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
