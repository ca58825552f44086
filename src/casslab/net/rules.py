"""Turn a link table into packet rules, queues and the daemon's config (pure functions).

Links are told apart by who opened the connection, not by addresses: Cassandra does
not bind its outbound internode sockets to its listen address (node1's connection to
node2 leaves from 127.0.1.2 or, with the client route below, 127.0.0.1), so a packet's
addresses do not say which node sent it. Instead, in table mangle of the lab's namespace:

- Owner: every connection a node opens gets conntrack mark (ctmark) i, from the cgroup
  v2 identity cgroup of node i (`-m cgroup --path casslab/<lab>/node<i>`) of the
  socket that sends its first ORIGINAL packet. Connections opened by anything else
  (casslab-load, the CQL worker: "the client") keep ctmark 0. `casslab lab up` installs
  the same marks (chain CASSLAB_ID) before the nodes start; the rule here also marks
  connections that predate it, on their next packet from the opener.
- Link: in OUTPUT (before lo's egress qdisc) each packet of a conditioned link gets the
  skb mark `MARK_TAG | k` (k = the link's 1-based position in `all_links`):
  ctmark i, direction ORIGINAL, to node j's address -> node i->node j; ctmark i,
  direction REPLY, from node j's address -> node j->node i; ctmark 0 from 127.0.0.1 to
  node j -> client->node j and back -> node j->client. The skb mark survives lo into
  PREROUTING.
- Delay, jitter, loss: PREROUTING sends marked packets of links that need the daemon
  to NFQUEUE with `--queue-bypass` (in OUTPUT a held packet counts against the
  sender's TCP small-queue limit and throughput collapses; notes/facts.md).
  casslab-netem finds the link by the packet's mark.
- Bandwidth: one htb class per rate-limited directed link on lo, leaf `bfifo limit 64kb`
  (the default 1000-packet queue gave 394 ms of bufferbloat at 10 Mbit), `r2q 1000`.
  One classic-BPF `bpf` filter maps skb marks to classes (this kernel has neither the
  `fw` classifier nor u32's mark match; cls_bpf is built in everywhere that matters).
- Shared media: links with a `medium` and a rate get no htb class; casslab-netem sends
  them one packet at a time from the medium's one budget (a `group` in its config).

Routed mode (runtimes netns and lxc, casslab.lab.bridge): every endpoint, the client too,
sits in a namespace of its own behind a veth, and its packets are routed through the
namespace holding the rules. Each endpoint's only address then names the sender, so
PREROUTING there marks each packet by its addresses and queues it; rates shape on the
bridge's egress, which every routed packet leaves by.
"""

from __future__ import annotations

from typing import Any

from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import CLIENT, Link, Table, all_links, link_label, media_rates

CHAIN = "CASSLAB_NET"  # PREROUTING: marked packets -> NFQUEUE
OUT_CHAIN = "CASSLAB_NET_OUT"  # OUTPUT: connection owner, then link mark
CLIENT_CHAIN = "CASSLAB_NET_C"  # packets of connections the client opened
NODE_CHAIN = "CASSLAB_NET_N{}"  # packets of connections node i opened
CHAIN_PREFIX = "CASSLAB_NET"
DEV = "lo"
BFIFO_LIMIT = "64kb"
MEDIUM_QUEUE_BYTES = 64 * 1024
# Unclassified packets use htb's direct queue; lo's txqueuelen 0 would make it 2 packets.
DIRECT_QLEN = 10_000
FIRST_CLASS = 10
# skb marks of links: this tag in the upper 16 bits, the link number in the lower 16.
# Conntrack marks (connection owner: 0 client, i node i) are a different field.
MARK_TAG = 0x0CA5_0000
MAX_LINKS = 0xFFFF


def link_marks(node_count: int) -> dict[Link, int]:
    """The skb mark of every directed link: stable for a given node count."""
    links = all_links(node_count)
    if len(links) > MAX_LINKS:
        raise ValueError(f"{node_count} nodes make {len(links)} links; at most {MAX_LINKS}")
    return {k: MARK_TAG | n for n, k in enumerate(links, start=1)}


