"""A cass-operator CassandraDatacenter (cassandra.datastax.com/v1beta1) for one cell.

Profile -> pod: the CPU quota and memory limit become the Cassandra container's requests
and limits (equal, so that container's cgroup gets the same hard CPU quota and memory limit
as a lab node); the heap goes to `jvm-server-options`; `lab.set` to `cassandra-yaml`. What a
pod spec cannot say (disk bandwidth, CPU credits, one node with its own profile) is kept
in `casslab.io/...` annotations so a reader of the manifest sees what was left out.

The pod is not Guaranteed, only Burstable: cass-operator (v1.32.0,
pkg/reconciliation/defaults.go and construct_podtemplatespec.go) adds the
`server-system-logger` sidecar with requests cpu 100m / memory 64M and a memory limit of
128M only, the `server-config-init` init container with requests 1 CPU / 256M against
limits 1 CPU / 384M, and, for Cassandra >= 4.1, `server-config-init-base` with none; a pod
is Guaranteed only when every container's requests equal its limits for both CPU and
memory. The Cassandra container's own limits hold either way; what Burstable changes is
the kubelet's eviction order and that the static CPU manager gives it no exclusive cores.
"""

from __future__ import annotations

from typing import Any

from casslab.core.errors import UsageError
from casslab.hardware import HardwareProfile
from casslab.k8s.cell import CellLab
from casslab.k8s.names import DATACENTER, Naming

API_VERSION = "cassandra.datastax.com/v1beta1"
KIND = "CassandraDatacenter"


def datacenter(cell: CellLab, naming: Naming, *, server_version: str,
               server_image: str | None, storage_class: str, storage_size: str,
               campaign: str) -> dict[str, Any]:
    """The CassandraDatacenter object; raises UsageError for more racks than nodes."""
    if not 1 <= naming.racks <= cell.nodes:
        raise UsageError(f"--racks {naming.racks}: must be between 1 and the cell's "
                         f"{cell.nodes} node{'s' if cell.nodes > 1 else ''}")
    spec: dict[str, Any] = {
        "clusterName": naming.cluster,
        "serverType": "cassandra",
        "serverVersion": server_version,
        "size": cell.nodes,
        "racks": [{"name": naming.rack(i)} for i in range(1, naming.racks + 1)],
        "storageConfig": {"cassandraDataVolumeClaimSpec": {
            "storageClassName": storage_class,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": storage_size}},
        }},
        "additionalLabels": naming.labels("node"),
    }
    if server_image:
        spec["serverImage"] = server_image
    resources = pod_resources(cell.profile)
    if resources:
        spec["resources"] = {"requests": resources, "limits": dict(resources)}
    config = _config(cell)
    if config:
        spec["config"] = config
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": DATACENTER, "namespace": naming.namespace,
                     "labels": naming.labels("node"),
                     "annotations": cell_annotations(cell, campaign)},
        "spec": spec,
    }


def pod_resources(profile: HardwareProfile) -> dict[str, str]:
    """{cpu, memory} of a node's container: millicores and MiB; {} for no limits."""
    out: dict[str, str] = {}
    if profile.cpu_cores is not None:
        out["cpu"] = f"{max(1, round(profile.cpu_cores * 1000))}m"
    if profile.memory_mib is not None:
        out["memory"] = f"{profile.memory_mib}Mi"
    return out


# casslab-load connects without credentials, as to a local lab: the server must not ask
# for any whatever the operator's or the image's default (lab.set may still change it).
OPEN_ACCESS = {"authenticator": "AllowAllAuthenticator", "authorizer": "AllowAllAuthorizer"}


def _config(cell: CellLab) -> dict[str, Any]:
    config: dict[str, Any] = {"cassandra-yaml": {**OPEN_ACCESS, **cell.overrides}}
    heap = _heap_mib(cell.profile)
    if heap is not None:
        config["jvm-server-options"] = {"initial_heap_size": f"{heap}M",
                                        "max_heap_size": f"{heap}M"}
    return config


def _heap_mib(profile: HardwareProfile) -> int | None:
    """The profile's heap, or Cassandra's rule on its memory; None (the server's own rule
    on the pod's memory) when the profile sets neither."""
    if profile.heap_mib is None and profile.memory_mib is None:
        return None
    return profile.effective_heap_mib(0)


def cell_annotations(cell: CellLab, campaign: str) -> dict[str, str]:
    """What the manifest carries about the cell but Kubernetes does not enforce."""
    p = cell.profile
    out = {"casslab.io/campaign": campaign, "casslab.io/cell": cell.key,
           "casslab.io/profile": p.name}
    if p.disk_read_mb_s is not None:
        out["casslab.io/disk-read-mb-s"] = f"{p.disk_read_mb_s:g}"
    if p.disk_write_mb_s is not None:
        out["casslab.io/disk-write-mb-s"] = f"{p.disk_write_mb_s:g}"
    if p.burst is not None:
        out["casslab.io/cpu-credits"] = p.burst
    if cell.node_profiles:
        out["casslab.io/node-profiles"] = ",".join(f"{k}={v}" for k, v in
                                                   sorted(cell.node_profiles.items()))
    notes = [*cell.notes, *_not_enforced(cell)]
    if notes:
        out["casslab.io/not-enforced"] = "; ".join(notes)
    return out


def _not_enforced(cell: CellLab) -> list[str]:
    p = cell.profile
    out: list[str] = []
    if p.disk_read_mb_s is not None or p.disk_write_mb_s is not None:
        out.append("disk bandwidth (a pod has no disk rate limit; use a storage class "
                   "with provisioned throughput)")
    if p.burst is not None:
        out.append(f"CPU credits of {p.burst} (the pod keeps its full quota)")
    if cell.node_profiles:
        out.append("per-node profiles (a datacenter has one pod size; every node gets "
                   f"{p.name})")
    return out
