"""The round trip the configured link delays alone give a request: no Cassandra, no
client, no processing (seed 002's "delay-only model", issue 31). Pure.

A request goes from the client to a coordinator (one of the nodes, each equally
likely: the client spreads its requests over them) and back, 2 x that client link's
one-way delay; at consistency level k the coordinator answers itself and waits for the
k - 1 fastest other replicas, so it adds the round trip to its (k - 1)-th nearest peer.
The model is the mean over the coordinators. Every node is a replica (RF = the node
count, as seed 002's 3 nodes at RF 3). The delays are the ones the lab applies to a
cell: casslab.experiment.network's links for the spec's `lab.network` and the cell's
levels (`network.scale.<group>` scaling a group of the base table, explicit links).

What the lab (or the paper) measures above this is what the model does not explain:
the client, Cassandra's own work and the emulator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from casslab.experiment.factors.network import wanted
from casslab.experiment.factors.registry import net_levels

ACKS = {"ONE": 1, "TWO": 2, "THREE": 3}  # consistency level -> replicas that answer


def _delay(links: Mapping[str, Mapping[str, Any]], a: str, b: str) -> float:
    body = links.get(f"{a}-{b}") or links.get(f"{b}-{a}") or {}
    return float(body.get("delay_ms", 0.0))


def model_rtt_ms(lab_network: Any, params: Mapping[str, Any], nodes: int,
                 cl: str) -> float:
    """The delay-only round trip (ms) of a request at consistency level `cl` in the cell
    `params`; NaN for a level other than ONE, TWO, THREE or more replicas than nodes."""
    acks = ACKS.get(str(cl).upper())
    if acks is None or acks > nodes or nodes < 1:
        return math.nan
    net = wanted(lab_network, net_levels(params), nodes) or {}
    links: Mapping[str, Mapping[str, Any]] = net.get("links", {})
    names = [f"node{i}" for i in range(1, nodes + 1)]
    total = 0.0
    for c in names:
        rtt = 2 * _delay(links, "client", c)
        if acks > 1:
            peers = sorted(_delay(links, c, p) for p in names if p != c)
            rtt += 2 * peers[acks - 2]
        total += rtt
    return total / nodes
