"""Network emulation for labs: link profiles and per-directed-link delay, jitter, loss
and bandwidth, applied inside the lab's network namespace.

Library API (what `lab up --net` and `casslab net` call):

    state = apply(lab_dir, netns, node_addresses, NetSpec.from_profile("wifi"))
    state = set_links(lab_dir, NetSpec(links=(("node1-node2", {"delay_ms": 20}),)))
    rows = check(load(lab_dir))
    clear(lab_dir)
"""

from typing import TYPE_CHECKING

from casslab.core.lazy import exports, keep_exports_over_submodules

if TYPE_CHECKING:
    from casslab.net.check import LinkCheck, check
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
    from casslab.net.profiles import (
        BUILTIN_PROFILES,
        LinkConditions,
        NetProfile,
        resolve_profile,
    )
    from casslab.net.spec import NetSpec

__all__ = ["BUILTIN_PROFILES", "LinkCheck", "LinkConditions", "NetError", "NetProfile",
           "NetSpec", "NetSpecError", "NetState", "Routed", "apply", "check", "clear", "is_active",
           "load", "resolve_profile", "set_links", "stats"]
__getattr__, __dir__ = exports(__name__, {
    "LinkCheck": "casslab.net.check", "check": "casslab.net.check",
    **dict.fromkeys(("NetState", "Routed", "apply", "clear", "is_active", "load",
                     "set_links", "stats"), "casslab.net.emulator"),
    "NetError": "casslab.net.errors", "NetSpecError": "casslab.net.errors",
    **dict.fromkeys(("BUILTIN_PROFILES", "LinkConditions", "NetProfile", "resolve_profile"),
                    "casslab.net.profiles"),
    "NetSpec": "casslab.net.spec"})
# The function `check` shares its name with its module.
keep_exports_over_submodules(__name__, ("check",))