def _node_index(name: str) -> int:
    return int(name.removeprefix("node"))


def _conditioned(cond: LinkConditions) -> bool:
    return cond.needs_daemon or cond.rate_mbit is not None


def classify_rules(table: Table, addresses: dict[str, str],
                   identities: dict[str, str]) -> dict[str, list[str]]:
    """Rule bodies (without `-A CHAIN`) per OUTPUT chain: owner marks and link marks.

    `identities` maps node names to their cgroup v2 paths (only nodes whose identity
    cgroup exists: `-m cgroup --path` needs it at insert time).
    """
    node_count = len(addresses) - 1
    marks = link_marks(node_count)
    per_owner: dict[str, list[str]] = {CLIENT_CHAIN: []}
    for i in range(1, node_count + 1):
        per_owner[NODE_CHAIN.format(i)] = []
    for (src, dst), cond in table.items():
        if not _conditioned(cond):
            continue
        set_mark = f"-j MARK --set-mark {marks[(src, dst)]:#x}"
        if CLIENT in (src, dst):
            per_owner[CLIENT_CHAIN].append(
                f"-s {addresses[src]}/32 -d {addresses[dst]}/32 {set_mark}")
            continue
        # Packets src -> dst travel on connections src opened (ORIGINAL direction) and
        # on connections dst opened (REPLY direction).
        per_owner[NODE_CHAIN.format(_node_index(src))].append(
            f"-m conntrack --ctdir ORIGINAL -d {addresses[dst]}/32 {set_mark}")
        per_owner[NODE_CHAIN.format(_node_index(dst))].append(
            f"-m conntrack --ctdir REPLY -s {addresses[src]}/32 {set_mark}")
    out: list[str] = []
    for i in range(1, node_count + 1):
        path = identities.get(f"node{i}")
        if path:
            out.append(f"-m connmark --mark 0 -m conntrack --ctdir ORIGINAL "
                       f"-m cgroup --path {path} -j CONNMARK --set-mark {i}")
    if per_owner[CLIENT_CHAIN]:
        out.append(f"-m connmark --mark 0 -j {CLIENT_CHAIN}")
    for i in range(1, node_count + 1):
        if per_owner[NODE_CHAIN.format(i)]:
            out.append(f"-m connmark --mark {i} -j {NODE_CHAIN.format(i)}")
    return {OUT_CHAIN: out, **per_owner}


def iptables_restore(table: Table, addresses: dict[str, str], queue_num: int,
                     identities: dict[str, str] | None = None) -> str:
    """Input for `iptables-restore --noflush`: (re)fills our chains in table mangle.

    Declaring a chain flushes it, so the update is one atomic replace. The jumps from
    PREROUTING and OUTPUT are added separately (once).
    """
    marks = link_marks(len(addresses) - 1)
    chains = classify_rules(table, addresses, identities or {})
    lines = ["*mangle", f":{CHAIN} - [0:0]", *(f":{c} - [0:0]" for c in chains)]
    for (src, dst), cond in table.items():
        if cond.needs_daemon:
            lines.append(f"-A {CHAIN} -m mark --mark {marks[(src, dst)]:#x} "
                         f"-j NFQUEUE --queue-num {queue_num} --queue-bypass")
    for chain, bodies in chains.items():
        lines += [f"-A {chain} {b}" for b in bodies]
    lines += ["COMMIT", ""]
    return "\n".join(lines)


def routed_iptables_restore(table: Table, addresses: dict[str, str], queue_num: int) -> str:
    """Like `iptables_restore`, for routed mode: PREROUTING marks each conditioned
    link's packets by their addresses, then queues those that need the daemon."""
    marks = link_marks(len(addresses) - 1)
    lines = ["*mangle", f":{CHAIN} - [0:0]"]
    for (src, dst), cond in table.items():
        if not _conditioned(cond):
            continue
        mark = marks[(src, dst)]
        lines.append(f"-A {CHAIN} -s {addresses[src]}/32 -d {addresses[dst]}/32 "
                     f"-j MARK --set-mark {mark:#x}")
        if cond.needs_daemon:
            lines.append(f"-A {CHAIN} -m mark --mark {mark:#x} "
                         f"-j NFQUEUE --queue-num {queue_num} --queue-bypass")
    lines += ["COMMIT", ""]
    return "\n".join(lines)


