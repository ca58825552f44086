"""The offline validation refuses broken manifests, naming the object and the field
(so it cannot pass everything), and passes what render emits."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from casslab.experiment.spec import load_spec
from casslab.k8s import ManifestError, render, validate
from casslab.k8s.validate import CUSTOM_SCHEMAS, published_schema

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "002-edge" / "2-edge-steps.yaml"


@pytest.fixture(scope="module")
def objects() -> dict[str, dict[str, Any]]:
    m = render(load_spec(EXAMPLE))
    assert m.chaos and m.prepare is not None
    return {"dc": m.datacenter, "chaos": m.chaos[0], "job": m.run}


def broken(obj: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    at = out
    for p in path[:-1]:
        at = at[p]
    at[path[-1]] = value
    return out


def test_rendered_objects_pass(objects: dict[str, dict[str, Any]]) -> None:
    for obj in objects.values():
        validate(obj)


@pytest.mark.parametrize(("which", "path", "value", "message"), [
    ("dc", ["spec", "size"], 0,
     r"^CassandraDatacenter/dc1: spec.size: 0 is less than the minimum of 1"),
    ("dc", ["spec", "serverVersion"], "5.0",
     r"^CassandraDatacenter/dc1: spec.serverVersion: '5.0' does not match"),
    ("dc", ["spec", "storageConfig", "cassandraDataVolumeClaimSpec", "resources", "requests",
            "storage"], "lots",
     r"^CassandraDatacenter/dc1: spec.storageConfig.cassandraDataVolumeClaimSpec.resources."
     r"requests.storage: 'lots' does not match"),
    ("dc", ["spec", "serverType"], "scylla",
     r"^CassandraDatacenter/dc1: spec.serverType: 'scylla' is not one of"),
    ("dc", ["spec", "size"], "3",
     r"^CassandraDatacenter/dc1: spec.size: '3' is not of type 'integer'"),
    ("dc", ["spec", "storageconfig"], {},
     r"^CassandraDatacenter/dc1: spec: Additional properties are not allowed "
     r"\('storageconfig'"),
    ("dc", ["metadata", "namespace"], 7,
     r"^CassandraDatacenter/dc1: metadata.namespace: 7 is not of type 'string'"),
    ("dc", ["spec", "racks", 0, "zone_typo"], "a",
     r"^CassandraDatacenter/dc1: spec.racks\[0\]: Additional properties are not allowed"),
    ("chaos", ["spec", "action"], "slow",
     r"^NetworkChaos/\S+: spec.action: 'slow' is not one of"),
    ("chaos", ["spec", "delay", "latencey"], "5ms",
     r"^NetworkChaos/\S+: spec.delay: Additional properties are not allowed \('latencey'"),
    ("chaos", ["spec", "delay", "latency"], "5 ms",
     r"^NetworkChaos/\S+: spec.delay.latency: '5 ms' is not a Go duration .*Duration webhook"),
    ("chaos", ["spec", "delay", "correlation"], "half",
     r"^NetworkChaos/\S+: spec.delay.correlation: 'half' is not a decimal number"),
    ("chaos", ["spec", "mode"], "most",
     r"^NetworkChaos/\S+: spec.mode: 'most' is not one of"),
    ("chaos", ["spec", "target", "selector", "labelSelectors"], "role=client",
     r"^NetworkChaos/\S+: spec.target.selector.labelSelectors: 'role=client' is not of type "
     r"'object'"),
    ("chaos", ["metadata", "lables"], {},
     r"^NetworkChaos/\S+: metadata: Additional properties are not allowed \('lables'"),
    ("chaos", ["spec", "direction"], "sideways",
     r"^NetworkChaos/\S+: spec.direction: 'sideways' is not one of"),
    ("job", ["spec", "completionMode"], 3,
     r"^Job/edge-edge-steps-load: spec.completionMode: 3 is not of type 'string'"),
    ("job", ["spec", "template", "spec", "containers", 0, "argz"], ["x"],
     r"^Job/edge-edge-steps-load: spec.template.spec.containers\[0\]: Additional "
     r"properties are not allowed"),
    ("job", ["spec", "completions"], "4",
     r"^Job/edge-edge-steps-load: spec.completions: '4' is not of type 'integer'"),
])
def test_a_broken_object_fails_naming_object_and_field(
        objects: dict[str, dict[str, Any]], which: str, path: list[Any], value: Any,
        message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        validate(broken(objects[which], path, value))


def test_a_bandwidth_action_needs_its_bucket(objects: dict[str, dict[str, Any]]) -> None:
    obj = broken(objects["chaos"], ["spec", "bandwidth"], {"rate": "1mbps", "limit": 0})
    with pytest.raises(ManifestError, match=r"spec.bandwidth: 'buffer' is a required property"):
        validate(obj)


def test_the_published_schema_lets_a_misspelt_field_through_and_casslab_refuses_it(
        objects: dict[str, dict[str, Any]]) -> None:
    """The CRD as published lets an unknown field through (cass-operator's spec keeps
    unknown fields, and ignores them); the strictness layer casslab validates with
    refuses it."""
    obj = broken(objects["dc"], ["spec", "sizee"], 3)
    published = published_schema(CUSTOM_SCHEMAS[("cassandra.datastax.com/v1beta1",
                                                  "CassandraDatacenter")])
    assert list(jsonschema.Draft7Validator(published).iter_errors(obj)) == []
    with pytest.raises(ManifestError, match=r"spec: Additional properties are not allowed "
                       r"\('sizee' was unexpected\)"):
        validate(obj)


def test_fields_the_crd_keeps_unknown_stay_open(objects: dict[str, dict[str, Any]]) -> None:
    """spec.config is raw JSON the operator reads (preserve-unknown-fields): any
    cassandra.yaml key passes."""
    obj = broken(objects["dc"], ["spec", "config", "cassandra-yaml", "made_up_option"], 1)
    validate(obj)


def test_a_kind_kubernetes_does_not_know_is_refused() -> None:
    with pytest.raises(ManifestError, match=r"^Widget/w: no Kubernetes 1.31 schema for "
                       r"example.com/v1 Widget"):
        validate({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
