"""Offline checks of rendered objects: Kubernetes' own schemas for built-in kinds
(kubernetes-validate, strict: an unknown field fails), casslab's JSON schemas
(schemas/*.json) for the custom resources. No cluster is involved.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from casslab.core.errors import PrerequisiteError, UsageError

# The Kubernetes minor whose schemas the built-in kinds are checked against: Indexed
# Jobs (batch/v1 completionMode) are GA since 1.24; this is a release still supported
# by the cloud providers' managed clusters.
K8S_VERSION = "1.31"
CUSTOM_SCHEMAS = {
    ("cassandra.datastax.com/v1beta1", "CassandraDatacenter"): "cassandradatacenter-v1beta1.json",
    ("chaos-mesh.org/v1alpha1", "NetworkChaos"): "networkchaos-v1alpha1.json",
}
INSTALL = "pip install 'casslab[k8s]' (kubernetes-validate and jsonschema)"


class ManifestError(UsageError):
    """A rendered object does not pass its schema; the message names the object and the
    field."""


def validate(obj: dict[str, Any]) -> None:
    """Check one object; raises ManifestError `Kind/name: field.path: problem`, or
    PrerequisiteError when the validators are not installed."""
    key = (str(obj.get("apiVersion")), str(obj.get("kind")))
    if key in CUSTOM_SCHEMAS:
        _custom(obj, CUSTOM_SCHEMAS[key])
    else:
        _builtin(obj)


def _where(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{obj.get('kind', '?')}/{name or '?'}"


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top)"


def _custom(obj: dict[str, Any], schema_file: str) -> None:
    try:
        import jsonschema
    except ImportError:
        raise PrerequisiteError(f"validating {_where(obj)} needs jsonschema: {INSTALL}"
                                ) from None
    validator = jsonschema.Draft7Validator(_schema(schema_file))
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        e = errors[0]
        raise ManifestError(f"{_where(obj)}: {_path(e.absolute_path)}: {e.message} "
                            f"(schema {schema_file})")


@cache
def _schema(schema_file: str) -> dict[str, Any]:
    text = resources.files("casslab.k8s").joinpath("schemas", schema_file).read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _builtin(obj: dict[str, Any]) -> None:
    try:
        import kubernetes_validate
    except ImportError:
        raise PrerequisiteError(f"validating {_where(obj)} needs kubernetes-validate: "
                                f"{INSTALL}") from None
    try:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        raise ManifestError(f"{_where(obj)}: {_path(exc.absolute_path)}: {exc.message} (Kubernetes "
                            f"{K8S_VERSION} schema)") from None
    except kubernetes_validate.SchemaNotFoundError:
        raise ManifestError(f"{_where(obj)}: no Kubernetes {K8S_VERSION} schema for "
                            f"{obj.get('apiVersion')} {obj.get('kind')}") from None
