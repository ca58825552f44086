"""Regenerate src/casslab/k8s/schemas/*.json from the operators' published CRDs.

`make k8s-schemas` (needs `go` and the Go module proxy; not part of setup or test: the
generated files are committed, so tests and installs need no network).

- CassandraDatacenter v1beta1: the CRD cass-operator publishes in its Go module
  (config/crd/bases/...), read as it is.
- NetworkChaos v1alpha1: Chaos Mesh's root module (which holds its CRD YAML) is not
  served by the proxy; its `api` module is, with the Go types and kubebuilder markers
  Chaos Mesh generates its CRDs from. controller-gen generates the CRD from them here,
  as Chaos Mesh's own `make config` does.

Each output file is {"provenance": {...}, "schema": {...}}: the module and version, the
path in the module, the sha256 of the source file, the generator command, and the sha256
of the schema (casslab.k8s.crd.digest) that tests check the committed text against.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from casslab.k8s.crd import digest, openapi_to_jsonschema

SCHEMAS = Path(__file__).resolve().parents[1] / "src" / "casslab" / "k8s" / "schemas"
COMMAND = "make k8s-schemas (scripts/k8s_schemas.py)"

# The pinned versions: change them here, run `make k8s-schemas`, commit the JSON files.
CASS_OPERATOR = "github.com/k8ssandra/cass-operator"
CASS_OPERATOR_VERSION = "v1.22.4"
CHAOS_MESH_API = "github.com/chaos-mesh/chaos-mesh/api"
CHAOS_MESH_API_VERSION = "v0.0.0-20240821051457-da69c6d9617a"
CONTROLLER_GEN = "sigs.k8s.io/controller-tools/cmd/controller-gen"
CONTROLLER_GEN_VERSION = "v0.17.2"
# Chaos Mesh's CRD options: v1 CRDs; its types have float fields (allowDangerousTypes).
CONTROLLER_GEN_CRD = "crd:crdVersions=v1,allowDangerousTypes=true"


@dataclass(frozen=True)
class Target:
    """One schema file: which CRD version of which module, written where."""

    out: str
    kind: str
    module: str
    version: str
    crd_version: str
    # The CRD file: in the module (published), or in controller-gen's output (generated).
    crd_path: str
    # The Go types the CRD is generated from (None: the CRD is published as such).
    types_path: str | None = None
    # The Go struct of `spec` whose `webhook:` tags name the admission checks (None: none).
    spec_struct: str | None = None


TARGETS = (
    Target("cassandradatacenter-v1beta1.json", "CassandraDatacenter", CASS_OPERATOR,
           CASS_OPERATOR_VERSION, "v1beta1",
           "config/crd/bases/cassandra.datastax.com_cassandradatacenters.yaml"),
    Target("networkchaos-v1alpha1.json", "NetworkChaos", CHAOS_MESH_API,
           CHAOS_MESH_API_VERSION, "v1alpha1", "chaos-mesh.org_networkchaos.yaml",
           types_path="v1alpha1/networkchaos_types.go", spec_struct="NetworkChaosSpec"),
)


def go(args: list[str], cwd: Path) -> str:
    done = subprocess.run(["go", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        sys.exit(f"error: go {' '.join(args)} failed in {cwd}:\n{said}")
    return done.stdout


def download(module: str, version: str, scratch: Path) -> dict[str, Any]:
    """`go mod download -json module@version` from a scratch module; the module's
    directory and hashes."""
    if not (scratch / "go.mod").exists():
        (scratch / "go.mod").write_text("module casslab.local/k8s-schemas\n\ngo 1.22\n")
    info: dict[str, Any] = json.loads(go(["mod", "download", "-json", f"{module}@{version}"],
                                         scratch))
    if "Error" in info:
        sys.exit(f"error: {module}@{version}: {info['Error']}")
    return info


def generate_crds(scratch: Path) -> Path:
    """controller-gen over the Chaos Mesh api module's v1alpha1 package; the output dir."""
    work = scratch / "chaos"
    work.mkdir()
    (work / "go.mod").write_text(f"module casslab.local/chaos\n\ngo 1.22\n\n"
                                 f"require {CHAOS_MESH_API} {CHAOS_MESH_API_VERSION}\n")
    (work / "deps.go").write_text(f'package chaos\n\nimport _ "{CHAOS_MESH_API}/v1alpha1"\n')
    go(["mod", "tidy"], work)
    out = work / "crds"
    go(["run", f"{CONTROLLER_GEN}@{CONTROLLER_GEN_VERSION}", CONTROLLER_GEN_CRD,
        f"paths={CHAOS_MESH_API}/v1alpha1", f"output:crd:dir={out}"], work)
    return out


