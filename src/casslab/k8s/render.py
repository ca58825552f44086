"""Render a campaign cell to Kubernetes manifests, validate them, write them.

The library function a caller needs is `render(spec, options)` -> Manifests (plain dicts,
already validated) and `write(manifests, directory)` -> the files written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra.distribution import DEFAULT_VERSION
from casslab.experiment.spec import CampaignSpec
from casslab.k8s.cell import CellLab, pick_cell
from casslab.k8s.chaos import network_chaos
from casslab.k8s.datacenter import datacenter
from casslab.k8s.job import load_job, run_job
from casslab.k8s.names import Naming, check_namespace, dns_label
from casslab.k8s.validate import validate

# No registry publishes casslab-load: build the image from the repository (docs/scale-out.md)
# and give its name with --load-image.
DEFAULT_LOAD_IMAGE = "casslab/casslab-load:latest"
DEFAULT_NAMESPACE = "casslab"
DEFAULT_STORAGE_CLASS = "standard"
DEFAULT_STORAGE_SIZE = "10Gi"


@dataclass(frozen=True)
class RenderOptions:
    """Choices the spec does not make: where the objects go and which images run.

    cell: a cell key (`nodes=3,network=wifi`); None: the first cell of the plan.
    clients: load clients (K); None: the spec's `workload.clients`, else 1.
    server_image: cass-operator's server image; None lets it pick one for the version.
    """

    cell: str | None = None
    clients: int | None = None
    namespace: str = DEFAULT_NAMESPACE
    load_image: str = DEFAULT_LOAD_IMAGE
    server_image: str | None = None
    server_version: str = DEFAULT_VERSION
    storage_class: str = DEFAULT_STORAGE_CLASS
    storage_size: str = DEFAULT_STORAGE_SIZE
    racks: int = 1


@dataclass(frozen=True)
class Manifests:
    """The objects of one cell, each already validated."""

    campaign: str
    cell: CellLab
    datacenter: dict[str, Any]
    chaos: list[dict[str, Any]] = field(default_factory=list)
    prepare: dict[str, Any] | None = None
    run: dict[str, Any] = field(default_factory=dict)

    def files(self) -> dict[str, list[dict[str, Any]]]:
        """File name -> the objects it holds, in the order to apply them."""
        out = {"datacenter.yaml": [self.datacenter]}
        if self.chaos:
            out["network-chaos.yaml"] = self.chaos
        if self.prepare is not None:
            out["prepare-job.yaml"] = [self.prepare]
        out["load-job.yaml"] = [self.run]
        return out


def render(spec: CampaignSpec, options: RenderOptions | None = None) -> Manifests:
    """The manifests of one cell of `spec`, validated offline.

    Raises UsageError (an unknown cell, a part of the cell manifests cannot carry),
    ManifestError (`Kind/name: field: problem`, an object its schema refuses) or
    PrerequisiteError (the validators are not installed).
    """
    o = options or RenderOptions()
    cell = pick_cell(spec, o.cell, clients=o.clients)
    naming = Naming(cluster=dns_label(spec.name, "campaign name"),
                    namespace=check_namespace(o.namespace), racks=o.racks)
    m = Manifests(
        campaign=spec.name, cell=cell,
        datacenter=datacenter(cell, naming, server_version=o.server_version,
                              server_image=o.server_image, storage_class=o.storage_class,
                              storage_size=o.storage_size, campaign=spec.name),
        chaos=network_chaos(cell.links, cell.nodes, naming),
        prepare=(load_job(cell.workload, cell.load, naming, image=o.load_image)
                 if cell.load is not None else None),
        run=run_job(cell.workload, cell.run, cell.clients, naming, image=o.load_image))
    for objects in m.files().values():
        for obj in objects:
            validate(obj)
    return m


class _PlainDumper(yaml.SafeDumper):
    """Writes a dict used twice (the Job's labels) twice, not as an anchor and alias."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(objects: list[dict[str, Any]], header: str) -> str:
    """Objects as one YAML stream, `---` before each, after a comment header."""
    body = yaml.dump_all(objects, Dumper=_PlainDumper, sort_keys=False, explicit_start=True,
                         default_flow_style=False, width=100)
    return f"# {header}\n{body}"


def write(manifests: Manifests, directory: Path) -> list[Path]:
    """Write the manifests' files into `directory` (created); returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    header = (f"casslab k8s render: campaign {manifests.campaign}, cell {manifests.cell.key}"
              " (docs/scale-out.md, Kubernetes)")
    paths: list[Path] = []
    for name, objects in manifests.files().items():
        path = directory / name
        path.write_text(to_yaml(objects, header))
        paths.append(path)
    return paths
