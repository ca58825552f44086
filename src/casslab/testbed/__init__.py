"""A lab joined with its network emulation: the one place where `casslab.lab` and
`casslab.net` meet (neither imports the other).

Everything that builds, uses or tears down a lab goes through `open_lab`, so the
packet-delay daemon and its rules always live and die with the lab.
"""

from casslab.testbed.netlab import (
    NetExtension,
    NetTarget,
    apply_net,
    net_target,
    open_lab,
    probe_endpoints,
)

__all__ = ["NetExtension", "NetTarget", "apply_net", "net_target", "open_lab",
           "probe_endpoints"]
