"""The CRD schemas: the committed files carry their provenance and are what it says; the
OpenAPI -> JSON Schema conversion and casslab's strictness layer keep the CRD semantics
that matter."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from casslab.k8s.crd import digest, openapi_to_jsonschema, strict
from casslab.k8s.validate import CUSTOM_SCHEMAS

ROOT = Path(__file__).resolve().parents[2]
PROVENANCE = ("module", "version", "module_sum", "path", "source_sha256", "crd_version",
              "command", "schema_sha256")


def schema_file(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        resources.files("casslab.k8s").joinpath("schemas", name).read_text())
    return loaded


@pytest.mark.parametrize(("key", "name"), sorted(CUSTOM_SCHEMAS.items()))
def test_each_schema_file_records_its_source_and_matches_its_digest(
        key: tuple[str, str], name: str) -> None:
    doc = schema_file(name)
    prov = doc["provenance"]
    assert set(PROVENANCE) <= set(prov)
    assert re.fullmatch(r"[0-9a-f]{64}", prov["source_sha256"])
    assert prov["module_sum"].startswith("h1:")
    assert key[0].endswith("/" + prov["crd_version"])
    assert prov["schema_sha256"] == digest(doc["schema"])
    assert doc["schema"]["properties"]["kind"]["type"] == "string"


def test_a_schema_edited_by_hand_no_longer_matches_its_digest() -> None:
    doc = schema_file("networkchaos-v1alpha1.json")
    doc["schema"]["properties"]["spec"]["properties"]["action"]["enum"].append("slow")
    assert doc["provenance"]["schema_sha256"] != digest(doc["schema"])


def test_the_readme_names_the_pinned_versions() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make k8s-schemas" in readme
    for name in CUSTOM_SCHEMAS.values():
        prov = schema_file(name)["provenance"]
        assert f"{prov['module']}@{prov['version']}" in readme


def test_nullable_int_or_string_and_raw_json_become_json_schema() -> None:
    out = openapi_to_jsonschema({
        "type": "object", "description": "dropped",
        "properties": {
            "description": {"type": "string", "nullable": True},
            "port": {"x-kubernetes-int-or-string": True},
            "config": {"type": "string", "format": "byte",
                       "x-kubernetes-preserve-unknown-fields": True},
            "list": {"type": "array", "items": {"type": "integer", "description": "x"}},
        }})
    assert "description" not in out
    props = out["properties"]
    assert props["description"] == {"type": ["string", "null"]}
    v = jsonschema.Draft7Validator(out)
    assert v.is_valid({"description": None, "port": "http", "config": {"a": [1]},
                       "list": [1]})
    assert v.is_valid({"port": 8080, "config": "raw"})
    assert not v.is_valid({"port": 1.5})
    assert not v.is_valid({"list": ["x"]})


def test_strict_closes_listed_objects_and_leaves_open_ones_open() -> None:
    schema = {"type": "object", "properties": {
        "known": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                  "properties": {"a": {"type": "string"}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "pod": {"type": "object", "x-kubernetes-embedded-resource": True,
                "properties": {"spec": {"type": "object"}}}}}
    v = jsonschema.Draft7Validator(strict(schema))
    assert v.is_valid({"known": {"a": "x"}, "free": {"anything": 1}, "labels": {"k": "v"},
                       "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}})
    assert not v.is_valid({"known": {"b": "x"}})
    assert not v.is_valid({"pod": {"spek": {}}})
    assert not v.is_valid({"extra": 1})
    assert not v.is_valid({"labels": {"k": 1}})
    assert "additionalProperties" not in schema  # the published schema is left as it was
