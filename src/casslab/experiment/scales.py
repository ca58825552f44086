"""Named sizes of one spec: `scales:` overrides, and the built-in `smoke` size.

A reproduction is written once and run at several sizes: the size that finishes on this
machine (the spec as written), the study's own size (`--scale paper`) for a bigger
machine or remote hosts, and a smoke size that `make test` runs so no spec can rot.
Keeping the sizes in one file means the paper's size cannot drift from the one that is
run here: only the values the `scales:` block names differ.

    scales:
      paper:
        design.trials: 21
        design.warmup_trials: 9
        stop.ops: 10000
        factors.nodes.levels: [1, 2, 3, 4, 5, 6]

A key is a dotted path into the spec; a factor is addressed by its `name`. The override
replaces the value at that path (a mapping or list is replaced whole), and an error in
an overridden value points at the line of the override.

`smoke` (unless the spec defines its own) keeps at most 2 cells (two levels of the first
factor, then the first level of the rest, in the spec's order), one trial per cell, no
warm-ups, at most 200 operations or 5 s per trial, at most 1,000 records and at most two
search steps: a few cells of one short trial each. A spec whose important levels come
later writes its own `smoke:` scale.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from casslab.core.errors import UsageError
from casslab.core.specio import Doc, Path_, fmt_path
from casslab.experiment.labels import scalar_label

SMOKE = "smoke"
SMOKE_CELLS = 2
SMOKE_OPS = 200
SMOKE_DURATION_S = 5.0
SMOKE_RECORDS = 1000
SMOKE_SEARCH_STEPS = 2
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


def spec_digest(text: str, scale: str | None) -> str:
    """The digest a campaign stores for its spec (CampaignSpec.digest): the spec's text
    and its scale, so a results directory belongs to one spec at one size."""
    size = f"\0scale={scale}" if scale else ""
    return hashlib.sha256((text + size).encode()).hexdigest()[:16]


def scale_of(text: str, digest: str, doc: Doc) -> str | None:
    """The scale a stored spec ran at, recovered from its stored digest (None: as
    written, or no scale gives that digest)."""
    return next((name for name in names(doc) if spec_digest(text, name) == digest), None)


def stored_doc(text: str, digest: str, source: str = "stored spec") -> Doc:
    """A campaign's stored spec as it ran: at the scale its stored digest names (as
    written when none does), so a `paper` size's own design or reference is read, not
    the spec's as written. Raises the Doc's error for text that is not YAML."""
    doc = Doc(text, source)
    scale = scale_of(text, digest, doc) if digest else None
    if scale is not None:
        apply(doc, scale)
    return doc


def stored_root(text: str, digest: str) -> dict[str, Any]:
    """stored_doc's top mapping; {} for text that is not a spec mapping."""
    try:
        root = stored_doc(text, digest).root
    except UsageError:
        return {}
    return root if isinstance(root, dict) else {}


def names(doc: Doc) -> list[str]:
    """The scales a spec offers: its own, and `smoke`."""
    raw = doc.root.get("scales") if isinstance(doc.root, dict) else None
    own = list(raw) if isinstance(raw, dict) else []
    return [*own, *([SMOKE] if SMOKE not in own else [])]


def apply(doc: Doc, scale: str | None) -> None:
    """Rewrite `doc.root` (and its lines) to the named scale, and drop `scales:`.

    Raises the doc's error type naming the scale or the path when either is unknown.
    """
    if not isinstance(doc.root, dict):
        return
    raw = doc.root.pop("scales", None)
    if raw is not None and not isinstance(raw, dict):
        raise doc.error(("scales",), "must be a mapping of scale names to overrides "
                        "(e.g. {paper: {design.trials: 21}})")
    own: dict[str, Any] = raw or {}
    for name in own:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise doc.error(("scales", str(name)), "a scale name is lower-case letters, "
                            "digits and '-' (1-32), e.g. paper")
    if scale is None:
        return
    if scale in own:
        _override(doc, scale, own[scale])
    elif scale == SMOKE:
        _smoke(doc.root)
    else:
        valid = ", ".join([*own, *([SMOKE] if SMOKE not in own else [])])
        raise doc.error(("scales",), f"no scale {scale!r} in this spec (valid: {valid})")


def _override(doc: Doc, scale: str, overrides: Any) -> None:
    where: Path_ = ("scales", scale)
    if not isinstance(overrides, dict) or not overrides:
        raise doc.error(where, "must be a mapping of dotted spec paths to values "
                        "(e.g. {design.trials: 21, stop.ops: 10000})")
    for key, value in overrides.items():
        target = _resolve(doc, str(key), (*where, key))
        factor = _levels_of(doc.root, target)
        old = list(factor["levels"]) if factor is not None else None
        _set(doc.root, target, value)
        _move_lines(doc, (*where, key), target)
        if factor is not None and old is not None:
            follow_labels(factor, old)


