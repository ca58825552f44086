"""Names and labels shared by the objects of one rendered cell.

cass-operator names its pods `<cluster>-<datacenter>-<rack>-sts-<ordinal>` and its
service `<cluster>-<datacenter>-service` (after cleaning the cluster name to a DNS-1035
label), so casslab can address node N and the contact point without a running cluster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from casslab.cassandra.cql import NATIVE_PORT
from casslab.core.errors import UsageError

LAB_LABEL = "casslab.io/lab"
ROLE_LABEL = "casslab.io/role"
# cass-operator's own pod labels (apis/cassandra/v1beta1 of k8ssandra/cass-operator) and
# the StatefulSet controller's per-pod label.
DATACENTER_LABEL = "cassandra.datastax.com/datacenter"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
DATACENTER = "dc1"
MAX_NAME = 40  # leaves room for "-dc1-rack1-sts-31" and "-node12-to-node31" in 63


def dns_label(text: str, what: str) -> str:
    """`text` as a DNS-1035 label (lowercase letters, digits, '-'; starts with a letter)."""
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    name = re.sub(r"^[^a-z]+", "", name)[:MAX_NAME].rstrip("-")
    if not name:
        raise UsageError(f"{what} {text!r}: needs a letter to make a Kubernetes name (e.g. "
                         "cass-lab)")
    return name


def check_namespace(name: str) -> str:
    """A namespace as given, if Kubernetes takes it (a DNS-1123 label); else UsageError."""
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name):
        raise UsageError(f"--namespace {name!r}: not a Kubernetes namespace (lowercase "
                         "letters, digits and '-', at most 63, e.g. casslab)")
    return name


@dataclass(frozen=True)
class Naming:
    """Where the objects of one cell live and what they are called."""

    cluster: str
    namespace: str
    racks: int = 1

    @property
    def service_host(self) -> str:
        """The contact point casslab-load is given: cass-operator's datacenter service."""
        return f"{self.cluster}-{DATACENTER}-service:{NATIVE_PORT}"

    def rack(self, i: int) -> str:
        return f"rack{i}"

    def node_pod(self, node: int) -> str:
        """The pod of node N (1-based) with one rack: the StatefulSet's ordinal N-1."""
        return f"{self.cluster}-{DATACENTER}-{self.rack(1)}-sts-{node - 1}"

    def labels(self, role: str) -> dict[str, str]:
        return {LAB_LABEL: self.cluster, ROLE_LABEL: role}
