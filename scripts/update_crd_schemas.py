"""Extract the custom resources' schemas from the operators' own published CRDs.

casslab validates the CassandraDatacenter and NetworkChaos it renders against the
`openAPIV3Schema` of the CRD each operator ships, not a hand-written copy. This script
reads the CRD YAML at a released tag of the operator's repository and writes
src/casslab/k8s/schemas/<kind>-<version>.json: the schema verbatim, beside the name of the
repository, the Go module, the tag, the file and the file's sha256, so anyone can check it.

Where the CRDs come from: a git clone of each repository (`--git OWNER/NAME=GITDIR`, a
bare or normal clone holding the tag), or the Go module cache (GOMODCACHE) when it holds
the module at that version. The Go module proxy does not serve either at a usable version
(cass-operator's module is refused by the proxy; chaos-mesh's v2 tags are not valid
versions of its module path), hence the clone.

    python scripts/update_crd_schemas.py --git k8ssandra/cass-operator=../cass-operator \
        --git chaos-mesh/chaos-mesh=../chaos-mesh          # rewrite the schemas
    python scripts/update_crd_schemas.py --check ...       # exit 1 if they differ
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SCHEMAS = Path(__file__).resolve().parents[1] / "src" / "casslab" / "k8s" / "schemas"


@dataclass(frozen=True)
class Source:
    schema_file: str
    repo: str  # owner/name on GitHub
    module: str
    tag: str
    path: str  # of the CRD inside the repository
    version: str  # the CRD version served (spec.versions[].name)
    # The operator's own kustomize JSON patches applied to the CRD it installs (in order).
    patches: tuple[str, ...] = ()


SOURCES = (
    Source("cassandradatacenter-v1beta1.json", "k8ssandra/cass-operator",
           "github.com/k8ssandra/cass-operator", "v1.32.0",
           "config/crd/bases/cassandra.datastax.com_cassandradatacenters.yaml", "v1beta1",
           # config/crd/kustomization.yaml: `config` leaves the schema (its content
           # depends on the server version) and a few list-map keys go.
           ("config/crd/patches/config_removal.yaml", "config/crd/patches/remove_xkeys.yaml")),
    Source("networkchaos-v1alpha1.json", "chaos-mesh/chaos-mesh",
           "github.com/chaos-mesh/chaos-mesh", "v2.8.3",
           "config/crd/bases/chaos-mesh.org_networkchaos.yaml", "v1alpha1"),
)


def read_files(source: Source, gits: dict[str, Path]) -> dict[str, bytes] | None:
    """The CRD file and its patches at the source's tag, from a clone or the Go module
    cache; None if neither has them."""
    paths = (source.path, *source.patches)
    git = gits.get(source.repo)
    if git is not None:
        files = {p: _git_show(git, f"{source.tag}:{p}") for p in paths}
        if all(v is not None for v in files.values()):
            return {p: v for p, v in files.items() if v is not None}
    cache = Path(os.environ.get("GOMODCACHE") or Path.home() / "go" / "pkg" / "mod")
    root = cache / f"{source.module}@{source.tag}"
    if all((root / p).is_file() for p in paths):
        return {p: (root / p).read_bytes() for p in paths}
    return None


def _git_show(git: Path, ref: str) -> bytes | None:
    out = subprocess.run(["git", "--git-dir", str(_git_dir(git)), "show", ref],
                         capture_output=True, check=False)
    return out.stdout if out.returncode == 0 else None


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def _apply(crd: dict[str, Any], patch: list[dict[str, Any]], name: str) -> None:
    """RFC 6902 `remove` operations, the only kind the operators' CRD patches use."""
    for op in patch:
        if op.get("op") != "remove":
            raise SystemExit(f"error: {name}: op {op.get('op')!r} not supported (only remove)")
        *parents, last = [p.replace("~1", "/").replace("~0", "~")
                          for p in str(op["path"]).split("/")[1:]]
        at: Any = crd
        for p in parents:
            at = at[int(p)] if isinstance(at, list) else at[p]
        del at[last]


def extract(source: Source, files: dict[str, bytes]) -> dict[str, Any]:
    """The schema document written for one source: provenance, then the openAPIV3Schema of
    the served version as the operator installs it (its patches applied)."""
    text = files[source.path]
    crd = yaml.safe_load(text)
    for name in source.patches:
        _apply(crd, yaml.safe_load(files[name]), name)
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    schema = versions[source.version]["schema"]["openAPIV3Schema"]
    return {
        "x-casslab-source": {
            "repository": f"https://github.com/{source.repo}",
            "module": source.module,
            "tag": source.tag,
            "file": source.path,
            "sha256": hashlib.sha256(text).hexdigest(),
            "patches": {p: hashlib.sha256(files[p]).hexdigest() for p in source.patches},
            "group": crd["spec"]["group"],
            "kind": crd["spec"]["names"]["kind"],
            "version": source.version,
            "generated_by": "scripts/update_crd_schemas.py",
        },
        **schema,
    }


def dumps(doc: dict[str, Any]) -> str:
    # One key per line would be ~1 MB for cass-operator's pod template; compact keeps the
    # diff reviewable per field path while halving the size.
    return json.dumps(doc, sort_keys=True, indent=1) + "\n"


def _parse_gits(values: list[str]) -> dict[str, Path]:
    gits: dict[str, Path] = {}
    for value in values:
        repo, sep, path = value.partition("=")
        if not sep or repo not in {s.repo for s in SOURCES}:
            raise SystemExit(f"error: --git {value!r}: expected OWNER/NAME=GITDIR with OWNER/NAME"
                             f" one of {', '.join(s.repo for s in SOURCES)}")
        gits[repo] = Path(path)
    return gits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", action="append", default=[], metavar="OWNER/NAME=GITDIR")
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed schemas instead of writing them")
    args = parser.parse_args(argv)
    gits = _parse_gits(args.git)
    status = 0
    for source in SOURCES:
        files = read_files(source, gits)
        if files is None:
            print(f"error: {source.repo} {source.tag}:{source.path} not found (give "
                  f"--git {source.repo}=GITDIR, a clone with tag {source.tag})", file=sys.stderr)
            return 1
        out = dumps(extract(source, files))
        target = SCHEMAS / source.schema_file
        if args.check:
            if not target.is_file() or target.read_text() != out:
                print(f"{target.name}: differs from {source.repo} {source.tag}", file=sys.stderr)
                status = 1
        else:
            target.write_text(out)
            print(f"{target.name}: {source.repo} {source.tag} {source.path}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
