"""The custom resources' schemas are the operators' published CRDs, as
scripts/update_crd_schemas.py extracts them, and the golden renders pass them."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from casslab.k8s import ManifestError, validate
from casslab.k8s.validate import CUSTOM_SCHEMAS

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "k8s"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "update_crd_schemas", ROOT / "scripts" / "update_crd_schemas.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


def _gits() -> dict[str, Path]:
    # CASSLAB_CRD_GIT="k8ssandra/cass-operator=DIR,chaos-mesh/chaos-mesh=DIR": clones
    # holding the tags (nothing is downloaded by the tests).
    pairs = [p.partition("=") for p in os.environ.get("CASSLAB_CRD_GIT", "").split(",") if p]
    return {repo: Path(path) for repo, _, path in pairs}


def test_each_custom_schema_names_its_published_source() -> None:
    by_file = {s.schema_file: s for s in SCRIPT.SOURCES}
    assert set(by_file) == set(CUSTOM_SCHEMAS.values())
    for (api_version, kind), name in CUSTOM_SCHEMAS.items():
        doc = json.loads((SCRIPT.SCHEMAS / name).read_text())
        source = doc["x-casslab-source"]
        assert source["tag"] == by_file[name].tag and source["file"] == by_file[name].path
        assert f"{source['group']}/{source['version']}" == api_version
        assert source["kind"] == kind and len(source["sha256"]) == 64


@pytest.mark.parametrize("source", SCRIPT.SOURCES, ids=lambda s: s.repo)
def test_the_committed_schema_is_the_extraction_of_the_published_crd(source: Any) -> None:
    files = SCRIPT.read_files(source, _gits())
    if files is None:
        pytest.skip(f"{source.repo} {source.tag} is neither in the Go module cache nor in "
                    "CASSLAB_CRD_GIT (the Go proxy does not serve it; set "
                    f"CASSLAB_CRD_GIT={source.repo}=CLONE to check)")
    committed = (SCRIPT.SCHEMAS / source.schema_file).read_text()
    assert committed == SCRIPT.dumps(SCRIPT.extract(source, files))


def test_a_patch_removes_the_path_it_names() -> None:
    crd = {"spec": {"versions": [{"a": {"b/c": 1, "d": 2}}]}}
    SCRIPT._apply(crd, [{"op": "remove", "path": "/spec/versions/0/a/b~1c"}], "p")
    assert crd == {"spec": {"versions": [{"a": {"d": 2}}]}}


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/*.yaml")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_golden_renders_pass_the_published_schemas(path: Path) -> None:
    for obj in yaml.safe_load_all(path.read_text()):
        if obj:
            validate(obj)


def test_a_field_the_crd_does_not_know_is_refused_where_it_prunes() -> None:
    # cass-operator's `spec` preserves unknown fields (its `config` is free-form), so strict
    # validation applies below it: a misspelt rack field is refused, as the API server does.
    dc = yaml.safe_load((GOLDEN / "edge-steps-first" / "datacenter.yaml").read_text())
    dc["spec"]["storageConfig"]["cassandraDataVolumeClaimSpec"]["storageClass"] = "x"
    with pytest.raises(ManifestError, match=r"storageConfig.cassandraDataVolumeClaimSpec: "
                       r"Additional properties are not allowed \('storageClass'"):
        validate(dc)
