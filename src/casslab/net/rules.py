"""Turn a link table into packet rules, queues and the daemon's config (pure functions).

- Delay, jitter, loss: `iptables -t mangle` rules in the lab's namespace send each
  conditioned directed link (`-s A/32 -d B/32`) to NFQUEUE with `--queue-bypass`, in
  PREROUTING (in OUTPUT a held packet counts against the sender's TCP small-queue limit
  and throughput collapses; notes/facts.md). casslab-netem holds and drops them.
- Bandwidth: one htb class per rate-limited directed link on lo, selected by
  `u32 match ip src A/32 match ip dst B/32`, leaf `bfifo limit 64kb` (the default
  1000-packet queue gave 394 ms of bufferbloat at 10 Mbit), `r2q 1000`.
"""

from __future__ import annotations

from typing import Any

from casslab.net.profiles import LinkConditions
from casslab.net.spec import Table

CHAIN = "CASSLAB_NET"
DEV = "lo"
BFIFO_LIMIT = "64kb"
# Unclassified packets use htb's direct queue; lo's txqueuelen 0 would make it 2 packets.
DIRECT_QLEN = 10_000
FIRST_CLASS = 10


def iptables_restore(table: Table, addresses: dict[str, str], queue_num: int) -> str:
    """Input for `iptables-restore --noflush`: (re)fills our chain in table mangle.

    Declaring the chain flushes it, so the update is one atomic replace.
    """
    lines = ["*mangle", f":{CHAIN} - [0:0]"]
    for (src, dst), cond in table.items():
        if cond.needs_daemon:
            lines.append(f"-A {CHAIN} -s {addresses[src]}/32 -d {addresses[dst]}/32 "
                         f"-j NFQUEUE --queue-num {queue_num} --queue-bypass")
    lines += ["COMMIT", ""]
    return "\n".join(lines)


def tc_batch(table: Table, addresses: dict[str, str]) -> list[str]:
    """`tc -batch` lines building the htb tree; empty when no link has a rate."""
    limited = [(k, c) for k, c in table.items() if c.rate_mbit is not None]
    if not limited:
        return []
    out = [f"qdisc add dev {DEV} root handle 1: htb r2q 1000 direct_qlen {DIRECT_QLEN}"]
    for n, ((src, dst), cond) in enumerate(limited, start=FIRST_CLASS):
        rate = _rate(cond)
        out += [
            f"class add dev {DEV} parent 1: classid 1:{n:x} htb rate {rate} ceil {rate}",
            f"qdisc add dev {DEV} parent 1:{n:x} handle {n:x}: bfifo limit {BFIFO_LIMIT}",
            f"filter add dev {DEV} parent 1: protocol ip prio 1 u32 "
            f"match ip src {addresses[src]}/32 match ip dst {addresses[dst]}/32 "
            f"flowid 1:{n:x}",
        ]
    return out


def _rate(cond: LinkConditions) -> str:
    assert cond.rate_mbit is not None
    return f"{round(cond.rate_mbit * 1000)}kbit"


def daemon_config(table: Table, addresses: dict[str, str], seed: int) -> dict[str, Any]:
    """The JSON casslab-netem reads: one entry per link that needs the daemon."""
    links = []
    for (src, dst), c in table.items():
        if c.needs_daemon:
            links.append({"src": addresses[src], "dst": addresses[dst],
                          "delay_us": round(c.delay_ms * 1000),
                          "jitter_us": round(c.jitter_ms * 1000),
                          "loss_pct": c.loss_pct, "loss_burst": c.loss_burst})
    return {"seed": seed, "links": links}
