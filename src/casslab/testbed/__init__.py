"""A lab joined with its network emulation: the one place where `casslab.lab` and
`casslab.net` meet (neither imports the other), on this machine or on real hosts.

Everything that builds, uses or tears down a lab goes through a `Testbed` (base.py),
opened by `open_testbed` (choose.py, the one place that decides local or hosts); a local
lab through `open_lab`, so the packet-delay daemon and its rules always live and die with
the lab. The hosts backend is the subpackage `casslab.testbed.hosts`.
"""

from typing import TYPE_CHECKING

from casslab.core.lazy import exports

if TYPE_CHECKING:
    from casslab.testbed.base import Testbed
    from casslab.testbed.choose import open_testbed
    from casslab.testbed.listing import list_testbeds
    from casslab.testbed.netlab import (
        NetExtension,
        NetTarget,
        apply_net,
        net_target,
        open_lab,
        probe_endpoints,
    )

__all__ = ["NetExtension", "NetTarget", "Testbed", "apply_net", "list_testbeds", "net_target",
           "open_lab", "open_testbed", "probe_endpoints"]
# Lazy: `lab list` reads state files without the lab stack (casslab.core.lazy).
__getattr__, __dir__ = exports(__name__, {
    "Testbed": "casslab.testbed.base", "open_testbed": "casslab.testbed.choose",
    "list_testbeds": "casslab.testbed.listing",
    **{name: "casslab.testbed.netlab" for name in (
        "NetExtension", "NetTarget", "apply_net", "net_target", "open_lab",
        "probe_endpoints")}})
