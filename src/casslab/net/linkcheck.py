"""`net check`: measure every link where its packets start and set it beside its config.

Runtime process: every endpoint in the lab's namespace, links told apart by the opener's
cgroup. Runtimes netns and lxc (routed): each endpoint has a network stack of its own,
and a probe's sockets for an address are made in the stack of the endpoint owning it,
so the probe's packets cross that endpoint's veth, the bridge and the router."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casslab.net import identity
from casslab.net.emulator import NetState
from casslab.net.errors import NetError, NetSpecError
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import CLIENT, Link, parse_link_name
from casslab.system import netns as netns_mod

PROBE_PRIORITY = 40


@dataclass(frozen=True)
class LinkCheck:
    """Configured vs measured for one directed link. Units in names; None = not measured."""

    src: str
    dst: str
    configured: LinkConditions
    rtt_configured_ms: float
    one_way_p50_ms: float | None
    rtt_p50_ms: float | None
    rtt_p99_ms: float | None
    loss_pct: float | None
    loss_packets: int
    reordered: int | None
    rate_mbit: float | None
    """TCP goodput (payload bytes)."""
    wire_rate_mbit: float | None
    """Goodput scaled to the bytes htb shapes: full segments of MTU + 14 (lo's Ethernet
    header) per MSS of payload."""


def wire_rate(goodput_mbit: float, mss: int, mtu: int = 1500) -> float:
    """Goodput -> rate of full-size frames as the qdisc counts them."""
    return goodput_mbit * (mtu + 14) / mss


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


def owner_of(link: Link, identities: dict[str, str]) -> str | None:
    """Whose cgroup opens a probe flow for `link`: the source node for node->node links,
    nobody's (the client's: ctmark 0) when the client is an endpoint."""
    src, dst = link
    if CLIENT in (src, dst) or src not in identities:
        return None
    return src


def identity_dirs(identities: dict[str, str]) -> dict[str, Path]:
    """node name -> its identity cgroup directory (only those that exist now)."""
    mount = identity.v2_mount()
    if mount is None:
        return {}
    return {n: mount / p for n, p in identities.items() if (mount / p).is_dir()}


def open_stacks(stacks: dict[str, Path]) -> dict[str, int]:
    """Open each network namespace file (address -> `nsenter --net` path) for the probe
    worker. The caller closes the descriptors; NetError names a path that cannot be."""
    fds: dict[str, int] = {}
    for addr, path in stacks.items():
        try:
            fds[addr] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            for fd in fds.values():
                os.close(fd)
            raise NetError(f"cannot open the network namespace {path} of {addr}: "
                           f"{exc.strerror}") from exc
    return fds


def run_probe(netns: str, job: dict[str, Any], timeout_s: float,
              cgroups: dict[str, Path] | None = None,
              stacks: dict[str, Path] | None = None) -> dict[str, Any]:
    """Run the probe worker in `netns` (at real-time priority when allowed).

    `cgroups` maps the owners named in the job's links (node names) to cgroup v2
    directories: their `cgroup.procs` are opened here, before entering the namespace,
    and passed to the worker with this process's own cgroup as "home". `stacks` maps
    endpoint addresses to the network namespaces their sockets are made in.
    """
    base = netns_mod.exec_prefix(netns)
    rt = subprocess.run([*base, "chrt", "-f", str(PROBE_PRIORITY), "true"],
                        capture_output=True, check=False).returncode == 0
    cmd = [*base, *(["chrt", "-f", str(PROBE_PRIORITY)] if rt else []),
           sys.executable, "-m", "casslab.net.probe"]
    fds: dict[str, int] = {}
    if cgroups:
        mount = identity.v2_mount()
        if mount is None:
            raise NetError("no cgroup v2 hierarchy mounted: probes cannot join node cgroups")
        fds = identity.open_procs({**cgroups, "home": identity.own_cgroup_dir(mount)})
        job = {**job, "cgroup_fds": fds}
    if stacks:
        try:
            ns_fds = open_stacks(stacks)
        except NetError:
            for fd in fds.values():
                os.close(fd)
            raise
        job = {**job, "netns_fds": ns_fds}
        # Keyed by address: not to be mixed with the cgroup owners' names.
        fds = {**fds, **{f"netns {a}": fd for a, fd in ns_fds.items()}}
    try:
        proc = subprocess.run(cmd, input=json.dumps(job), capture_output=True, text=True,
                              timeout=timeout_s, check=False, pass_fds=tuple(fds.values()))
    except subprocess.TimeoutExpired as exc:
        raise NetError(f"link probe in {netns} took longer than {timeout_s:.0f} s") from exc
    finally:
        for fd in fds.values():
            os.close(fd)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        raise NetError(f"link probe in {netns} exited {proc.returncode}: {' | '.join(tail)}")
    result: dict[str, Any] = json.loads(proc.stdout)
    if "error" in result:
        raise NetError(f"link probe in {netns}: {result['error']}")
    return result


def check_options(*, links: list[str] | None, pings: int, loss_packets: int,
                  bandwidth_s: float) -> None:
    """Refuse bad probe settings (named as the options of `net check`) before any lab is
    opened; link names are checked for their form only, the lab's size comes later."""
    if pings < 10:
        raise NetSpecError(f"--pings: {pings} is too few (valid: >= 10 round trips)")
    if loss_packets < 0:
        raise NetSpecError(f"--loss-packets: {loss_packets} is negative (valid: >= 0; "
                           "0 skips the loss probe)")
    # `not >` also refuses nan.
    if not (math.isfinite(bandwidth_s) and bandwidth_s > 0.5):
        raise NetSpecError(f"--bandwidth-seconds: {bandwidth_s} is out of range "
                           "(valid: a finite number > 0.5)")
    for name in links or []:
        parse_link_name(name, None, f"--link {name}")


