"""Link conditions on real hosts, as data: which host pair gets what, and the tc argv,
iptables rules and casslab-netem config each host installs (pure functions).

Endpoints: the inventory's `nodes` are node1..N in inventory order, every host only in
`clients` is the link table's `client` (so client->node2 applies to each client host;
clients are not linked to each other). A spec may also name hosts by their inventory
names (`pi1-pi2`); they are translated to the table's names before it is resolved, so the
table means what it means in the local lab (`NetSpec.resolve`, written once).

Two ways to enforce a directed link A->B, chosen per host:
- `tc` (the kernel has sch_netem): on A's data interface, an htb class per destination
  (rate, or unlimited) with a netem leaf (delay, jitter, loss). Unclassified packets take
  htb's direct queue, unshaped.
- `netem` (casslab-netem, no sch_netem): on B, table mangle PREROUTING on the data
  interface marks A's packets to B and queues them to the daemon. Held at the receiver,
  not the sender: a packet held in the sender's OUTPUT counts against its socket's TCP
  small-queue budget and throughput collapses (as in the local lab, rules.py). Rates of
  links without a shared medium shape on A's egress with htb (no netem leaf).
Hosts of both modes mix: a link is enforced by its sender when that sender is in mode
tc, else by its receiver's casslab-netem (`host_plan`), never twice.
SSH (every host's ansible_port) is never conditioned: its packets match first and skip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from casslab.net.errors import NetSpecError
from casslab.net.linkprofiles import LinkConditions
from casslab.net.rules import BFIFO_LIMIT, MARK_TAG, MAX_LINKS, daemon_document
from casslab.net.spec import CLIENT, NetSpec, endpoints, media_rates
from casslab.testbed.hosts.inventory import Host, Inventory

CHAIN = "CASSLAB_NET"
FIRST_CLASS = 0x10
UNLIMITED_RATE = "10gbit"
NETEM_LIMIT = 10_000
MODES = ("tc", "netem")
_TABLE_ENDPOINT = re.compile(r"^(client|node[1-9][0-9]*|[1-9][0-9]*)$")


@dataclass(frozen=True)
class HostLink:
    """One directed link between two hosts, its conditions and packet mark."""

    src: Host
    dst: Host
    conditions: LinkConditions
    mark: int

    @property
    def label(self) -> str:
        return f"{self.src.name}->{self.dst.name}"


def endpoint_names(inventory: Inventory) -> dict[str, str]:
    """Host name -> link-table endpoint: nodes node1..N in order, other clients `client`."""
    out = {h.name: f"node{i}" for i, h in enumerate(inventory.nodes, start=1)}
    for h in inventory.clients:
        out.setdefault(h.name, CLIENT)
    return out


def _translate_link(text: str, names: dict[str, str]) -> str:
    """`pi1-pi2` -> `node1-node2`: each end that is an inventory host name becomes its
    table name (`pi1-node2` mixes both); anything else is left to the table's parser.
    Host names may contain `-`: every split is tried. NetSpecError names an end that is
    neither a host nor a table endpoint beside one that is a host."""
    raw = text.strip()
    unknown = None
    for sep in ("<->", "->", "-to-", "-"):
        start = 0
        while (at := raw.find(sep, start)) >= 0:
            ends = raw[:at].strip(), raw[at + len(sep):].strip()
            start = at + 1
            known = [names.get(e) or (e if _TABLE_ENDPOINT.match(e.lower()) else None)
                     for e in ends]
            if all(known):
                return f"{known[0]}{sep}{known[1]}"
            if any(e in names for e in ends) and unknown is None:
                unknown = ends[0] if known[0] is None else ends[1]
    if unknown is not None:
        table = endpoints(sum(1 for e in names.values() if e != CLIENT))
        raise NetSpecError(f"link {text}: unknown host '{unknown}' (valid: "
                           f"{', '.join(names)}; or {', '.join(table)})")
    return text


def spec_for_hosts(spec: NetSpec, inventory: Inventory) -> NetSpec:
    """`spec` with links named by inventory host names rewritten to table names."""
    names = endpoint_names(inventory)
    return replace(spec, links=tuple((_translate_link(n, names), f) for n, f in spec.links))


def checked_for_hosts(spec: NetSpec, inventory: Inventory) -> NetSpec:
    """`spec_for_hosts`, checked (`NetSpec.check`); an error names the link as the user
    wrote it (`link pi1-pi2: ...`), not as translated."""
    translated = spec_for_hosts(spec, inventory)
    try:
        translated.check()
    except NetSpecError as exc:
        message = str(exc)
        for (mine, _), (theirs, _) in zip(translated.links, spec.links, strict=True):
            if message.startswith(f"link {mine}:"):
                message = f"link {theirs}:" + message.removeprefix(f"link {mine}:")
                break
        raise NetSpecError(message) from None
    return translated


def translate_link_option(text: str, inventory: Inventory) -> str:
    """`pi1-pi2:delay=20ms` (a `--link` option) with its link named as in the table."""
    name, sep, rest = text.partition(":")
    return f"{_translate_link(name, endpoint_names(inventory))}{sep}{rest}"


def host_links(inventory: Inventory, spec: NetSpec) -> list[HostLink]:
    """Every directed link between two hosts of the inventory (clients not among each
    other), with the conditions the resolved table gives its endpoints.

    Raises NetSpecError naming a wrong field, link or profile.
    """
    names = endpoint_names(inventory)
    table = spec_for_hosts(spec, inventory).resolve(len(inventory.nodes))
    hosts = [h for h in inventory.hosts if h.name in names]
    out: list[HostLink] = []
    for a in hosts:
        for b in hosts:
            ea, eb = names[a.name], names[b.name]
            if a is b or ea == eb:
                continue
            out.append(HostLink(a, b, table[(ea, eb)], MARK_TAG | (len(out) + 1)))
    if len(out) > MAX_LINKS:
        raise NetSpecError(f"{len(hosts)} hosts make {len(out)} links; at most {MAX_LINKS}")
    return out


def ssh_ports(inventory: Inventory) -> list[int]:
    return sorted({h.port for h in inventory.hosts})


# ---- tc: htb per destination on the sender's data interface ----------------------------

def _netem_args(c: LinkConditions) -> list[str]:
    args = ["netem", "limit", str(NETEM_LIMIT)]
    if c.delay_ms > 0 or c.jitter_ms > 0:
        args += ["delay", f"{c.delay_ms:g}ms"]
        if c.jitter_ms > 0:
            args.append(f"{c.jitter_ms:g}ms")
    if c.loss_pct > 0:
        if c.loss_burst > 1:
            # Gilbert-Elliott with mean burst `loss_burst` and mean loss `loss_pct`:
            # leave the bad state with r = 1/burst; enter it with p = loss*r/(1-loss).
            loss = c.loss_pct / 100
            r = 1 / c.loss_burst
            args += ["loss", "gemodel", f"{100 * loss * r / (1 - loss):.6g}%",
                     f"{100 * r:.6g}%"]
        else:
            args += ["loss", "random", f"{c.loss_pct:g}%"]
    return args


def _rate(mbit: float | None) -> str:
    return UNLIMITED_RATE if mbit is None else f"{round(mbit * 1000)}kbit"


def tc_commands(links: list[HostLink], dev: str, ports: list[int], *,
                with_netem: bool) -> list[list[str]]:
    """argv lists building the sender's egress tree on `dev` for `links` (all leaving
    the same host). `with_netem`: netem leaves carry delay, jitter and loss (mode tc);
    without, only rates shape (mode netem: the daemon at the receiver does the rest).
    Empty when nothing needs shaping here."""
    chosen = [k for k in links if not k.conditions.is_clean] if with_netem else \
        [k for k in links if k.conditions.rate_mbit is not None and not k.conditions.shared]
    if not chosen:
        return []
    tc = ["tc"]
    out = [[*tc, "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "r2q", "1000"]]
    # SSH first, to htb's direct queue (classid 1:0): never delayed, dropped or shaped.
    for prio, port in enumerate(ports, start=1):
        for field in ("sport", "dport"):
            out.append([*tc, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip",
                        "prio", str(prio), "u32", "match", "ip", "protocol", "6", "0xff",
                        "match", "ip", field, str(port), "0xffff", "flowid", "1:0"])
    media = media_rates({(k.src.name, k.dst.name): k.conditions for k in chosen}) \
        if with_netem else {}
    n = FIRST_CLASS
    parents: dict[str, str] = {}
    for medium, mbit in media.items():
        # One sender's share of a medium: its links to every destination on the medium
        # borrow from one class (the air between hosts is not one queue here).
        parents[medium] = f"1:{n:x}"
        out.append([*tc, "class", "add", "dev", dev, "parent", "1:", "classid",
                    f"1:{n:x}", "htb", "rate", _rate(mbit), "ceil", _rate(mbit)])
        n += 1
    prio = len(ports) + 1
    for k in chosen:
        c = k.conditions
        parent = parents.get(c.medium or "", "1:") if with_netem and c.shared else "1:"
        rate = _rate(c.rate_mbit)
        out.append([*tc, "class", "add", "dev", dev, "parent", parent, "classid", f"1:{n:x}",
                    "htb", "rate", rate, "ceil", rate])
        leaf = _netem_args(c) if with_netem and c.needs_daemon else \
            ["bfifo", "limit", BFIFO_LIMIT]
        out.append([*tc, "qdisc", "add", "dev", dev, "parent", f"1:{n:x}", "handle",
                    f"{n:x}:", *leaf])
        out.append([*tc, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip",
                    "prio", str(prio), "u32", "match", "ip", "dst", f"{k.dst.address}/32",
                    "flowid", f"1:{n:x}"])
        n += 1
    return out


# ---- netem: casslab-netem at the receiver ----------------------------------------------

def iptables_restore(links: list[HostLink], ports: list[int], queue_num: int) -> str:
    """Input for `iptables-restore --noflush` on the receiving host of `links`: fills
    chain CASSLAB_NET (jumped to from PREROUTING on the data interface)."""
    lines = ["*mangle", f":{CHAIN} - [0:0]"]
    if ports:
        lines.append(f"-A {CHAIN} -p tcp -m multiport --ports "
                     f"{','.join(map(str, ports))} -j RETURN")
    for k in links:
        if not k.conditions.needs_daemon:
            continue
        lines += [f"-A {CHAIN} -s {k.src.address}/32 -d {k.dst.address}/32 "
                  f"-j MARK --set-mark {k.mark:#x}",
                  f"-A {CHAIN} -m mark --mark {k.mark:#x} "
                  f"-j NFQUEUE --queue-num {queue_num} --queue-bypass"]
    lines += ["COMMIT", ""]
    return "\n".join(lines)


def daemon_config(links: list[HostLink], seed: int) -> dict[str, Any]:
    """The casslab-netem config of the receiving host of `links` (same form as the local
    lab's: one entry per link that needs the daemon, named by its mark)."""
    need = [k for k in links if k.conditions.needs_daemon]
    media = media_rates({(k.src.name, k.dst.name): k.conditions for k in need})
    return daemon_document([(k.mark, k.label, k.conditions) for k in need], media, seed)


# ---- one host's share -----------------------------------------------------------------

@dataclass(frozen=True)
class HostPlan:
    """What one host installs: `tc` argv on its egress; for the daemon, its rules and
    config (None when no incoming link needs it)."""

    tc: list[list[str]]
    iptables: str | None
    daemon: dict[str, Any] | None


def host_plan(host: Host, links: list[HostLink], modes: dict[str, str], ports: list[int],
              *, seed: int, queue_num: int) -> HostPlan:
    """`host`'s part of `links`, given every host's mode (host name -> tc | netem).

    Each link is enforced once: by its sender's netem leaves when the sender is in mode
    tc, else by the receiver's casslab-netem (whatever the receiver's own mode: a tc
    host still receives from casslab-netem senders).
    """
    out = [k for k in links if k.src.name == host.name]
    into = [k for k in links if k.dst.name == host.name and modes[k.src.name] != "tc"]
    tc = tc_commands(out, host.data_interface, ports, with_netem=modes[host.name] == "tc")
    cfg = daemon_config(into, seed)
    if not cfg["links"]:
        return HostPlan(tc, None, None)
    return HostPlan(tc, iptables_restore(into, ports, queue_num), cfg)
