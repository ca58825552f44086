"""Network emulation for labs: link profiles and per-directed-link delay, jitter, loss
and bandwidth, applied inside the lab's network namespace.

Library API (what `lab up --net` and `casslab net` call):

    state = apply(lab_dir, netns, node_addresses, NetSpec.from_profile("wifi"))
    state = set_links(lab_dir, NetSpec(links=(("node1-node2", {"delay_ms": 20}),)))
    rows = check(load(lab_dir))
    clear(lab_dir)
"""

from typing import TYPE_CHECKING

from casslab.core.lazy import exports

if TYPE_CHECKING:
    from casslab.net.emulator import (
        NetState,
        Routed,
        apply,
        clear,
        is_active,
        load,
        set_links,
        stats,
    )
    from casslab.net.errors import NetError, NetSpecError
    from casslab.net.linkcheck import LinkCheck, check
    from casslab.net.linkprofiles import (
        BUILTIN_LINK_PROFILES,
        LinkConditions,
        LinkProfile,
        resolve_link_profile,
    )
    from casslab.net.spec import NetSpec

__all__ = [
    "BUILTIN_LINK_PROFILES",
    "LinkCheck",
    "LinkConditions",
    "LinkProfile",
    "NetError",
    "NetSpec",
    "NetSpecError",
    "NetState",
    "Routed",
    "apply",
    "check",
    "clear",
    "is_active",
    "load",
    "resolve_link_profile",
    "set_links",
    "stats",
]
__getattr__, __dir__ = exports(__name__, {
    "LinkCheck": "casslab.net.linkcheck", "check": "casslab.net.linkcheck",
    **dict.fromkeys(("NetState", "Routed", "apply", "clear", "is_active", "load",
                     "set_links", "stats"), "casslab.net.emulator"),
    "NetError": "casslab.net.errors", "NetSpecError": "casslab.net.errors",
    **dict.fromkeys(("BUILTIN_LINK_PROFILES", "LinkConditions", "LinkProfile",
                     "resolve_link_profile"), "casslab.net.linkprofiles"),
    "NetSpec": "casslab.net.spec"})