def endpoint_stacks(state: NetState, chosen: list[Link],
                    endpoints: dict[str, Path] | None) -> dict[str, Path]:
    """Routed labs: address -> network namespace path of every endpoint of `chosen`
    (`endpoints`: endpoint name -> path, as the lab's runtime has them now). Empty for
    runtime process, whose endpoints share the lab's namespace. NetError names an
    endpoint without a network stack (a stopped node)."""
    if state.routed is None:
        return {}
    have = endpoints or {}
    out: dict[str, Path] = {}
    for name in dict.fromkeys(e for link in chosen for e in link):
        path = have.get(name)
        if path is None or not path.exists():
            start = "" if name == CLIENT else \
                f"; start it with `casslab lab start {name.removeprefix('node')}`"
            raise NetError(f"net check: {name} has no network namespace now (is it "
                           f"running?){start}")
        out[state.addresses[name]] = path
    return out


def check(state: NetState, *, links: list[str] | None = None, pings: int = 200,
          loss_packets: int = 2000, bandwidth: bool = True, bandwidth_s: float = 2.0,
          endpoints: dict[str, Path] | None = None) -> list[LinkCheck]:
    """Measure round trip (p50/p99, per pair), one-way delay and loss (per directed
    link) and TCP goodput (rate-limited links only, one flow at a time).

    Bounded: `pings` per pair every 5 ms, `loss_packets` per link (<= 10k packets/s
    in total), `bandwidth_s` per limited link. On a routed lab (runtimes netns, lxc)
    `endpoints` maps every endpoint (client, node<i>) to its network namespace path,
    where the probe makes that endpoint's sockets. Raises NetError when a namespace is
    gone or a probe fails, NetSpecError for an unknown link.
    """
    check_options(links=links, pings=pings, loss_packets=loss_packets,
                  bandwidth_s=bandwidth_s)
    if not netns_mod.exists(state.netns):
        raise NetError(f"network namespace {state.netns} does not exist (is the lab up?)")
    chosen: list[Link] = list(state.table)
    if links:
        chosen = []
        for name in links:
            for k in parse_link_name(name, state.node_count, f"--link {name}"):
                if k not in chosen:
                    chosen.append(k)
    addr = state.addresses
    ids = state.identities
    stacks = endpoint_stacks(state, chosen, endpoints)

    def entry(link: Link) -> list[str | None]:
        return [addr[link[0]], addr[link[1]], owner_of(link, ids)]

    pairs: list[Link] = []
    for a, b in chosen:
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((a, b))
    max_delay = max((c.delay_ms + c.jitter_ms for c in state.table.values()), default=0.0)
    wait_s = 2 * max_delay / 1000 + 1.0
    job: dict[str, Any] = {
        "wait_s": wait_s,
        "delay": {"pairs": [entry(k) for k in pairs], "count": pings,
                  "interval_ms": 5.0},
    }
    if loss_packets:
        job["loss"] = {"links": [entry(k) for k in chosen],
                       "count": loss_packets, "rate_pps": min(10000.0, 5000.0 * len(chosen))}
    limited = [k for k in chosen if state.table[k].rate_mbit is not None]
    if bandwidth and limited:
        job["bandwidth"] = {"links": [entry(k) for k in limited],
                            "duration_s": bandwidth_s,
                            "warmup_s": min(bandwidth_s / 2, 0.3 + 8 * max_delay / 1000)}
    budget = (pings * 0.005 + wait_s) + (len(chosen) * loss_packets / 2000 + wait_s) \
        + len(limited) * bandwidth_s + 30
    owners = {o for k in chosen for o in (owner_of(k, ids), owner_of((k[1], k[0]), ids)) if o}
    cgroups = {n: d for n, d in identity_dirs(ids).items() if n in owners}
    result = run_probe(state.netns, job, budget, cgroups, stacks)
    by_addr = {v: k for k, v in addr.items()}
    delay_rows = {(by_addr[r["pair"][0]], by_addr[r["pair"][1]]): r for r in result["delay"]}
    loss_rows = {(by_addr[r["link"][0]], by_addr[r["link"][1]]): r
                 for r in result.get("loss", [])}
    bw_rows = {(by_addr[r["link"][0]], by_addr[r["link"][1]]): r
               for r in result.get("bandwidth", [])}
    out = []
    for a, b in chosen:
        fwd = (a, b) in delay_rows
        d = delay_rows.get((a, b)) or delay_rows[(b, a)]
        one_way = d["forward_ms"] if fwd else d["backward_ms"]
        lo = loss_rows.get((a, b))
        bw = bw_rows.get((a, b))
        cond = state.table[(a, b)]
        out.append(LinkCheck(
            src=a, dst=b, configured=cond,
            rtt_configured_ms=cond.delay_ms + state.table[(b, a)].delay_ms,
            one_way_p50_ms=statistics.median(one_way) if one_way else None,
            rtt_p50_ms=percentile(d["rtt_ms"], 50) if d["rtt_ms"] else None,
            rtt_p99_ms=percentile(d["rtt_ms"], 99) if d["rtt_ms"] else None,
            loss_pct=(100.0 * (1 - lo["received"] / lo["sent"])) if lo else None,
            loss_packets=lo["sent"] if lo else 0,
            reordered=lo["reordered"] if lo else None,
            rate_mbit=bw["mbit"] if bw else None,
            wire_rate_mbit=wire_rate(bw["mbit"], int(bw["mss"])) if bw else None,
        ))
    return out
