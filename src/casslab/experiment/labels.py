"""Short labels for factor levels: what axes, legends, facet titles and tables print.

A level may be a mapping (seed 002's `network` levels: link delays per group), which
printed whole is a line of JSON nobody can read on an axis. Each factor's levels get a
label, unique per factor:

  - declared: `labels:` beside `levels:` in the spec, a list in the levels' order
    (`labels: [a+0, a+10, a+20]`) or, for scalar levels, a mapping level -> label;
  - automatic: scalars print as themselves (2.0 -> "2"); mappings print only the keys
    whose values differ between the factor's levels ("edge=5/10/15" when the three
    links of group `edge` differ, "delay=10ms" for a `delay_ms` key), and so do strings
    written as a mapping literal (a table option's CQL map: "compaction_window_size=22").

The full level stays the key of a cell in the results database and in each figure's CSV.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any

from casslab.core import specio
from casslab.core.specio import Path_

MAX_LABEL = 40


def scalar_label(value: Any) -> str:
    """A scalar level as the report prints it (2.0 -> "2"); a mapping or list as
    compact JSON with sorted keys (the cell key's form)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _leaves(value: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if isinstance(value, dict):
        out: dict[tuple[str, ...], Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, (*prefix, str(k))))
        return out
    return {prefix: value}


def _value(key: str, v: Any) -> str:
    text = "-" if v is None else scalar_label(v)
    return text + "ms" if key.endswith("_ms") and v is not None else text


def _name(key: str) -> str:
    return key[:-3] if key.endswith("_ms") else key


