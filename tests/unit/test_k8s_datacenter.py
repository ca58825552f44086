"""Hardware profile, heap, overrides and racks -> a cass-operator CassandraDatacenter."""

from __future__ import annotations

from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.experiment.spec import parse_spec
from casslab.k8s import pick_cell
from casslab.k8s.datacenter import datacenter
from casslab.k8s.names import Naming

NAMING = Naming(cluster="lab", namespace="ns")


def render(lab: str, *, racks: int = 1) -> dict[str, Any]:
    cell = pick_cell(parse_spec(f"name: t\nlab: {lab}\nworkload: {{name: ycsb-a}}\n"))
    return datacenter(cell, Naming("lab", "ns", racks), server_version="5.0.6",
                      server_image=None, storage_class="fast", storage_size="5Gi",
                      campaign="t")


def test_a_pi_profile_sets_the_cassandra_container_to_its_quota_and_memory() -> None:
    spec = render("{nodes: 3, profile: rpi2}")["spec"]
    assert spec["size"] == 3
    assert spec["resources"] == {"requests": {"cpu": "600m", "memory": "1024Mi"},
                                 "limits": {"cpu": "600m", "memory": "1024Mi"}}
    # Cassandra's own rule on 1 GiB: max(min(512, 1024), min(256, 8192)) = 512
    assert spec["config"]["jvm-server-options"] == {"initial_heap_size": "512M",
                                                    "max_heap_size": "512M"}


def test_an_unlimited_profile_sets_neither_resources_nor_heap() -> None:
    spec = render("{nodes: 1, profile: host}")["spec"]
    assert "resources" not in spec and "jvm-server-options" not in spec["config"]


def test_overrides_go_to_cassandra_yaml_over_open_access() -> None:
    spec = render("{nodes: 1, set: {concurrent_reads: 4, authorizer: CassandraAuthorizer}}")
    assert spec["spec"]["config"]["cassandra-yaml"] == {
        "authenticator": "AllowAllAuthenticator", "authorizer": "CassandraAuthorizer",
        "concurrent_reads": 4}


def test_what_a_pod_cannot_enforce_is_annotated() -> None:
    notes = render("{nodes: 2, profile: t2.micro}")["metadata"]["annotations"]
    assert notes["casslab.io/disk-read-mb-s"] == "128"
    assert notes["casslab.io/cpu-credits"] == "t2.micro"
    assert "disk bandwidth" in notes["casslab.io/not-enforced"]
    assert "CPU credits of t2.micro" in notes["casslab.io/not-enforced"]


def test_racks_are_named_and_no_more_than_the_nodes() -> None:
    assert render("{nodes: 3}", racks=3)["spec"]["racks"] == [
        {"name": "rack1"}, {"name": "rack2"}, {"name": "rack3"}]
    with pytest.raises(UsageError, match=r"--racks 4: must be between 1 and the cell's 3 "
                       "nodes"):
        render("{nodes: 3}", racks=4)


def test_storage_takes_the_class_and_size() -> None:
    claim = render("{nodes: 1}")["spec"]["storageConfig"]["cassandraDataVolumeClaimSpec"]
    assert claim == {"storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "5Gi"}}}
