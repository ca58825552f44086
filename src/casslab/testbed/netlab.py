"""The network extension of a lab: `lab up --net` and teardown of the emulator."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from casslab import net
from casslab.core.errors import UsageError
from casslab.lab import Lab, LabOptions, LabState, bridge
from casslab.lab.cluster import Progress
from casslab.lab.state import DEFAULT_RUNTIME
from casslab.net.spec import CLIENT
from casslab.system import netns


class NetExtension:
    """Applies `LabOptions.net` once the nodes are up; clears it before teardown."""

    def check(self, lab: Lab, options: LabOptions) -> None:
        # Validate --net before anything starts, so a typo costs no cluster start.
        self.spec(options)

    def spec(self, options: LabOptions) -> net.NetSpec | None:
        if options.net is None:
            return None
        if not (options.own_namespace and netns.can_use_namespaces()):
            raise UsageError("--net needs the lab's own network namespace: run as root and "
                             "without --no-netns")
        if options.net.endswith((".yaml", ".yml")):
            return net.NetSpec.from_yaml(Path(options.net))
        return net.NetSpec.from_profile(options.net, options.net_profiles_file)

    def after_up(self, lab: Lab, state: LabState, options: LabOptions,
                 say: Progress) -> list[str]:
        spec = self.spec(options)
        if spec is None:
            return []
        say(f"applying network conditions: {options.net}")
        return list(apply_net(state, spec).warnings)

    def before_teardown(self, lab: Lab, state: LabState) -> None:
        # Stop the packet-delay daemon first: it lets held packets through on exit.
        net.clear(Path(state.directory), net_target(state).netns)


@dataclass(frozen=True)
class NetTarget:
    """Where a lab's link conditions act: the namespace of the rules and the daemon, and
    for runtimes with a namespace per node, how packets are routed there."""

    netns: str | None
    routed: net.Routed | None


def net_target(state: LabState) -> NetTarget:
    """Runtime process: the lab's namespace, packets told apart by the sender's cgroup.
    Runtimes netns and lxc: the router namespace of the lab's bridge (casslab.lab.bridge),
    packets told apart by their addresses."""
    if state.runtime == DEFAULT_RUNTIME or state.netns is None:
        return NetTarget(state.netns, None)
    return NetTarget(bridge.router_netns(state.netns), net.Routed(
        client_address=bridge.client_address(state.subnet), device=bridge.BRIDGE,
        endpoints=tuple(str(p) for p in bridge.endpoint_paths(state)),
        interface=bridge.NODE_IF))


def probe_endpoints(state: LabState) -> dict[str, Path]:
    """Where `net check` makes each endpoint's probe sockets (endpoint name -> `nsenter
    --net` path): on runtimes netns and lxc, each endpoint's own stack as it is now (a
    container's changes with its init); empty on runtime process (one namespace)."""
    if net_target(state).routed is None:
        return {}
    return {(CLIENT if name == bridge.CLIENT else name): path
            for name, path in bridge.endpoint_stacks(state).items()}


def apply_net(state: LabState, spec: net.NetSpec, *, replace: bool = True) -> net.NetState:
    """Apply `spec` to the links of the lab `state` describes (see `net.apply`)."""
    target = net_target(state)
    if target.netns is None:
        raise UsageError(f"lab '{state.name}' has no network namespace (made with --no-netns): "
                         "network emulation needs the lab's own namespace")
    return net.apply(Path(state.directory), target.netns, [n.address for n in state.nodes],
                     spec, replace=replace, routed=target.routed)


def open_lab(name: str, *, home: Path, cache: Path) -> Lab:
    """The lab `name` with its network emulation attached (what every caller wants)."""
    return Lab(name, home=home, cache=cache, extensions=(NetExtension(),))
