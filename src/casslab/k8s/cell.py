"""The lab and load of one campaign cell, as the runner would build them.

Read from the same typed cell the campaign runner runs (`CampaignSpec.cell`, built by
casslab.experiment.factors), so a rendered cell is the cell a local campaign runs, not
a second reading of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from casslab.core.errors import UsageError
from casslab.experiment.design import cell_key, cells
from casslab.experiment.factors.cell import Cell
from casslab.experiment.loadphase import load_phase_options
from casslab.experiment.spec import CampaignSpec
from casslab.hardware import HardwareProfile, resolve_profile, with_fields
from casslab.load.options import LoadOptions, family_of
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import Link, NetSpec


@dataclass(frozen=True)
class CellLab:
    """What one cell asks of a cluster: nodes, their profile, cassandra.yaml overrides,
    link conditions, and the measured run of the workload.

    links: every directed link with conditions (clean links left out).
    run: casslab-load options of the measured run (phase run, the spec's stop and seed).
    load: options of the load phase (None when the spec does not prepare data).
    clients: load clients (K of `--client I/K`).
    """

    key: str
    nodes: int
    profile: HardwareProfile
    node_profiles: dict[str, str]
    overrides: dict[str, Any]
    links: dict[Link, LinkConditions]
    workload: str
    run: LoadOptions
    load: LoadOptions | None
    clients: int = 1
    notes: tuple[str, ...] = field(default=())


def pick_cell(spec: CampaignSpec, key: str | None = None, *,
              clients: int | None = None) -> CellLab:
    """The lab of cell `key` of the spec's design (None: the first cell of the plan).

    clients: load clients; None takes the spec's `workload.clients` where it has one,
    else 1. Raises UsageError naming an unknown cell (with the valid keys) or a part of
    the cell Kubernetes manifests cannot carry.
    """
    all_cells = cells(spec.factors)
    if key is None:
        params = all_cells[0].params
    else:
        found = [c for c in all_cells if c.key == key]
        if not found:
            shown = ", ".join(c.key for c in all_cells[:8])
            more = f" ... ({len(all_cells)} cells)" if len(all_cells) > 8 else ""
            raise UsageError(f"--cell {key!r} is not a cell of {spec.name} (valid: "
                             f"{shown}{more})")
        params = found[0].params
    return _lab(spec, spec.cell(params), _clients(spec, clients))


def _clients(spec: CampaignSpec, clients: int | None) -> int:
    k = clients if clients is not None else int(getattr(spec.workload, "clients", 1) or 1)
    if k < 1:
        raise UsageError(f"--clients {k}: must be at least 1")
    return k


def _lab(spec: CampaignSpec, cell: Cell, clients: int) -> CellLab:
    lab = cell.lab
    profile = with_fields(resolve_profile(lab.profile), dict(lab.fields))
    workload = cell.workload
    if family_of(workload) == "user":
        raise UsageError(f"workload {workload}: a cassandra-stress user profile is a file "
                         "on this machine; Kubernetes manifests take the built-in workloads "
                         "only")
    opts = cell.load_options()
    _no_files(opts)
    run = replace(opts, phase="run", seed=spec.design.seed, ops=spec.stop.ops,
                  duration_s=spec.stop.duration_s or None)
    load = load_phase_options(spec, cell) if spec.workload.prepare else None
    if load is not None:
        # what is left after the run's check came from workload.load_options
        _no_files(load, "workload.load_options")
    notes = (f"runtime {lab.runtime}: every node is a pod",) if lab.runtime != "process" else ()
    return CellLab(key=cell_key(dict(cell.params)), nodes=lab.nodes, profile=profile,
                   node_profiles=dict(lab.node_profiles), overrides=dict(lab.overrides),
                   links=_links(cell.net, lab.nodes), workload=workload, run=run, load=load,
                   clients=clients, notes=notes)


def _no_files(opts: LoadOptions, where: str = "workload.options") -> None:
    """Options naming a file on this machine (TLS keys, stages, HDR log) have no meaning
    in a pod: refuse them rather than render a Job that fails on the cluster (`where`:
    the spec field they came from)."""
    for f in fields(opts):
        if isinstance(getattr(opts, f.name), Path):
            raise UsageError(f"{where}.{f.metadata['flag']}: a file on this machine; "
                             "Kubernetes manifests cannot carry it (leave it out, or mount "
                             "it into the Job yourself)")


def _links(spec: NetSpec | None, nodes: int) -> dict[Link, LinkConditions]:
    if spec is None:
        return {}
    table = spec.resolve(nodes)
    return {link: cond for link, cond in table.items() if not cond.is_clean}