def _short_names(paths: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Each path by its shortest unique tail ("edge" for ("groups", "edge"))."""
    out: dict[tuple[str, ...], str] = {}
    for p in paths:
        for n in range(1, len(p) + 1):
            tail = p[-n:]
            if n == len(p) or sum(1 for q in paths if q[-n:] == tail) == 1:
                out[p] = ".".join((*tail[:-1], _name(tail[-1]))) if tail else ""
                break
    return out


def _mapping_labels(levels: Sequence[Mapping[str, Any]]) -> list[str]:
    leaves = [_leaves(dict(lv)) for lv in levels]
    paths = list(dict.fromkeys(p for lf in leaves for p in lf))
    varying = [p for p in paths if len({scalar_label(lf.get(p)) for lf in leaves}) > 1]
    shown = varying or paths  # one level: say what it is
    # Leaves of one parent that vary together print as one: edge=5/10/15.
    parents: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for p in shown:
        parents.setdefault(p[:-1] if len(p) > 1 else p, []).append(p)
    keys = [k if len(ps) > 1 or len(ps[0]) == len(k) else ps[0] for k, ps in parents.items()]
    names = _short_names(keys)
    out = []
    for lf in leaves:
        parts = []
        for k, ps in zip(keys, parents.values(), strict=True):
            vals = "/".join(_value(p[-1], lf.get(p)) for p in ps)
            parts.append(f"{names[k]}={vals}" if names[k] else vals)
        out.append(", ".join(parts))
    return out


def _as_mapping(level: Any) -> Any:
    """A string level written as a mapping literal (a table option's CQL map, such as
    "{'class': 'TimeWindowCompactionStrategy', ...}") as that mapping, so its label can
    name only what varies; any other level as it is."""
    if isinstance(level, str) and level.startswith("{") and level.endswith("}"):
        try:
            parsed = ast.literal_eval(level)
        except (ValueError, SyntaxError):
            return level
        return parsed if isinstance(parsed, dict) else level
    return level


def auto_labels(levels: Sequence[Any]) -> list[str]:
    """A short label per level, unique within the factor (see the module's doc)."""
    mappings = [_as_mapping(lv) for lv in levels]
    if mappings and all(isinstance(lv, dict) for lv in mappings):
        out = _mapping_labels(mappings)
    else:
        out = [scalar_label(lv) for lv in levels]
    if len(set(out)) < len(out):  # the short forms collide: the full ones do not
        out = [scalar_label(lv) for lv in levels]
    return out


def parse_labels(v: specio.V, raw: Any, path: Path_, levels: Sequence[Any]) -> tuple[str, ...]:
    """A factor's declared `labels` (a list in level order, or a mapping scalar level ->
    label), completed with the automatic ones; raises naming the field and what is valid."""
    auto = auto_labels(levels)
    if raw is None:
        return tuple(auto)
    out = list(auto)
    if isinstance(raw, list):
        if len(raw) != len(levels):
            raise v.doc.error(path, f"has {len(raw)} labels for {len(levels)} levels (valid: "
                              "one label per level, in the levels' order)")
        for i, lab in enumerate(raw):
            out[i] = _one(v, lab, (*path, i))
    elif isinstance(raw, dict):
        names = [scalar_label(lv) for lv in levels]
        for key, lab in raw.items():
            k = scalar_label(key)
            if k not in names or isinstance(levels[names.index(k)], dict | list):
                valid = ", ".join(n for n, lv in zip(names, levels, strict=True)
                                  if not isinstance(lv, dict | list))
                raise v.doc.error((*path, str(key)), f"{k} is not a level of this "
                                  f"factor (valid: {valid or 'none: use a list of labels'})")
            out[names.index(k)] = _one(v, lab, (*path, str(key)))
    else:
        raise v.doc.error(path, "must be a list of labels in the levels' order or a mapping "
                          "level -> label")
    dup = next((lab for i, lab in enumerate(out) if lab in out[:i]), None)
    if dup is not None:
        raise v.doc.error(path, f"label {dup!r} names two levels (valid: a different label "
                          "per level)")
    return tuple(out)


def _one(v: specio.V, raw: Any, path: Path_) -> str:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        raw = scalar_label(raw)
    text = v.string(raw, path).strip()
    if not text or len(text) > MAX_LABEL:
        raise v.doc.error(path, f"{text!r} is not a label (valid: 1-{MAX_LABEL} characters)")
    return text


def read_labels(doc: specio.Doc, factors: Sequence[Mapping[str, Any]]
                ) -> dict[str, tuple[str, ...]]:
    """Factor name -> its levels' labels, from spec `doc` (only each factor's `levels`
    and `labels` are read: the report reads a stored spec whose files may not be here).
    `factors`: the campaign's, each with `name` and `levels`; a label is found by its
    level (a spec stored before its scale was applied labels the levels the scale kept),
    and a level the declared labels do not name (or labels that do not parse) gets the
    automatic ones. Never raises on labels: the spec was validated when the campaign ran."""
    root = doc.root if isinstance(doc.root, dict) else {}
    raw = root.get("factors")
    declared = {str(item.get("name")): (i, item)
                for i, item in enumerate(raw if isinstance(raw, list) else [])
                if isinstance(item, dict)}
    v = specio.V(doc)
    out = {}
    for f in factors:
        levels = list(f["levels"])
        out[f["name"]] = tuple(auto_labels(levels))
        i, item = declared.get(f["name"], (0, {}))
        spec_levels = item.get("levels")
        if item.get("labels") is None or not isinstance(spec_levels, list):
            continue
        try:
            labels = parse_labels(v, item["labels"], ("factors", i, "labels"), spec_levels)
        except specio.SpecError:
            continue
        by_level = {scalar_label(lv): lab for lv, lab in zip(spec_levels, labels, strict=True)}
        if all(scalar_label(lv) in by_level for lv in levels):
            out[f["name"]] = tuple(by_level[scalar_label(lv)] for lv in levels)
    return out


def level_of(levels: Sequence[Any], labels: Sequence[str], value: Any) -> str:
    """The label of `value` among `levels` (its own form when it is not one of them)."""
    key = scalar_label(value)
    for lv, lab in zip(levels, labels, strict=False):
        if scalar_label(lv) == key:
            return lab
    return key
