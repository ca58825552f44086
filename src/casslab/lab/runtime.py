"""Node runtimes: what a lab node runs inside, and the network that joins the nodes.

- `process`: every node a process in the lab's namespace, its address a /32 on the
  namespace's lo (or, without a namespace, a loopback alias of this host).
- `netns`: every node a process in its own network namespace, its address on a veth
  whose other end is a port of a bridge in the lab's namespace: the network path of
  a container (its own stack, veth, bridge) without the rest. The lab's CQL and load
  clients stay in the lab's namespace and reach the nodes over the bridge.

A runtime only creates and removes what is named in the lab state, so `lab down`
rebuilds it from the state file alone (after a kill -9 of casslab).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from casslab.core.errors import CasslabError, NetnsError, UsageError
from casslab.lab.state import LabState, NodeState
from casslab.system import netns

DEFAULT_RUNTIME = "process"
# 127.0.0.0/8 is martian off lo: a node address on a veth needs a routable prefix. The
# prefix lives inside the lab's own namespaces, so every netns lab may use the same one.
NETNS_PREFIX = "10.99"
BRIDGE = "casslab0"
BRIDGE_HOST = 254
NODE_IF = "eth0"


class NodeRuntime(Protocol):
    """The part of `lab up/down/start` that depends on where the nodes run."""

    @property
    def name(self) -> str:
        """What `--runtime` and the lab state call it."""

    def check(self, *, own_namespace: bool, can_use_namespaces: bool) -> None:
        """Refuse (UsageError, one line) options this runtime cannot honour."""

    def addresses(self, subnet: int, count: int) -> list[str]:
        """The nodes' addresses, node1 first."""

    def node_netns(self, lab_netns: str | None, index: int) -> str | None:
        """The namespace of node `index` alone (recorded in its state before it exists);
        None when it runs in the lab's."""

    def create_network(self, state: LabState) -> None:
        """Create the namespaces, links and addresses the state names; NetnsError."""

    def node_prefix(self, state: LabState, node: NodeState) -> list[str]:
        """The command prefix that runs a node's JVM where it belongs."""

    def delete_network(self, state: LabState) -> None:
        """Remove what create_network made (idempotent, from the state alone)."""


@dataclass(frozen=True)
class ProcessRuntime:
    """Today's lab: nodes are processes sharing the lab's namespace."""

    name: str = "process"

    def check(self, *, own_namespace: bool, can_use_namespaces: bool) -> None:
        return None

    def addresses(self, subnet: int, count: int) -> list[str]:
        return [f"127.0.{subnet}.{i}" for i in range(1, count + 1)]

    def node_netns(self, lab_netns: str | None, index: int) -> str | None:
        return None

    def create_network(self, state: LabState) -> None:
        if state.netns:
            netns.create(state.netns, [n.address for n in state.nodes])

    def node_prefix(self, state: LabState, node: NodeState) -> list[str]:
        return netns.exec_prefix(state.netns)

    def delete_network(self, state: LabState) -> None:
        if state.netns:
            netns.delete(state.netns)


@dataclass(frozen=True)
class NetnsRuntime:
    """Nodes in namespaces of their own, joined by veth pairs to a bridge in the lab's."""

    name: str = "netns"

    def check(self, *, own_namespace: bool, can_use_namespaces: bool) -> None:
        if not own_namespace:
            raise UsageError("--runtime netns: needs the lab's own namespace; drop --no-netns "
                             "or use --runtime process")
        if not can_use_namespaces:
            raise UsageError("--runtime netns: needs root and the `ip` command; run as root "
                             "or use --runtime process")

    def addresses(self, subnet: int, count: int) -> list[str]:
        return [f"{NETNS_PREFIX}.{subnet}.{i}" for i in range(1, count + 1)]

    def node_netns(self, lab_netns: str | None, index: int) -> str | None:
        return None if lab_netns is None else f"{lab_netns}-n{index}"

    def create_network(self, state: LabState) -> None:
        if state.netns is None:
            raise NetnsError(f"lab '{state.name}' of runtime netns has no namespace in its state")
        netns.create(state.netns, [])
        netns.add_bridge(state.netns, BRIDGE, f"{NETNS_PREFIX}.{state.subnet}.{BRIDGE_HOST}/24")
        for n in state.nodes:
            if n.netns is None:
                raise NetnsError(f"{n.name} of lab '{state.name}' has no namespace in its state")
            netns.add_empty(n.netns)
            netns.add_veth(state.netns, BRIDGE, f"veth{n.index}", n.netns, NODE_IF,
                           f"{n.address}/24")

    def node_prefix(self, state: LabState, node: NodeState) -> list[str]:
        return netns.exec_prefix(node.netns)

    def delete_network(self, state: LabState) -> None:
        # Node namespaces first: each takes its veth pair with it, then the bridge goes
        # with the lab's namespace. Every one is tried even when one fails.
        errors: list[str] = []
        for ns in [n.netns for n in state.nodes if n.netns] + [state.netns]:
            try:
                if ns:
                    netns.delete(ns)
            except CasslabError as exc:
                errors.append(str(exc))
        if errors:
            raise NetnsError("; ".join(errors))


RUNTIMES: dict[str, NodeRuntime] = {r.name: r for r in (ProcessRuntime(), NetnsRuntime())}


def runtime_for(name: str) -> NodeRuntime:
    """The runtime called `name`; UsageError naming the valid ones otherwise."""
    try:
        return RUNTIMES[name]
    except KeyError:
        raise UsageError(f"--runtime {name}: unknown runtime; valid: "
                         f"{', '.join(RUNTIMES)}") from None
