"""Link conditions on real hosts, applied, measured and cleared over SSH (library API).

    async with Fleet(inventory.hosts, known_hosts=...) as fleet:
        state = await apply_hosts(fleet, inventory, NetSpec(links=(("pi1-pi2", {"delay_ms": 20}),)))
        rows = await check_hosts(fleet, state)        # list[net.LinkCheck], one per link
        await clear_hosts(fleet, inventory)

Which host pair gets what, and the rules each host installs: see linkrules.py. Every host
is set up at once. Each host keeps what it installed in `<install root>/net/` (state.json,
the daemon's config, pid and log, the tc device), written before anything is installed,
so `clear_hosts` removes it all after a crash of the controller too.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from casslab.net import hostprobe
from casslab.net.errors import NetSpecError
from casslab.net.linkcheck import LinkCheck, percentile
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import NetSpec
from casslab.testbed.hosts import linkrules
from casslab.testbed.hosts.inventory import Host, Inventory
from casslab.testbed.hosts.linkrules import HostLink
from casslab.testbed.hosts.ssh import Fleet, HostError

NET_DIR = "net"
QUEUE_NUM = 0
PROBE_PORT = 47123
PROBE_SCRIPT = "bin/casslab-hostprobe.py"
READY_TIMEOUT_S = 10.0
MODE_CHOICES = ("auto", *linkrules.MODES)

# Prints `tc` where the kernel has sch_netem (loaded, loadable, or built in), else `netem`.
DETECT = ("if [ -d /sys/module/sch_netem ] || modprobe -q sch_netem 2>/dev/null || "
          "{ zcat /proc/config.gz 2>/dev/null; cat /boot/config-$(uname -r) 2>/dev/null; } "
          "| grep -q '^CONFIG_NET_SCH_NETEM=y'; then echo tc; else echo netem; fi")

T = TypeVar("T")


@dataclass(frozen=True)
class HostNet:
    """What one host enforces on its data interface `device`: `mode` tc (its egress:
    htb + netem) or netem (its egress: rates only); `daemon_pid`: its casslab-netem, for
    incoming links from senders in mode netem (linkrules.host_plan)."""

    host: str
    mode: str
    device: str
    daemon_pid: int | None = None
    # False: chrt -f 50 was not permitted, the daemon runs at normal priority.
    daemon_realtime: bool = True


@dataclass
class HostsNetState:
    """The link conditions applied across an inventory's hosts."""

    links: list[HostLink]
    hosts: dict[str, HostNet]
    seed: int = 1
    warnings: list[str] = field(default_factory=list)


def _net_dir(host: Host) -> str:
    return f"{host.install_root}/{NET_DIR}"


async def _all(tasks: list[Awaitable[T]]) -> list[T]:
    """Every task to its end (none cancelled halfway through a host's rules), then the
    first failure, if any."""
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results  # type: ignore[return-value]


def _hosts_of(inventory: Inventory) -> list[Host]:
    names = linkrules.endpoint_names(inventory)
    return [h for h in inventory.hosts if h.name in names]


async def detect_mode(fleet: Fleet, host: Host) -> str:
    """`tc` where the host's kernel has sch_netem, else `netem` (casslab-netem)."""
    out = (await fleet.run_on(host, DETECT)).stdout.strip()
    return out if out in linkrules.MODES else "netem"


async def apply_hosts(fleet: Fleet, inventory: Inventory, spec: NetSpec, *,
                      mode: str = "auto") -> HostsNetState:
    """Apply `spec` to the links between the inventory's hosts, replacing any conditions
    applied before. `mode` auto picks tc or casslab-netem per host (see `detect_mode`).

    Raises NetSpecError for a bad spec or mode (before any host is touched), HostError
    naming the host when a step fails there; then every host is cleared again.
    """
    if mode not in MODE_CHOICES:
        raise NetSpecError(f"mode: '{mode}' is not one of {', '.join(MODE_CHOICES)}")
    links = linkrules.host_links(inventory, spec)
    hosts = _hosts_of(inventory)
    seed = spec.seed if spec.seed is not None else 1
    await clear_hosts(fleet, inventory)
    modes = await _all([detect_mode(fleet, h) for h in hosts]) if mode == "auto" \
        else [mode] * len(hosts)
    ports = linkrules.ssh_ports(inventory)
    try:
        by_name = {h.name: m for h, m in zip(hosts, modes, strict=True)}
        applied = await _all([_apply_one(fleet, h, linkrules.host_plan(
            h, links, by_name, ports, seed=seed, queue_num=QUEUE_NUM), by_name[h.name],
            links, seed) for h in hosts])
    except BaseException:
        await clear_hosts(fleet, inventory)
        raise
    state = HostsNetState(links=links, hosts={a.host: a for a in applied}, seed=seed)
    state.warnings += [f"{a.host}: chrt -f 50 not permitted: casslab-netem runs at normal "
                       "priority (delays less precise under load)"
                       for a in applied if a.daemon_pid is not None and not a.daemon_realtime]
    if spec.cc:
        state.warnings.append(f"cc {spec.cc}: congestion control is left as each host has "
                              "it (set net.ipv4.tcp_congestion_control there)")
    return state