def _resolve(doc: Doc, dotted: str, where: Path_) -> Path_:
    """('factors', 2, 'levels') from 'factors.nodes.levels' (factors named, not numbered;
    a dotted factor name such as 'factors.profile.memory_mib.levels' is matched whole)."""
    parts = dotted.split(".")
    if not all(parts):
        raise doc.error(where, f"{dotted!r} is not a dotted path (e.g. design.trials)")
    if parts[0] == "scales":
        raise doc.error(where, "a scale cannot override `scales`")
    out: list[str | int] = []
    node: Any = doc.root
    i = 0
    while i < len(parts):
        part = parts[i]
        if isinstance(node, list):
            # A factor's own name may hold dots (profile.memory_mib, network.scale.edge):
            # the longest run of parts that names an item wins.
            index = None
            for j in range(len(parts), i, -1):
                index = _factor_index(node, ".".join(parts[i:j]))
                if index is not None:
                    part, i = ".".join(parts[i:j]), j - 1
                    break
            if index is None:
                named = [str(f.get("name")) for f in node if isinstance(f, dict)]
                raise doc.error(where, f"{fmt_path(tuple(out))} has no item named {part!r} "
                                f"(valid: {', '.join(named) or 'none'})")
            out.append(index)
            node = node[index]
        else:
            out.append(part)
            node = node.get(part) if isinstance(node, dict) else None
        i += 1
    return tuple(out)


def _factor_index(items: list[Any], name: str) -> int | None:
    for i, item in enumerate(items):
        if isinstance(item, dict) and str(item.get("name")) == name:
            return i
    return None


def _set(root: dict[str, Any], path: Path_, value: Any) -> None:
    node: Any = root
    for step in path[:-1]:
        if isinstance(step, str) and (not isinstance(node.get(step), dict | list)):
            node[step] = {}
        node = node[step]
    node[path[-1]] = value


def _levels_of(root: dict[str, Any], path: Path_) -> dict[str, Any] | None:
    """The factor whose `levels` `path` names, when it has them as a list."""
    if len(path) != 3 or path[0] != "factors" or path[2] != "levels":
        return None
    factors = root.get("factors")
    f = factors[path[1]] if isinstance(factors, list) and isinstance(path[1], int) else None
    return f if isinstance(f, dict) and isinstance(f.get("levels"), list) else None


def follow_labels(factor: dict[str, Any], old_levels: list[Any]) -> None:
    """A factor's list of `labels` after a scale changed its levels: each kept level
    keeps its label; with a level the labels did not name, the automatic ones."""
    labels = factor.get("labels")
    if not isinstance(labels, list) or len(labels) != len(old_levels):
        return
    keys = [scalar_label(lv) for lv in old_levels]
    new = [scalar_label(lv) for lv in factor.get("levels") or []]
    if all(k in keys for k in new):
        factor["labels"] = [labels[keys.index(k)] for k in new]
    else:
        del factor["labels"]


def _move_lines(doc: Doc, source: Path_, target: Path_) -> None:
    """Errors in the overridden value point at the override's lines."""
    n = len(source)
    for path in [p for p in doc.lines if p[:len(target)] == target]:
        del doc.lines[path]
    for path, line in list(doc.lines.items()):
        if path[:n] == source:
            doc.lines[(*target, *path[n:])] = line


def _smoke(root: dict[str, Any]) -> None:
    """A few cells of one short trial each (see the module docstring)."""
    design = root.get("design")
    if design is None:
        design = root["design"] = {}
    if isinstance(design, dict):
        design["trials"] = 1
        # One trial decides nothing: a smoke run of an `until: verdicts` design runs
        # its one round and stops (no budget, no sequential decision, no bound to reach).
        for key in ("until", "budget", "detect"):
            design.pop(key, None)
        design["warmup_trials"] = 0
        design["lab_warmup_trials"] = 0
        design.pop("warmup_rounds", None)
    factors = root.get("factors")
    if isinstance(factors, list):
        cells = 1
        for f in factors:
            if isinstance(f, dict) and isinstance(f.get("levels"), list):
                keep = 2 if cells * 2 <= SMOKE_CELLS else 1
                old = list(f["levels"])
                f["levels"] = f["levels"][:keep]
                follow_labels(f, old)
                cells *= len(f["levels"])
    stop = root.get("stop")
    if stop is None:
        root["stop"] = {"ops": SMOKE_OPS}
    elif isinstance(stop, dict):
        _cap(stop, "ops", SMOKE_OPS)
        _cap(stop, "duration_s", SMOKE_DURATION_S)
    workload = root.get("workload")
    if isinstance(workload, dict):
        _cap(workload, "records", SMOKE_RECORDS)
    search = root.get("search")
    if isinstance(search, dict):
        _cap(search, "max_steps", SMOKE_SEARCH_STEPS)
        _cap(search, "trials", 1)
        if "ops" not in search and "duration_s" not in search:
            search["ops"] = SMOKE_OPS
        _cap(search, "ops", SMOKE_OPS)
        _cap(search, "duration_s", SMOKE_DURATION_S)


def _cap(m: dict[str, Any], key: str, most: float) -> None:
    """Lower m[key] to `most`; a value of the wrong type is left for the validator."""
    v = m.get(key)
    if isinstance(v, int | float) and not isinstance(v, bool) and v > most:
        m[key] = int(most) if isinstance(v, int) else float(most)
