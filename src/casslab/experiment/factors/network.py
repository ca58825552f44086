"""The network of a cell as a `casslab.net.NetSpec` mapping (the testbed applies it): the
spec's `lab.network` with the cell's network levels over it, which the registry has
already sorted by what they set (`NetLevels`).

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from casslab.experiment import linkscale


@dataclass(frozen=True)
class NetLevels:
    """A cell's network levels. network: the level of factor `network` (a profile name,
    or a mapping that replaces `lab.network`; None: not varied); scales: link group ->
    percent (`network.scale.<group>`); scoped: (scope, param, value) of the link factors
    (`network[.<scope>].<param>`), in factor order."""

    network: Any = None
    scales: Mapping[str, float] = field(default_factory=dict)
    scoped: Sequence[tuple[str, str, Any]] = ()


def wanted(lab_network: Any, levels: NetLevels,
           node_count: int) -> dict[str, Any] | None:
    """The conditions a trial needs, as a NetSpec mapping; None = no emulation."""
    if isinstance(levels.network, dict):  # a mapping level replaces lab.network
        lab_network = levels.network
    profile: str | None = None
    all_: dict[str, Any] = {}
    links: dict[str, dict[str, Any]] = {}
    groups: Any = None

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
    if isinstance(levels.network, str):
        profile = levels.network
    for scope, param, value in levels.scoped:
        scoped(scope, param, value)
    for link, fields in linkscale.links(groups, dict(levels.scales)).items():
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