def _state_json(host: Host, mode: str, links: list[HostLink], seed: int) -> str:
    return json.dumps({
        "mode": mode, "device": host.data_interface, "seed": seed,
        "links": [{"src": k.src.name, "dst": k.dst.name, "mark": k.mark,
                   **k.conditions.to_dict()} for k in links]})


def _write(path: str, text: str) -> str:
    return f"printf %s {shlex.quote(text)} > {shlex.quote(path)}"


async def _apply_one(fleet: Fleet, host: Host, plan: linkrules.HostPlan, mode: str,
                     links: list[HostLink], seed: int) -> HostNet:
    d = _net_dir(host)
    dev = host.data_interface
    await _require(fleet, host, plan, dev)
    steps = [f"mkdir -p {shlex.quote(d)}",
             _write(f"{d}/state.json", _state_json(host, mode, links, seed))]
    if plan.tc:
        # Noted before the qdisc exists, so a clear after a crash knows to remove it.
        steps.append(_write(f"{d}/tc-device", dev))
        steps += [shlex.join(argv) for argv in plan.tc]
    await fleet.run_on(host, " && ".join(steps))
    pid, realtime = None, True
    if plan.daemon is not None and plan.iptables is not None:
        pid, realtime = await _start_daemon(fleet, host, plan.daemon)
        await fleet.run_on(host, f"printf %s {shlex.quote(plan.iptables)} | iptables-restore "
                                 f"--noflush && iptables -t mangle -I PREROUTING 1 -i "
                                 f"{shlex.quote(dev)} -j {linkrules.CHAIN}")
    return HostNet(host.name, mode, dev, pid, realtime)


async def _require(fleet: Fleet, host: Host, plan: linkrules.HostPlan, dev: str) -> None:
    """The data interface and the tools `plan` needs exist; else one line naming them."""
    tools = (["tc"] if plan.tc else []) + \
        (["iptables", "iptables-restore"] if plan.daemon else [])
    checks = [f"ip link show dev {shlex.quote(dev)} >/dev/null 2>&1 || "
              f"{{ echo 'data interface {dev} not found (casslab_data_interface)'; exit 1; }}"]
    checks += [f"command -v {t} >/dev/null || {{ echo '{t} not found (install iproute2 and "
               f"iptables)'; exit 1; }}" for t in tools]
    if plan.daemon:
        binary = f"{host.install_root}/bin/casslab-netem"
        checks.append(f"test -x {shlex.quote(binary)} || {{ echo '{binary} missing (the "
                      "casslab playbook installs it: provision the host)'; exit 1; }")
    r = await fleet.run_on(host, "; ".join(checks), check=False)
    if r.exit_status != 0:
        raise HostError(f"{host.name}: {r.stdout.strip() or r.stderr.strip()}")