def crd_schema(crd_file: Path, version: str) -> dict[str, Any]:
    crd = yaml.safe_load(crd_file.read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            schema: dict[str, Any] = v["schema"]["openAPIV3Schema"]
            return schema
    sys.exit(f"error: {crd_file.name} has no version {version}")


def check_samples(schema: dict[str, Any], moddir: Path, t: Target) -> None:
    """The module's own sample objects of this kind (config/samples/) must pass the
    converted schema: a check of the conversion against what the operator documents."""
    samples = sorted((moddir / "config" / "samples").glob("*.yaml"))
    checked = 0
    validator = jsonschema.Draft7Validator(schema)
    for path in samples:
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or not str(doc.get("apiVersion", "")).endswith(
                    "/" + t.crd_version) or doc.get("kind") != t.kind:
                continue
            errors = list(validator.iter_errors(doc))
            if errors:
                sys.exit(f"error: {path.name} ({t.kind}) fails the converted schema: "
                         f"{errors[0].message}")
            checked += 1
    print(f"{t.out}: {checked} sample object(s) of the module pass")


# One field of a Go struct: `Name Type `tags`` or an embedded `Type `tags``.
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([*\[\]\w.]+)\s+`([^`]*)`")
_STRUCT = re.compile(r"^type (\w+) struct \{$(.*?)^\}$", re.MULTILINE | re.DOTALL)


def go_structs(package: Path) -> dict[str, list[tuple[str, str, dict[str, str]]]]:
    """Struct name -> its fields (json name or "" inline, Go type, tags) of a package's
    non-test .go files."""
    out: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    for path in sorted(package.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        for name, body in _STRUCT.findall(path.read_text()):
            fields = []
            for line in body.splitlines():
                m = _FIELD.match(line)
                if m:
                    tags = dict(re.findall(r'(\w+):"([^"]*)"', m.group(3)))
                    fields.append((tags.get("json", "").split(",")[0], m.group(2), tags))
            out[name] = fields
    return out


def webhook_fields(structs: dict[str, list[tuple[str, str, dict[str, str]]]], root: str,
                   prefix: str = "spec") -> dict[str, str]:
    """Dotted JSON path -> `webhook:` tag of every tagged field under struct `root`
    (inline structs flattened, `[]` after a list)."""
    out: dict[str, str] = {}
    for json_name, gotype, tags in structs.get(root, []):
        base = gotype.lstrip("*")
        listed = base.startswith("[]")
        base = base.lstrip("[]*")
        path = prefix if json_name == "" else f"{prefix}.{json_name}{'[]' if listed else ''}"
        tag = tags.get("webhook", "").split(",")[0]
        if tag:
            out[path] = tag
        if base in structs:
            out.update(webhook_fields(structs, base, path))
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(t: Target, scratch: Path) -> dict[str, Any]:
    info = download(t.module, t.version, scratch)
    moddir = Path(info["Dir"])
    provenance: dict[str, Any] = {"module": t.module, "version": t.version,
                                  "module_sum": info.get("Sum"), "crd_version": t.crd_version,
                                  "command": COMMAND}
    if t.types_path is None:
        crd_file = moddir / t.crd_path
        provenance.update(path=t.crd_path, source_sha256=sha256(crd_file))
    else:
        crd_file = generate_crds(scratch) / t.crd_path
        provenance.update(path=t.types_path, source_sha256=sha256(moddir / t.types_path),
                          generated_crd=t.crd_path, generated_crd_sha256=sha256(crd_file),
                          generator=f"{CONTROLLER_GEN}@{CONTROLLER_GEN_VERSION} "
                                    f"{CONTROLLER_GEN_CRD} paths={t.module}/v1alpha1")
    schema = openapi_to_jsonschema(crd_schema(crd_file, t.crd_version))
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    check_samples(schema, moddir, t)
    provenance["schema_sha256"] = digest(schema)
    doc: dict[str, Any] = {"provenance": provenance, "schema": schema}
    if t.spec_struct is not None:
        package = moddir / Path(t.types_path or "").parent
        doc["webhook"] = {
            "source": f"`webhook:` struct tags under {t.spec_struct} in "
                      f"{package.name}/*.go of {t.module}@{t.version}",
            "fields": webhook_fields(go_structs(package), t.spec_struct)}
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SCHEMAS, help="where to write the files")
    args = parser.parse_args()
    if shutil.which("go") is None:
        sys.exit("error: make k8s-schemas needs `go` (1.23 or later, for controller-gen "
                 f"{CONTROLLER_GEN_VERSION}) on PATH and the Go module proxy")
    with tempfile.TemporaryDirectory(prefix="casslab-k8s-schemas-") as tmp:
        for t in TARGETS:
            doc = build(t, Path(tmp))
            path = args.out / t.out
            path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
            print(f"{path}: {t.module}@{t.version} {t.crd_version} "
                  f"sha256 {doc['provenance']['schema_sha256'][:12]}")


if __name__ == "__main__":
    main()
