"""Chaos Mesh NetworkChaos objects (chaos-mesh.org/v1alpha1) for a cell's link table.

casslab's links are directed (client->node1, node1->node2, ...). One NetworkChaos shapes
the egress of its `selector` pods towards its `target` pods (direction `to`), or both
ways (`both`). Links are grouped so a uniform table stays small: every client<->node
link alike is one object between the client pods and the datacenter's pods, every
node->node link alike one object from the datacenter to itself; what is left is one
object per link (both directions in one when they are alike).

Conditions -> action: delay (+ jitter) `delay`, loss `loss`, a rate alone `bandwidth`
(tc tbf), any mix `netem` (a rate then as netem's own `rate`). Not expressible, and so
named in the object's `casslab.io/not-enforced` annotation: a shared medium (one budget
for several links, casslab-netem's job) and a loss burst length (netem's correlation is
not the Gilbert model's burst).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from casslab.core.errors import UsageError
from casslab.k8s.names import (
    DATACENTER,
    DATACENTER_LABEL,
    LAB_LABEL,
    POD_NAME_LABEL,
    ROLE_LABEL,
    Naming,
)
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import CLIENT, Link, all_links

API_VERSION = "chaos-mesh.org/v1alpha1"
KIND = "NetworkChaos"
CLIENTS = "clients"
NODES = "nodes"
# tbf needs a bucket (`buffer`) of at least one MTU-sized packet per timer tick and a
# queue (`limit`); 10 ms of the rate as bucket and 50 ms as queue keep the shaping close
# to the rate without dropping bursts a netem rate would queue.
MIN_BUFFER_BYTES = 2 * 1514
BUCKET_S = 0.010
QUEUE_S = 0.050


@dataclass(frozen=True)
class Shaped:
    """A group of directed links with one condition: from `src` to `dst` (endpoint names
    or the groups `clients` / `nodes`), both ways when `both`."""

    src: str
    dst: str
    cond: LinkConditions
    both: bool = False

    @property
    def name(self) -> str:
        return f"{self.src}-{self.dst}" if self.both else f"{self.src}-to-{self.dst}"

    @property
    def label(self) -> str:
        arrow = "<->" if self.both else "->"
        return f"{self.src}{arrow}{self.dst}"


def group_links(links: dict[Link, LinkConditions], nodes: int) -> list[Shaped]:
    """The directed links with conditions as few groups as say the same."""
    pending = dict(links)
    groups: list[Shaped] = []
    for src, dst in ((CLIENTS, NODES), (NODES, CLIENTS), (NODES, NODES)):
        members = [k for k in all_links(nodes) if _group(k[0]) == src and _group(k[1]) == dst]
        conds = {pending.get(k) for k in members}
        if members and len(conds) == 1 and None not in conds:
            groups.append(Shaped(src, dst, pending[members[0]]))
            for k in members:
                del pending[k]
    groups = _merge_both(groups)
    singles = [Shaped(a, b, c) for (a, b), c in pending.items()]
    return groups + _merge_both(singles)


def _group(endpoint: str) -> str:
    return CLIENTS if endpoint == CLIENT else NODES


def _merge_both(items: list[Shaped]) -> list[Shaped]:
    """A->B and B->A with one condition become one object, direction both."""
    out: list[Shaped] = []
    used: set[int] = set()
    for i, s in enumerate(items):
        if i in used:
            continue
        mate = next((j for j, t in enumerate(items) if j > i and j not in used and
                     (t.src, t.dst) == (s.dst, s.src) and t.cond == s.cond
                     and s.src != s.dst), None)
        if mate is not None:
            used.add(mate)
            s = Shaped(s.src, s.dst, s.cond, both=True)
        out.append(s)
    return out


def network_chaos(links: dict[Link, LinkConditions], nodes: int,
                  naming: Naming) -> list[dict[str, Any]]:
    """One NetworkChaos per group of links (see group_links); [] for a clean network.

    Raises UsageError when a link names one node and the datacenter has several racks
    (a node's pod name is known only with one rack).
    """
    return [_object(s, naming) for s in group_links(links, nodes)]


def _object(s: Shaped, naming: Naming) -> dict[str, Any]:
    spec: dict[str, Any] = {"action": action(s.cond), "mode": "all",
                            "selector": _selector(s.src, naming),
                            "direction": "both" if s.both else "to",
                            "target": {"mode": "all", "selector": _selector(s.dst, naming)}}
    spec.update(tc_fields(s.cond))
    annotations = {"casslab.io/links": s.label}
    left_out = not_enforced(s.cond)
    if left_out:
        annotations["casslab.io/not-enforced"] = "; ".join(left_out)
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": f"{naming.cluster}-{s.name}", "namespace": naming.namespace,
                         "labels": {LAB_LABEL: naming.cluster},
                         "annotations": annotations},
            "spec": spec}


def _selector(endpoint: str, naming: Naming) -> dict[str, Any]:
    if endpoint in (CLIENTS, CLIENT):
        labels = {LAB_LABEL: naming.cluster, ROLE_LABEL: "client"}
    elif endpoint == NODES:
        labels = {DATACENTER_LABEL: DATACENTER}
    else:
        if naming.racks != 1:
            raise UsageError(f"--racks {naming.racks}: link conditions of {endpoint} alone "
                             "need one rack (a node's pod is named by its rack's ordinal); "
                             "use --racks 1 or conditions alike for every node")
        labels = {POD_NAME_LABEL: naming.node_pod(int(endpoint.removeprefix("node")))}
    return {"namespaces": [naming.namespace], "labelSelectors": labels}


def action(cond: LinkConditions) -> str:
    kinds = [k for k, on in (("delay", cond.delay_ms > 0 or cond.jitter_ms > 0),
                             ("loss", cond.loss_pct > 0),
                             ("bandwidth", cond.rate_mbit is not None)) if on]
    return kinds[0] if len(kinds) == 1 else "netem"


def tc_fields(cond: LinkConditions) -> dict[str, Any]:
    """The delay / loss / bandwidth (or rate) fields of one condition."""
    out: dict[str, Any] = {}
    if cond.delay_ms > 0 or cond.jitter_ms > 0:
        out["delay"] = {"latency": _ms(cond.delay_ms), "jitter": _ms(cond.jitter_ms),
                        "correlation": "0"}
    if cond.loss_pct > 0:
        out["loss"] = {"loss": f"{cond.loss_pct:g}", "correlation": "0"}
    if cond.rate_mbit is not None:
        rate = f"{max(1, round(cond.rate_mbit * 1000))}kbit"
        if action(cond) == "bandwidth":
            bytes_s = cond.rate_mbit * 1e6 / 8
            buffer = max(MIN_BUFFER_BYTES, int(bytes_s * BUCKET_S))
            out["bandwidth"] = {"rate": rate, "buffer": buffer,
                                "limit": max(buffer, int(bytes_s * QUEUE_S))}
        else:
            out["rate"] = {"rate": rate}
    return out


def _ms(value: float) -> str:
    # Chaos Mesh's duration pattern takes a decimal number and a unit, never an exponent.
    return f"{value:.3f}".rstrip("0").rstrip(".") + "ms"


def not_enforced(cond: LinkConditions) -> list[str]:
    out: list[str] = []
    if cond.shared:
        out.append(f"shared medium {cond.medium} (each link gets its own "
                   f"{cond.rate_mbit:g} Mbit/s)")
    if cond.loss_pct > 0 and cond.loss_burst != 1:
        out.append(f"loss burst {cond.loss_burst:g} (losses are independent)")
    return out
