"""The `factors:` block of a spec: each factor's name, kind, levels and labels, read
through the factor registry (casslab.experiment.factors), which declares every kind of
factor and the parser of its levels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casslab.core.specio import Path_, V, fmt_path
from casslab.experiment.factors import registry
from casslab.experiment.labels import parse_labels
from casslab.experiment.spec.model import Factor, LabSpec, SpecError

FACTOR_KEYS = ("name", "levels", "label", "labels")


def parse_factors(v: V, raw: Any, lab: LabSpec, has_search: bool,
                  base_dir: Path | None) -> list[Factor]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise v.doc.error(("factors",), "must be a list of {name, levels} (e.g. "
                          "`- {name: nodes, levels: [1, 3]}`)")
    out: list[Factor] = []
    for i, item in enumerate(raw):
        path: Path_ = ("factors", i)
        m = v.mapping(item, path, FACTOR_KEYS)
        if "name" not in m:
            raise v.doc.error((*path, "name"), f"is required (valid: {registry.FACTOR_DOC})")
        name = m["name"]
        kind = registry.factor_kind(name) if isinstance(name, str) else None
        if kind is None:
            raise v.doc.error((*path, "name"),
                              f"unknown factor {name!r} (valid: {registry.FACTOR_DOC})")
        problem = registry.name_problem(name)
        if problem:
            raise v.doc.error((*path, "name"), problem)
        if any(f.name == name for f in out):
            raise v.doc.error((*path, "name"), f"factor {name!r} is listed twice")
        levels = m.get("levels")
        if not isinstance(levels, list) or not levels:
            raise v.doc.error((*path, "levels"), "must be a non-empty list of levels")
        checked_l = []
        for j, lvl in enumerate(levels):
            lpath = (*path, "levels", j)
            try:
                checked_l.append(registry.parse_level(v, name, lvl, lpath, has_search,
                                                      base_dir))
            except SpecError as exc:  # say which factor the level belongs to
                where = fmt_path(lpath)
                raise SpecError(str(exc).replace(f" {where}: ", f" {where} (factor {name}): ",
                                                 1)) from None
        checked = tuple(checked_l)
        if len({repr(x) for x in checked}) != len(checked):
            raise v.doc.error((*path, "levels"), "has a level twice")
        label = str(m.get("label") or name)
        labels = parse_labels(v, m.get("labels"), (*path, "labels"), checked)
        out.append(Factor(name, kind, checked, label, labels))
    return out