def tc_batch(table: Table, addresses: dict[str, str], dev: str = DEV) -> list[str]:
    """`tc -batch` lines building the htb tree on `dev`; empty when no link has a rate."""
    limited = [(k, c) for k, c in table.items() if c.rate_mbit is not None and not c.shared]
    if not limited:
        return []
    marks = link_marks(len(addresses) - 1)
    out = [f"qdisc add dev {dev} root handle 1: htb r2q 1000 direct_qlen {DIRECT_QLEN}"]
    classes: list[tuple[int, int]] = []
    for n, (link, cond) in enumerate(limited, start=FIRST_CLASS):
        rate = _rate(cond)
        out += [
            f"class add dev {dev} parent 1: classid 1:{n:x} htb rate {rate} ceil {rate}",
            f"qdisc add dev {dev} parent 1:{n:x} handle {n:x}: bfifo limit {BFIFO_LIMIT}",
        ]
        classes.append((marks[link], 0x10000 | n))
    out.append(f'filter add dev {dev} parent 1: protocol ip prio 1 bpf bytecode '
               f'"{mark_classifier(classes)}"')
    return out


# Classic BPF (linux/filter.h): A = skb->mark; if A == k goto +jt else +jf; return k.
_LD_MARK = (0x20, 0xFFFFF000 + 20)  # BPF_LD|BPF_W|BPF_ABS, SKF_AD_OFF + SKF_AD_MARK
_JEQ = 0x15  # BPF_JMP|BPF_JEQ|BPF_K
_RET = 0x06  # BPF_RET|BPF_K


def mark_classifier(classes: list[tuple[int, int]]) -> str:
    """cls_bpf bytecode returning the htb classid of the packet's mark (0: no match).

    `classes`: (skb mark, classid as major << 16 | minor).
    """
    ops = [(_LD_MARK[0], 0, 0, _LD_MARK[1])]
    for mark, classid in classes:
        ops += [(_JEQ, 0, 1, mark), (_RET, 0, 0, classid)]
    ops.append((_RET, 0, 0, 0))
    return ",".join([str(len(ops)), *(f"{c} {jt} {jf} {k}" for c, jt, jf, k in ops)])


def _rate(cond: LinkConditions) -> str:
    assert cond.rate_mbit is not None
    return f"{round(cond.rate_mbit * 1000)}kbit"


def daemon_config(table: Table, addresses: dict[str, str], seed: int) -> dict[str, Any]:
    """The JSON casslab-netem reads: one entry per link that needs the daemon, named by
    its packet mark."""
    marks = link_marks(len(addresses) - 1)
    links = [(marks[link], link_label(link), c) for link, c in table.items()
             if c.needs_daemon]
    return daemon_document(links, media_rates(table), seed)


def daemon_document(links: list[tuple[int, str, LinkConditions]], media: dict[str, float],
                    seed: int) -> dict[str, Any]:
    """casslab-netem's configuration: each (mark, name, conditions) as a link entry, each
    shared medium (name -> rate in Mbit/s) as a group its links queue in."""
    group_ids = {name: n for n, name in enumerate(media, start=1)}
    entries = []
    for mark, name, c in links:
        entry: dict[str, Any] = {"mark": mark, "name": name,
                                 "delay_us": round(c.delay_ms * 1000),
                                 "jitter_us": round(c.jitter_ms * 1000),
                                 "loss_pct": c.loss_pct, "loss_burst": c.loss_burst}
        if c.shared and c.medium is not None:
            entry["group"] = group_ids[c.medium]
        entries.append(entry)
    # The medium's buffer per link is the htb leaf's (BFIFO_LIMIT): same bufferbloat.
    groups = [{"id": group_ids[name], "name": name, "rate_bit_s": round(rate * 1e6),
               "queue_limit_bytes": MEDIUM_QUEUE_BYTES} for name, rate in media.items()]
    return {"seed": seed, "links": entries, "groups": groups}
