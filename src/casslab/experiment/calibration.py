"""`casslab calibrate`: a spec's one cell as an A/A design, to measure the lab's noise.

The A/A spec is the given spec with every factor held at one level (its first, or the
level `--cell` names), a factor `copy` with levels A and B (identical copies: nothing is
applied for it), `design.order: interleaved` for `rounds` rounds (each round one trial
of A and one of B, ABBA, so drift hits both alike), its reference, figures and sizes
dropped (they name the levels held here). Its results directory is an ordinary one:
`experiment validate / plan --pilot DIR` read its within-cell spread.
"""

from __future__ import annotations

from typing import Any

import yaml

from casslab.experiment.spec import COPY_FACTOR, SpecError

COPIES = ("A", "B")


def parse_cell(text: str) -> dict[str, str]:
    """`--cell nodes=3,network=wifi` as {factor: level text}."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, level = part.partition("=")
        if not eq or not name.strip() or not level.strip():
            raise SpecError(f"--cell: {part!r} is not factor=level (e.g. nodes=3)")
        out[name.strip()] = level.strip()
    return out


def _pick(factor: dict[str, Any], wanted: str | None) -> Any:
    levels = factor.get("levels")
    if not isinstance(levels, list) or not levels:
        raise SpecError(f"factor {factor.get('name')!r}: no levels to hold")
    if wanted is None:
        return levels[0]
    for level in levels:
        if str(level) == wanted or yaml.safe_dump(level).strip() == wanted:
            return level
    raise SpecError(f"--cell: {wanted!r} is not a level of factor {factor.get('name')} "
                    f"(valid: {', '.join(str(x) for x in levels)})")


def aa_spec(text: str, rounds: int, cell: dict[str, str] | None = None) -> str:
    """The A/A spec of spec `text` (see the module docstring), as YAML text."""
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict):
        raise SpecError("the spec is not a mapping")
    wanted = dict(cell or {})
    factors = []
    for f in doc.get("factors") or []:
        if not isinstance(f, dict) or f.get("name") == COPY_FACTOR:
            continue
        held = _pick(f, wanted.pop(str(f.get("name")), None))
        factors.append({"name": f["name"], "levels": [held]})
    if wanted:
        raise SpecError(f"--cell: {', '.join(wanted)} is not a factor of the spec")
    factors.append({"name": COPY_FACTOR, "levels": list(COPIES)})
    design = {k: v for k, v in (doc.get("design") or {}).items()
              if k in ("warmup_trials", "lab_warmup_trials", "seed", "reset", "guard")}
    design |= {"order": "interleaved", "trials": rounds}
    for key in ("reference", "report", "scales"):
        doc.pop(key, None)
    doc["name"] = f"{doc.get('name', 'spec')}-calibrate"[:64]
    doc["factors"] = factors
    doc["design"] = design
    return yaml.safe_dump(doc, sort_keys=False)