async def _start_daemon(fleet: Fleet, host: Host, cfg: dict[str, Any]) -> tuple[int, bool]:
    """Start casslab-netem detached (SCHED_FIFO 50 when allowed), wait until it is bound;
    its pid and whether it runs at real-time priority."""
    d = _net_dir(host)
    binary = shlex.quote(f"{host.install_root}/bin/casslab-netem")
    q = shlex.quote
    script = "\n".join([
        _write(f"{d}/netem.json", json.dumps(cfg)),
        f": > {q(d + '/netem.log')}",
        "RT=; if chrt -f 50 true 2>/dev/null; then RT='chrt -f 50'; fi",
        # setsid: the daemon outlives this SSH session; every wrapper execs, so $! is it.
        f"setsid nohup $RT {binary} run --queue-num {QUEUE_NUM} --config "
        f"{q(d + '/netem.json')} --stats-file {q(d + '/netem-stats.json')} "
        f">> {q(d + '/netem.log')} 2>&1 < /dev/null &",
        f"echo $! > {q(d + '/netem.pid')}",
        f"i=0; while [ $i -lt {int(READY_TIMEOUT_S * 10)} ]; do",
        f"  grep -q '\"event\":\"ready\"' {q(d + '/netem.log')} && "
        f"{{ echo \"${{RT:-normal}}\"; cat {q(d + '/netem.pid')}; exit 0; }}",
        f"  kill -0 $(cat {q(d + '/netem.pid')}) 2>/dev/null || break",
        "  sleep 0.1; i=$((i+1)); done",
        f"tail -3 {q(d + '/netem.log')} | tr '\\n' ' '; exit 1"])
    r = await fleet.run_on(host, f"sh -c {q(script)}", check=False)
    if r.exit_status != 0:
        raise HostError(f"{host.name}: casslab-netem did not start within "
                        f"{READY_TIMEOUT_S:g} s; log {d}/netem.log: "
                        f"{r.stdout.strip() or r.stderr.strip() or '(empty)'}")
    return int(r.stdout.split()[-1]), "chrt" in r.stdout


def clear_script(host: Host) -> str:
    """Remove everything `apply_hosts` may have left on `host`, whatever its state file
    says or whether it exists (a crash may have come between any two steps)."""
    d = shlex.quote(_net_dir(host))
    return "\n".join([
        f"D={d}",
        'if [ -f "$D/netem.pid" ]; then P=$(cat "$D/netem.pid")',
        # Only a pid that is still casslab-netem: it may have been reused since.
        '  if grep -qa casslab-netem "/proc/$P/cmdline" 2>/dev/null; then kill "$P"',
        '    i=0; while kill -0 "$P" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; '
        "i=$((i+1)); done",
        '    kill -9 "$P" 2>/dev/null; fi; rm -f "$D/netem.pid"; fi',
        "if command -v iptables >/dev/null; then",
        f"  iptables -t mangle -S PREROUTING | grep -e '-j {linkrules.CHAIN}$' | "
        "sed 's/^-A/-D/' | while read -r rule; do iptables -t mangle $rule; done",
        f"  iptables -t mangle -F {linkrules.CHAIN} 2>/dev/null",
        f"  iptables -t mangle -X {linkrules.CHAIN} 2>/dev/null; fi",
        'if [ -f "$D/tc-device" ]; then tc qdisc del dev "$(cat "$D/tc-device")" root '
        '2>/dev/null; rm -f "$D/tc-device"; fi',
        'rm -f "$D/state.json" "$D/netem.json"',
        "true"])


async def clear_hosts(fleet: Fleet, inventory: Inventory) -> None:
    """Stop each host's casslab-netem, drop its rules and qdisc, forget its state; all
    hosts at once. Safe to repeat. Raises HostError naming a host that failed."""
    await _all([fleet.run_on(h, f"sh -c {shlex.quote(clear_script(h))}")
                for h in _hosts_of(inventory)])


async def load_hosts(fleet: Fleet, inventory: Inventory) -> HostsNetState | None:
    """The conditions applied across the inventory's hosts (from each host's state
    file), or None when none are."""
    hosts = _hosts_of(inventory)
    by_name = {h.name: h for h in hosts}
    got = await _all([fleet.run_on(h, f"cat {shlex.quote(_net_dir(h) + '/state.json')}",
                                   check=False) for h in hosts])
    try:
        states = {r.host: json.loads(r.stdout) for r in got if r.exit_status == 0}
    except ValueError as exc:
        raise HostError(f"a link state file under an install root is unreadable ({exc}): "
                        "clear it with `casslab net clear --inventory`") from None
    if not states:
        return None
    raw = next(iter(states.values()))
    links = [HostLink(by_name[x["src"]], by_name[x["dst"]], LinkConditions(
        **{k: v for k, v in x.items() if k not in ("src", "dst", "mark")}), int(x["mark"]))
        for x in raw["links"] if x["src"] in by_name and x["dst"] in by_name]
    return HostsNetState(links=links, seed=int(raw.get("seed", 1)), hosts={
        n: HostNet(n, str(s["mode"]), str(s["device"])) for n, s in states.items()})


