"""Checks across sections, and into casslab-load's and casslab.net's own rules: what no
single field can be checked for alone."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Any

from casslab.core.specio import Path_, V
from casslab.experiment import tableopts
from casslab.experiment.factors import registry
from casslab.experiment.factors.cell import cell_of, load_options
from casslab.experiment.factors.registry import factor_flags
from casslab.experiment.spec.model import (
    Factor,
    LabSpec,
    SearchSpec,
    WorkloadSpec,
    cell_defaults,
)
from casslab.load.options import OptionError, canonical, family_of
from casslab.net.errors import NetSpecError

MAX_OPTION_CELLS = 10_000  # combinations of option levels checked together at validate


def cross_checks(v: V, lab: LabSpec, factors: list[Factor], search: SearchSpec | None) -> None:
    names = [f.name for f in factors]
    node_levels = _node_levels(lab, factors)
    for node in lab.node_profiles:
        if int(node.removeprefix("node")) > max(node_levels):
            raise v.doc.error(("lab", "node_profiles", node), f"{node!r} is not a node of the "
                              f"lab (valid: node1 ... node{max(node_levels)})")
    for i, f in enumerate(factors):
        if lab.backend == "hosts" and registry.fixed_by_inventory(f.name):
            raise v.doc.error(("factors", i, "name"), f"{f.name}: not a factor with backend "
                              "hosts (the inventory fixes the nodes, their profiles and "
                              "runtime; valid there: set.*, network, schema and workload "
                              "factors)")
        if f.name == registry.RF:
            for j, rf in enumerate(f.levels):
                if rf > min(node_levels):
                    raise v.doc.error(("factors", i, "levels", j), f"rf {rf} exceeds the "
                                      f"smallest node count {min(node_levels)}")
        if f.name in (registry.CL_READ, registry.CL_WRITE) and registry.CL in names:
            raise v.doc.error(("factors", i, "name"), f"{f.name} conflicts with factor cl "
                              "(which sets both)")
        if search and f.name == search.vary and not f.relative:
            raise v.doc.error(("factors", i, "name"), f"{f.name} is varied by `search:`; "
                              "as a factor its levels must be relative to the peak (e.g. "
                              "'100%', '66%')")
        if f.relative and search and f.name not in (registry.RATE, search.vary):
            raise v.doc.error(("factors", i, "name"), f"relative levels of {f.name} need "
                              f"`search.vary: {f.name}` (or a rate factor)")


def _node_levels(lab: LabSpec, factors: list[Factor]) -> tuple[Any, ...]:
    return next((f.levels for f in factors if f.name == registry.NODES), (lab.nodes,))


def _workloads(workload: WorkloadSpec, factors: list[Factor]) -> tuple[Any, ...]:
    return next((f.levels for f in factors if f.name == registry.WORKLOAD), (workload.name,))


def check_table_factors(v: V, workload: WorkloadSpec, factors: list[Factor]) -> None:
    names = [f.name for f in factors]
    wls = _workloads(workload, factors)
    problem = tableopts.check_factors(registry.table_targets(names),
                                      {str(w): family_of(str(w)) for w in wls},
                                      workload.prepare, [canonical(k) for k in workload.options],
                                      compaction_factor=registry.COMPACTION in names)
    if problem:
        raise v.doc.error(("factors", names.index(problem[0]), "name"),
                          f"{problem[0]} {problem[1]}")


def check_load_options(v: V, workload: WorkloadSpec, factors: list[Factor]) -> None:
    """workload.options and every level of a factor that sets casslab-load options, by
    casslab-load's rules; two factors may not set the same option."""
    for wl in _workloads(workload, factors):
        also = "" if wl == workload.name else f" (with workload {wl})"
        try:
            load_options(wl, workload.records, workload.options, {})
        except OptionError as exc:
            # The line of the option, or of workload.options for a rule between options.
            raise v.doc.error(("workload", "options", exc.key),
                              f"{exc.detail}{also}") from None
        if workload.load_options:
            try:
                load_options(wl, workload.records, workload.options, {}).for_load_phase(
                    workload.load_options)
            except OptionError as exc:
                raise v.doc.error(("workload", "load_options", exc.key),
                                  f"{exc.detail}{also}") from None
        owner: dict[str, str] = {}
        for i, f in enumerate(factors):
            for flag in factor_flags(f.name, wl):
                if flag in owner:
                    raise v.doc.error(("factors", i, "name"), f"{f.name} sets casslab-load "
                                      f"option {flag}, as does factor {owner[flag]}; keep one")
                owner[flag] = f.name
            if not factor_flags(f.name, wl):
                continue
            for j, level in enumerate(f.levels):
                try:
                    load_options(wl, workload.records, workload.options, {f.name: level})
                except OptionError as exc:
                    raise v.doc.error(("factors", i, "levels", j), f"(factor {f.name}) "
                                      f"{exc.key}: {exc.detail}{also}") from None
        _check_option_cells(v, workload, factors, wl, also)


def _check_option_cells(v: V, workload: WorkloadSpec, factors: list[Factor], wl: str,
                        also: str) -> None:
    """Rules between options (tls-cert needs tls-key, stages excludes ops) in every
    combination of the option factors' levels; beyond MAX_OPTION_CELLS combinations
    only the levels one by one were checked (a spec that large is checked in seconds
    anyway by its first trials)."""
    setting = [f for f in factors if factor_flags(f.name, wl)]
    if not setting or math.prod(len(f.levels) for f in setting) > MAX_OPTION_CELLS:
        return
    for levels in itertools.product(*(f.levels for f in setting)):
        params = {f.name: level for f, level in zip(setting, levels, strict=True)}
        try:
            load_options(wl, workload.records, workload.options, params)
        except OptionError as exc:
            cell = ", ".join(f"{k}={val}" for k, val in params.items())
            raise v.doc.error(("factors",), f"in the cell {cell}: {exc.key}: "
                              f"{exc.detail}{also}") from None


def check_network(v: V, lab: LabSpec, workload: WorkloadSpec, factors: list[Factor]) -> None:
    """Every network level by casslab.net's own rules, for every node count it meets (the
    network of a cell of that level and node count, as the runner would build it)."""
    node_levels = _node_levels(lab, factors)
    cases: list[tuple[Path_, dict[str, Any]]] = [(("lab", "network"), {})]
    cases += [(("factors", i, "levels", j), {f.name: level})
              for i, f in enumerate(factors) if f.kind == "network"
              for j, level in enumerate(f.levels)]
    for path, params in cases:
        for n in node_levels:
            try:
                wanted = cell_of(params, replace(cell_defaults(lab, workload), nodes=n)).net
                if wanted is not None:
                    wanted.resolve(n)
            except NetSpecError as exc:
                nodes = f" (with {n} node{'s' if n > 1 else ''})" if len(node_levels) > 1 else ""
                raise v.doc.error(path, f"{exc}{nodes}") from None

