"""Kubernetes manifests of one campaign cell: cass-operator, Chaos Mesh and a load Job.

Pure rendering: a campaign spec in, Kubernetes objects (plain dicts) out, checked
offline against the Kubernetes schemas and the operators' own CRD schemas (generated
from their Go modules, `make k8s-schemas`; see crd.py). Nothing here talks to a cluster
(docs/scale-out.md, section Kubernetes).
"""

from casslab.k8s.cell import CellLab, pick_cell
from casslab.k8s.render import Manifests, RenderOptions, render, write
from casslab.k8s.validate import ManifestError, validate

__all__ = ["CellLab", "ManifestError", "Manifests", "RenderOptions", "pick_cell", "render",
           "validate", "write"]
