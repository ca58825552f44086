"""The local lab: a real Cassandra cluster on this machine."""

from casslab.lab.cluster import Lab, LabOptions, list_labs
from casslab.lab.state import LabState, NodeState

__all__ = ["Lab", "LabOptions", "LabState", "NodeState", "list_labs"]
