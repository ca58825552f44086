"""The lab bridge that runtimes with a namespace per node (netns, lxc) join."""

from __future__ import annotations

from casslab.core.errors import NetnsError
from casslab.lab.state import LabState
from casslab.system import netns

# 127.0.0.0/8 is martian off lo: a node address on a veth needs a routable prefix. The
# prefix lives inside the lab's own namespaces, so every such lab may use the same one.
PREFIX = "10.99"
BRIDGE = "casslab0"
BRIDGE_HOST = 254
NODE_IF = "eth0"


def addresses(subnet: int, count: int) -> list[str]:
    return [f"{PREFIX}.{subnet}.{i}" for i in range(1, count + 1)]


def create(state: LabState) -> str:
    """The lab's namespace with a bridge holding the lab's (the client's) address;
    returns the namespace. NetnsError when the state names no namespace."""
    if state.netns is None:
        raise NetnsError(f"lab '{state.name}' of runtime {state.runtime} has no namespace "
                         "in its state")
    netns.create(state.netns, [])
    netns.add_bridge(state.netns, BRIDGE, f"{PREFIX}.{state.subnet}.{BRIDGE_HOST}/24")
    return state.netns