# ---- net check ---------------------------------------------------------------------

def probe_plan(links: list[HostLink]) -> dict[str, list[str]]:
    """Which host pings which: each pair once, from the host that comes first in the
    link list (the inventory's order). Host name -> peer host names."""
    plan: dict[str, list[str]] = {}
    done: set[frozenset[str]] = set()
    for k in links:
        pair = frozenset((k.src.name, k.dst.name))
        if pair not in done:
            done.add(pair)
            plan.setdefault(k.src.name, []).append(k.dst.name)
    return plan


async def check_hosts(fleet: Fleet, state: HostsNetState, *, pings: int = 200,
                      interval_ms: float = 5.0, port: int = PROBE_PORT) -> list[LinkCheck]:
    """Measure every link of `state` across the hosts: round trip (p50/p99) per pair and
    loss per direction, with UDP pings between the hosts' data addresses (the probe
    runs on every host at once). One-way delays and rates are not measured here (the
    hosts' clocks are not compared): those fields are None.

    Raises NetSpecError for bad settings, HostError naming a host whose probe failed.
    """
    if pings < 10:
        raise NetSpecError(f"pings: {pings} is too few (valid: >= 10 round trips)")
    hosts = {k.src.name: k.src for k in state.links} | {k.dst.name: k.dst for k in state.links}
    plan = probe_plan(state.links)
    max_delay = max((k.conditions.delay_ms + k.conditions.jitter_ms for k in state.links),
                    default=0.0)
    start_s = 1.0  # every host's socket is bound before the first ping
    duration_s = start_s + pings * interval_ms / 1000 + 2 * max_delay / 1000 + 1.0
    script = Path(hostprobe.__file__)
    await _all([fleet.push(script, f"{h.install_root}/{PROBE_SCRIPT}", hosts=[h])
                for h in hosts.values()])

    async def probe(h: Host) -> dict[str, Any]:
        job = {"address": h.address, "port": port, "count": pings, "interval_ms": interval_ms,
               "start_s": start_s, "duration_s": duration_s,
               "peers": [hosts[p].address for p in plan.get(h.name, [])]}
        r = await fleet.run_on(h, f"python3 {shlex.quote(h.install_root + '/' + PROBE_SCRIPT)} "
                                  f"{shlex.quote(json.dumps(job))}",
                               timeout_s=duration_s + 30)
        out: dict[str, Any] = json.loads(r.stdout)
        if "error" in out:
            raise HostError(f"{h.name}: link probe failed: {out['error']}")
        return out

    results = dict(zip(hosts, await _all([probe(h) for h in hosts.values()]), strict=True))
    return link_checks(state.links, plan, results)


def link_checks(links: list[HostLink], plan: dict[str, list[str]],
                results: dict[str, dict[str, Any]]) -> list[LinkCheck]:
    """Rows of `net check` from every host's probe result (pure)."""
    cond = {(k.src.name, k.dst.name): k.conditions for k in links}
    addr = {k.src.name: k.src.address for k in links} | \
        {k.dst.name: k.dst.address for k in links}
    rows = []
    for k in links:
        a, b = k.src.name, k.dst.name
        forward = b in plan.get(a, [])
        pinger, echo = (a, b) if forward else (b, a)
        res_p, res_e = results[pinger], results[echo]
        rtt = res_p["rtt_ms"].get(addr[echo], [])
        sent = int(res_p["sent"].get(addr[echo], 0))
        echoed = int(res_e["echoed"].get(addr[pinger], 0))
        # a->b carries pings when a pinged, replies when b did.
        if forward:
            n_sent, n_got = sent, echoed
        else:
            n_sent, n_got = echoed, len(rtt)
        back = cond.get((b, a), LinkConditions())
        rows.append(LinkCheck(
            src=a, dst=b, configured=k.conditions,
            rtt_configured_ms=k.conditions.delay_ms + back.delay_ms,
            one_way_p50_ms=None,
            rtt_p50_ms=percentile(rtt, 50) if rtt else None,
            rtt_p99_ms=percentile(rtt, 99) if rtt else None,
            loss_pct=100.0 * (1 - n_got / n_sent) if n_sent else None,
            loss_packets=n_sent, reordered=None, rate_mbit=None, wire_rate_mbit=None))
    return rows
