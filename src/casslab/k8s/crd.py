"""The custom resources' schemas as the operators publish them, made checkable offline.

A CRD's `openAPIV3Schema` is a structural OpenAPI v3 schema, not JSON Schema; what differs
for a validator (jsonschema, Draft 7):
- `nullable: true` lets `null` through: the type becomes [type, "null"];
- `x-kubernetes-int-or-string: true` takes an integer or a string (controller-gen also
  writes the anyOf; one is added when a schema lacks it);
- a Go json.RawMessage field, which controller-gen writes as `type: string, format: byte`
  and the operator marks x-kubernetes-preserve-unknown-fields (cass-operator's
  `spec.config`), takes any JSON value: the operator reads it as raw JSON and its own
  samples (config/samples/) give it as an object, so type and format are dropped there;
- `description` is documentation only and is dropped (it is most of the text);
- the other `x-kubernetes-*` keys (preserve-unknown-fields, embedded-resource, list types,
  CEL validations) stay as they are: jsonschema ignores keys it does not know, and
  casslab's strictness layer (`strict`) reads the first two.

The converted schema is committed with its provenance (scripts/k8s_schemas.py writes it,
`make k8s-schemas`); `digest` is the sha256 that file records of its own schema.

`strict` is casslab's own layer, applied when validating and never written back: a CRD
prunes fields its schema does not name (the API server drops them silently) or, where it
says x-kubernetes-preserve-unknown-fields, keeps them for an operator that ignores them
(cass-operator's whole `spec` is so marked); either way a misspelt field would do nothing
on a cluster. casslab refuses it instead, in every object whose fields the published
schema lists; an object it lists no fields of (cass-operator's `spec.config`, raw
cassandra.yaml keys) stays open.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
# Every object may carry these when it is an embedded resource (Kubernetes adds them).
EMBEDDED_FIELDS = ("apiVersion", "kind", "metadata")
# Keywords whose value is a map from names to schemas (not a schema itself).
_NAMED_SCHEMAS = ("properties", "patternProperties", "definitions", "$defs")
# Keywords whose value is one schema or a list of them.
_SUBSCHEMAS = ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf")


def _map_subschemas(schema: dict[str, Any], fn: Callable[[dict[str, Any]], dict[str, Any]],
                    drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """A copy of `schema` with `fn` applied to each of its direct subschemas (under
    _NAMED_SCHEMAS and _SUBSCHEMAS) and the keys `drop` left out."""
    def sub(value: Any) -> Any:
        if isinstance(value, dict):
            return fn(value)
        if isinstance(value, list):
            return [sub(v) for v in value]
        return value  # additionalProperties: true / false

    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in drop:
            continue
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: fn(s) for name, s in value.items()}
        elif key in _SUBSCHEMAS:
            out[key] = sub(value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def openapi_to_jsonschema(schema: dict[str, Any]) -> dict[str, Any]:
    """A CRD version's openAPIV3Schema as JSON Schema (Draft 7), descriptions dropped."""
    out = _map_subschemas(schema, openapi_to_jsonschema, drop=("description", "nullable"))
    if _raw_json(schema):
        del out["type"], out["format"]
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if schema.get(INT_OR_STRING) is True and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def _raw_json(schema: dict[str, Any]) -> bool:
    return (schema.get(PRESERVE) is True and schema.get("type") == "string"
            and schema.get("format") == "byte")


def digest(schema: dict[str, Any]) -> str:
    """sha256 of the schema's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` that refuses fields it does not name: every object schema with
    `properties` and no `additionalProperties` gets additionalProperties false, whether or
    not it keeps unknown fields (see the module's doc); an embedded resource also takes
    apiVersion, kind and metadata."""
    out = _map_subschemas(schema, strict)
    if "properties" in out and "additionalProperties" not in out:
        if out.get(EMBEDDED):
            out["properties"] = {**{f: {} for f in EMBEDDED_FIELDS}, **out["properties"]}
        out["additionalProperties"] = False
    return out
