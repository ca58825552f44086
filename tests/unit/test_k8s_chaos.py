"""Link tables -> Chaos Mesh NetworkChaos: grouping, selectors, direction, actions."""

from __future__ import annotations

from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.k8s.chaos import group_links, network_chaos, tc_fields
from casslab.k8s.names import Naming
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import NetSpec

NAMING = Naming(cluster="lab", namespace="ns")


def objects(mapping: dict[str, Any], nodes: int, naming: Naming = NAMING
            ) -> list[dict[str, Any]]:
    table = NetSpec.from_mapping(mapping).resolve(nodes)
    links = {k: c for k, c in table.items() if not c.is_clean}
    return network_chaos(links, nodes, naming)


def test_a_profile_on_every_link_is_two_objects() -> None:
    objs = objects({"all": {"delay_ms": 5}}, 3)
    assert [o["metadata"]["name"] for o in objs] == ["lab-clients-nodes", "lab-nodes-to-nodes"]
    client, nodes = (o["spec"] for o in objs)
    assert client["direction"] == "both"
    assert client["selector"]["labelSelectors"] == {"casslab.io/lab": "lab",
                                                    "casslab.io/role": "client"}
    assert client["target"]["selector"]["labelSelectors"] == {
        "cassandra.datastax.com/datacenter": "dc1"}
    assert nodes["direction"] == "to"
    assert client["action"] == "delay" and client["delay"]["latency"] == "5ms"


def test_one_link_selects_its_nodes_pods_by_name() -> None:
    objs = objects({"links": {"node1-node3": {"delay_ms": 20}}}, 3)
    assert len(objs) == 1
    spec = objs[0]["spec"]
    assert objs[0]["metadata"]["name"] == "lab-node1-node3"
    assert spec["direction"] == "both"
    assert spec["selector"]["labelSelectors"] == {
        "statefulset.kubernetes.io/pod-name": "lab-dc1-rack1-sts-0"}
    assert spec["target"]["selector"]["labelSelectors"] == {
        "statefulset.kubernetes.io/pod-name": "lab-dc1-rack1-sts-2"}


def test_one_direction_alone_is_direction_to() -> None:
    objs = objects({"links": {"client-to-node2": {"loss_pct": 2}}}, 2)
    assert [o["metadata"]["name"] for o in objs] == ["lab-client-to-node2"]
    spec = objs[0]["spec"]
    assert (spec["direction"], spec["action"], spec["loss"]["loss"]) == ("to", "loss", "2")


def test_unlike_directions_are_two_objects() -> None:
    objs = objects({"links": {"node1-to-node2": {"delay_ms": 5},
                              "node2-to-node1": {"delay_ms": 9}}}, 2)
    assert [o["spec"]["delay"]["latency"] for o in objs] == ["5ms", "9ms"]
    assert {o["spec"]["direction"] for o in objs} == {"to"}


def test_per_node_links_need_one_rack() -> None:
    with pytest.raises(UsageError, match=r"--racks 2: link conditions of node1 alone need "
                       "one rack"):
        objects({"links": {"node1-node2": {"delay_ms": 5}}}, 3, Naming("lab", "ns", 2))
    # alike for every node, racks do not matter
    assert len(objects({"all": {"delay_ms": 5}}, 2, Naming("lab", "ns", 2))) == 2


def test_a_rate_alone_is_a_bandwidth_bucket_and_with_delay_a_netem_rate() -> None:
    alone = tc_fields(LinkConditions(rate_mbit=8.0))
    # 8 Mbit/s = 1 MB/s: 10 ms of bucket, 50 ms of queue
    assert alone == {"bandwidth": {"rate": "8000kbit", "buffer": 10_000, "limit": 50_000}}
    slow = tc_fields(LinkConditions(rate_mbit=0.1))["bandwidth"]
    assert slow["buffer"] == 3028 and slow["limit"] == 3028  # at least two full frames
    mixed = tc_fields(LinkConditions(delay_ms=2.5, jitter_ms=0.5, rate_mbit=8.0))
    assert mixed == {"delay": {"latency": "2.5ms", "jitter": "0.5ms", "correlation": "0"},
                     "rate": {"rate": "8000kbit"}}


def test_a_shared_medium_and_a_loss_burst_are_annotated_as_not_enforced() -> None:
    objs = objects({"all": {"loss_pct": 1, "loss_burst": 3, "rate_mbit": 10,
                            "medium": "air"}}, 1)
    note = objs[0]["metadata"]["annotations"]["casslab.io/not-enforced"]
    assert "shared medium air" in note and "loss burst 3" in note


def test_a_clean_table_has_no_objects() -> None:
    assert group_links({}, 3) == []
