"""The local lab: a real Cassandra cluster on this machine."""

from typing import TYPE_CHECKING

from casslab.core.lazy import exports

if TYPE_CHECKING:
    from casslab.lab.cluster import Lab, LabOptions
    from casslab.lab.state import LabState, NodeState, list_labs

__all__ = ["Lab", "LabOptions", "LabState", "NodeState", "list_labs"]
__getattr__, __dir__ = exports(__name__, {
    "Lab": "casslab.lab.cluster", "LabOptions": "casslab.lab.cluster",
    "list_labs": "casslab.lab.state", "LabState": "casslab.lab.state",
    "NodeState": "casslab.lab.state"})
