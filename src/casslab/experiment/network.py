"""Network factors of a campaign as a `casslab.net.NetSpec` mapping (the testbed applies it).

Spec notation -> casslab.net:
- `lab.network: wifi` or factor `network` with profile levels -> every link gets it;
- `network.delay_ms` (or `network.all.delay_ms`) -> `all` fields (every link);
- `network.client.delay_ms` -> every client<->node link (seed 002's endpoint-to-edge);
- `network.nodes.delay_ms` -> every node<->node link (seed 002's edge-to-edge);
- `network.node1-node2.delay_ms` -> that link, both directions;
- `lab.network.groups` with factor `network.scale.<group>` -> the base link table, one
  group scaled (see casslab.experiment.linkscale); explicit link settings win over it.
"""

from __future__ import annotations

from typing import Any

from casslab.experiment import linkscale


def wanted(lab_network: Any, params: dict[str, Any],
           node_count: int) -> dict[str, Any] | None:
    """The conditions a trial needs, as a NetSpec mapping; None = no emulation."""
    profile: str | None = None
    all_: dict[str, Any] = {}
    links: dict[str, dict[str, Any]] = {}
    groups: Any = None
    scales: dict[str, float] = {}

    def scoped(scope: str, param: str, value: Any) -> None:
        if scope == "all":
            all_[param] = value
        elif scope == "client":
            for i in range(1, node_count + 1):
                links.setdefault(f"client-node{i}", {})[param] = value
        elif scope == "nodes":
            for i in range(1, node_count + 1):
                for j in range(i + 1, node_count + 1):
                    links.setdefault(f"node{i}-node{j}", {})[param] = value
        else:
            links.setdefault(scope, {})[param] = value

    if isinstance(lab_network, str):
        profile = lab_network
    elif isinstance(lab_network, dict):
        for k, v in lab_network.items():
            if k == "groups":
                groups = v
            elif k == "profile":
                profile = v
            elif isinstance(v, dict):
                for p, val in v.items():
                    scoped(k, p, val)
            else:
                scoped("all", k, v)
    for k, v in params.items():
        if k == "network":
            if isinstance(v, str):
                profile = v
            else:
                return wanted(v, {kk: vv for kk, vv in params.items() if kk != "network"},
                              node_count)
        elif linkscale.is_factor(k):
            scales[linkscale.group_of(k)] = float(v)
        elif k.startswith("network."):
            parts = k.split(".")
            scoped(parts[1] if len(parts) == 3 else "all", parts[-1], v)
    for link, fields in linkscale.links(groups, scales).items():
        links[link] = {**fields, **links.get(link, {})}
    if profile in (None, "none", "loopback") and not all_ and not links:
        return None
    out: dict[str, Any] = {}
    if profile not in (None, "none"):
        out["profile"] = profile
    if all_:
        out["all"] = all_
    if links:
        out["links"] = links
    return out
