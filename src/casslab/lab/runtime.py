"""Node runtimes: what a lab node runs inside, and the network that joins the nodes.

- `process`: every node a process in the lab's namespace, its address a /32 on the
  namespace's lo (or, without a namespace, a loopback alias of this host).
- `netns`: every node a process in its own network namespace, its address on a veth
  whose other end is a port of a bridge in the lab's namespace: the network path of
  a container (its own stack, veth, bridge) without the rest. The bridge is in a router
  namespace; the lab's namespace, where the CQL and load clients run, is one more
  endpoint on it (casslab.lab.bridge).

A runtime only creates and removes what is named in the lab state, so `lab down`
rebuilds it from the state file alone (after a kill -9 of casslab).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from casslab.cassandra.distribution import Distribution
from casslab.core.errors import CasslabError, NetnsError, UsageError
from casslab.lab import bridge, node
from casslab.lab.lxc import LxcRuntime
from casslab.lab.state import LabState, NodeState
from casslab.system import netns

Say = Callable[[str], None]


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

    def prepare(self, state: LabState, dist: Distribution, cache: Path, say: Say) -> None:
        """Get what the nodes need before the network exists (e.g. a root filesystem)."""

    def limit(self, state: LabState, node: NodeState, version: int,
              files: dict[str, dict[str, str]]) -> bool:
        """Take the node's cgroup limit files (`cgroups.limit_files`) to apply itself;
        False when the lab is to make the node's cgroup (the default)."""

    def spawn(self, state: LabState, node: NodeState, command: list[str],
              cgroup_procs: list[str], stdout_log: Path) -> tuple[int, int | None]:
        """Start the node's JVM where it belongs; returns its host (pid, start ticks)."""

    def delete_network(self, state: LabState) -> None:
        """Remove what create_network made (idempotent, from the state alone)."""


class _PlainProcess:
    """Nodes that are plain processes: nothing to prepare, the lab's cgroups."""

    def node_prefix(self, state: LabState, node: NodeState) -> list[str]:
        raise NotImplementedError

    def prepare(self, state: LabState, dist: Distribution, cache: Path, say: Say) -> None:
        return None

    def limit(self, state: LabState, node: NodeState, version: int,
              files: dict[str, dict[str, str]]) -> bool:
        return False

    def spawn(self, state: LabState, n: NodeState, command: list[str],
              cgroup_procs: list[str], stdout_log: Path) -> tuple[int, int | None]:
        return node.spawn(command, netns_prefix=self.node_prefix(state, n),
                          cgroup_procs=cgroup_procs, stdout_log=stdout_log)


@dataclass(frozen=True)
class ProcessRuntime(_PlainProcess):
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
class NetnsRuntime(_PlainProcess):
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
        return bridge.addresses(subnet, count)

    def node_netns(self, lab_netns: str | None, index: int) -> str | None:
        return None if lab_netns is None else f"{lab_netns}-n{index}"

    def create_network(self, state: LabState) -> None:
        router = bridge.create(state)
        for n in state.nodes:
            if n.netns is None:
                raise NetnsError(f"{n.name} of lab '{state.name}' has no namespace in its state")
            netns.add_empty(n.netns)
            netns.add_veth(router, bridge.BRIDGE, f"veth{n.index}", n.netns, bridge.NODE_IF,
                           f"{n.address}/24")

    def node_prefix(self, state: LabState, node: NodeState) -> list[str]:
        return netns.exec_prefix(node.netns)

    def delete_network(self, state: LabState) -> None:
        # Node namespaces first: each takes its veth pair with it, then the lab's, then
        # the router's with the bridge. Every one is tried even when one fails.
        errors: list[str] = []
        router = bridge.router_netns(state.netns) if state.netns else None
        for ns in [n.netns for n in state.nodes if n.netns] + [state.netns, router]:
            try:
                if ns:
                    netns.delete(ns)
            except CasslabError as exc:
                errors.append(str(exc))
        if errors:
            raise NetnsError("; ".join(errors))


RUNTIMES: dict[str, NodeRuntime] = {r.name: r for r in (ProcessRuntime(), NetnsRuntime(),
                                                          LxcRuntime())}


def runtime_for(name: str) -> NodeRuntime:
    """The runtime called `name`; UsageError naming the valid ones otherwise."""
    try:
        return RUNTIMES[name]
    except KeyError:
        raise UsageError(f"--runtime {name}: unknown runtime; valid: "
                         f"{', '.join(RUNTIMES)}") from None
