"""A campaign cell, typed: its levels read once, by the registry, into what they set.

The plan and the results database keep a cell as its levels by factor name (`params`,
the stored form); everything that acts on a cell (the runner, `casslab k8s render`, the
spec's checks) takes a `Cell` built from them by `cell_of` (or `CampaignSpec.cell`), and
reads lab options, link conditions, casslab-load options, table options and the tuner
from its fields, never from the factor names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from casslab.experiment import profilefactors
from casslab.experiment.factors import registry
from casslab.experiment.factors.network import NetLevels, wanted
from casslab.experiment.levels import is_relative
from casslab.experiment.tableopts import Target
from casslab.load.options import LoadOptions, canonical, family_of, from_mapping
from casslab.net.spec import NetSpec


@dataclass(frozen=True)
class Defaults:
    """What the spec sets outside its factors: each factor's level replaces one of these
    (`lab:` and `workload:`)."""

    nodes: int
    profile: str
    runtime: str
    overrides: Mapping[str, Any]
    node_profiles: Mapping[str, str]
    network: Any  # lab.network as the spec gives it
    workload: str
    records: int
    options: Mapping[str, Any]  # workload.options


@dataclass(frozen=True)
class LabSetup:
    """What a lab is built with (a change of any of it is a rebuild, but `fields` that
    are live profile fields, see Cell.limits). fields: profile fields the cell's factors
    set; overrides: cassandra.yaml, lab.overrides then the cell's `set.*` levels;
    node_profiles: the nodes of `lab.node_profiles` this lab has."""

    nodes: int
    profile: str
    runtime: str
    fields: Mapping[str, float | int]
    overrides: Mapping[str, Any]
    node_profiles: Mapping[str, str]


@dataclass(frozen=True)
class Cell:
    """One cell of a campaign. params: its levels by factor name (the stored form, and
    its key); limits: the profile fields a running lab takes live; net: link conditions,
    parsed once here (None: no emulation); load: casslab-load's flags -> values
    (records, workload.options, then the factors; levels relative to a peak are left
    out until resolved); compaction: the level of factor compaction (None: not varied);
    tables: (target, level) of the table factors; relative: levels relative to a peak,
    by factor."""

    params: Mapping[str, Any]
    lab: LabSetup
    limits: Mapping[str, float | int]
    net: NetSpec | None
    workload: str
    load: Mapping[str, Any]
    compaction: str | None
    tables: tuple[tuple[Target, Any], ...]
    tuner: str
    relative: Mapping[str, str]
    defaults: Defaults = field(repr=False)

    def load_options(self, where: str = "workload.options") -> LoadOptions:
        """The typed casslab-load options; raises OptionError naming a bad one."""
        return from_mapping(self.workload, dict(self.load), where)

    def with_levels(self, levels: Mapping[str, Any]) -> Cell:
        """The cell with some levels replaced (a relative level resolved to a number)."""
        return cell_of({**self.params, **levels}, self.defaults)


def _net_spec(mapping: dict[str, Any] | None) -> NetSpec | None:
    """The cell's link conditions parsed (NetSpecError names what is wrong)."""
    return None if mapping is None else NetSpec.from_mapping(mapping, "network")


def net_text(spec: NetSpec | None) -> str:
    """One line of a cell's link conditions, for progress output."""
    if spec is None:
        return "no emulation"
    return ", ".join(f"{k}={v}" for k, v in asdict(spec).items() if v not in (None, {}, ()))


def cell_of(params: Mapping[str, Any], defaults: Defaults) -> Cell:
    """The typed cell of levels `params` (factor name -> level, as the plan has them)."""
    d = registry.draft(params)
    nodes = int(d.lab.get(registry.NODES, defaults.nodes))
    workload = d.workload or defaults.workload
    return Cell(
        params=dict(params),
        lab=LabSetup(nodes=nodes, profile=str(d.lab.get(registry.PROFILE, defaults.profile)),
                     runtime=str(d.lab.get(registry.RUNTIME, defaults.runtime)),
                     fields=dict(d.fields), overrides={**defaults.overrides, **d.overrides},
                     node_profiles=profilefactors.cell_node_profiles(
                         dict(defaults.node_profiles), nodes)),
        limits=profilefactors.live_fields(d.fields),
        net=_net_spec(wanted(defaults.network, NetLevels(d.network, d.scales,
                                                         tuple(d.scoped)), nodes)),
        workload=workload,
        load=load_flags(workload, defaults.records, defaults.options, params),
        compaction=d.compaction, tables=tuple(d.tables), tuner=d.tuner,
        relative={k: str(v) for k, v in params.items() if is_relative(v)},
        defaults=defaults)


def load_flags(workload: str, records: int, options: Mapping[str, Any],
               params: Mapping[str, Any]) -> dict[str, Any]:
    """{flag: value} of a cell: records, workload.options, then the factors' levels.

    Levels relative to a peak are left out (the search resolves them first).
    """
    opts: dict[str, Any] = {} if family_of(workload) == "iot" else {"records": records}
    opts |= {canonical(str(k)): v for k, v in options.items()}
    for name, value in params.items():
        if is_relative(value):
            continue
        for flag in registry.factor_flags(name, workload):
            opts[flag] = value
    return opts


def load_options(workload: str, records: int, options: Mapping[str, Any],
                 params: Mapping[str, Any], where: str = "workload.options") -> LoadOptions:
    """The typed options of levels `params` alone (the spec's checks of single levels and
    of combinations); raises OptionError naming a bad one."""
    return from_mapping(workload, load_flags(workload, records, options, params), where)
