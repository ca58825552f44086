"""The lab bridge that runtimes with a namespace per node (netns, lxc) join.

The bridge lives in a router namespace of its own (`<lab namespace>-gw`), and every
endpoint hangs off it by a veth pair: each node, and the lab's namespace too (where the
CQL and load clients run), as the client at `.254`. The ports are isolated (no port
talks to another at layer 2) and the bridge answers every ARP request for the segment
(proxy ARP, private-VLAN style), so each packet between two endpoints is routed by the
router namespace: its PREROUTING sees every packet once, having crossed a namespace on
a veth (which frees it from the sender's TCP small-queue budget), which is where link
conditions hold, drop and shape them (casslab.net, routed mode).
"""

from __future__ import annotations

from pathlib import Path

from casslab.core.errors import CommandError, NetnsError
from casslab.lab.state import LabState
from casslab.system import netns
from casslab.system.process import run

# 127.0.0.0/8 is martian off lo: a node address on a veth needs a routable prefix. The
# prefix lives inside the lab's own namespaces, so every such lab may use the same one.
PREFIX = "10.99"
BRIDGE = "casslab0"
BRIDGE_HOST = 254
ROUTER_HOST = 253
NODE_IF = "eth0"
CLIENT_PORT = "vethc"
ROUTER_SUFFIX = "-gw"
# The router forwards between its own ports, and must not tell endpoints to talk
# directly (they cannot: their ports are isolated). It answers ARP for the others at
# once: by default a proxy reply waits a random time up to 0.8 s (proxy_delay), which
# every endpoint's first packet to every other one would pay.
ROUTER_SYSCTLS = ("net.ipv4.ip_forward=1", f"net.ipv4.conf.{BRIDGE}.proxy_arp=1",
                  f"net.ipv4.conf.{BRIDGE}.proxy_arp_pvlan=1",
                  f"net.ipv4.neigh.{BRIDGE}.proxy_delay=0",
                  "net.ipv4.conf.all.send_redirects=0",
                  f"net.ipv4.conf.{BRIDGE}.send_redirects=0")


def addresses(subnet: int, count: int) -> list[str]:
    return [f"{PREFIX}.{subnet}.{i}" for i in range(1, count + 1)]


def client_address(subnet: int) -> str:
    """The lab namespace's (the clients') address on the segment."""
    return f"{PREFIX}.{subnet}.{BRIDGE_HOST}"


def router_netns(lab_netns: str) -> str:
    return lab_netns + ROUTER_SUFFIX


def create(state: LabState) -> str:
    """The lab's namespace, joined as the client to a bridge in a router namespace;
    returns the router namespace (where node ports go). NetnsError when the state
    names no namespace or a step fails."""
    if state.netns is None:
        raise NetnsError(f"lab '{state.name}' of runtime {state.runtime} has no namespace "
                         "in its state")
    netns.create(state.netns, [])
    router = router_netns(state.netns)
    netns.add_empty(router)
    try:
        run(["ip", "-n", router, "link", "set", "lo", "up"])
    except CommandError as exc:
        raise NetnsError(f"cannot set up namespace {router}: {exc}") from exc
    netns.add_bridge(router, BRIDGE, f"{PREFIX}.{state.subnet}.{ROUTER_HOST}/24")
    try:
        run([*netns.exec_prefix(router), "sysctl", "-q", "-w", *ROUTER_SYSCTLS])
    except CommandError as exc:
        raise NetnsError(f"cannot make {router} route between its bridge ports: {exc}") from exc
    netns.add_veth(router, BRIDGE, CLIENT_PORT, state.netns, NODE_IF,
                   f"{client_address(state.subnet)}/24")
    return router


CLIENT = "client"


def endpoint_stacks(state: LabState) -> dict[str, Path]:
    """Endpoint name (`client`: the lab's namespace; `node<i>`) -> `nsenter --net` path of
    its own network stack (its namespace, or its container's init), for those that exist
    now."""
    out = {CLIENT: netns.NETNS_DIR / state.netns} if state.netns else {}
    for n in state.nodes:
        if n.netns:
            out[n.name] = netns.NETNS_DIR / n.netns
        elif n.pid:
            out[n.name] = Path(f"/proc/{n.pid}/ns/net")
    return {name: p for name, p in out.items() if p.exists()}


def endpoint_paths(state: LabState) -> list[Path]:
    """`nsenter --net` paths of the endpoints' own network stacks that exist now: the
    lab's (the client's), then each node's (its namespace, or its container's init)."""
    return list(endpoint_stacks(state).values())
