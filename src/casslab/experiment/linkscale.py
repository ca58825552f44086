"""Coupled link scaling: a base link table of named groups, and a factor that scales one
group's links together by a percentage (seed 002 raises its edge delays a, b, c = 5, 10,
15 ms together in 10 % steps, and its endpoint delays x, y, z likewise).

Spec notation:

    lab:
      network:
        groups:                       # group -> link -> one-way delay in ms, or fields
          edge: {node1-node2: 5, node2-node3: 10, node1-node3: 15}
          endpoint: {client-node1: {delay_ms: 5, jitter_ms: 1}, client-node2: 10}
    factors:
      - {name: network.scale.edge, levels: [0, 10, 20, 30, 40, 50]}   # percent
      - {name: network.scale, levels: [endpoint+50, edge+50]}          # which groups

A level L sets each link of the group to base x (1 + L / 100) for the time fields
(delay_ms, jitter_ms); loss and rate are kept as the table gives them, since a longer
path does not lose or slow more per packet in the studies' model. Links of groups no
factor scales keep their base values.

`network.scale` (no group) scales several groups in one level, `<group>+<percent>`
terms joined by commas (`endpoint+50`, `edge+50,endpoint-10`; `base` for none): one
factor whose two levels differ in which group is raised. Seed 002's "the endpoint slope
is steeper than the edge slope" is then one contrast of two cells, endpoint +50 % against
edge +50 %: both sweeps share the +0 % cell, so the difference of the two end-to-end
slopes is the difference of those two cells over 50 %, with no base cell to measure.
"""

from __future__ import annotations

import re
from typing import Any

from casslab.core.specio import Path_
from casslab.core.specio import V as _V
from casslab.net.errors import NetSpecError
from casslab.net.spec import parse_link_name

FIELDS = {"delay_ms": (0.0, 10_000.0), "jitter_ms": (0.0, 10_000.0),
          "loss_pct": (0.0, 100.0), "rate_mbit": (0.001, 100_000.0)}
SCALED = ("delay_ms", "jitter_ms")
LEVEL_RANGE = (-99.0, 1000.0)  # percent: below -99 a delay would vanish or turn negative
GROUP_PATTERN = r"[a-z][a-z0-9_]{0,31}"  # also the tail of factor network.scale.<group>
_GROUP = re.compile(f"^{GROUP_PATTERN}$")
_TERM = re.compile(rf"({GROUP_PATTERN})([+-][0-9]+(?:\.[0-9]+)?)")
BASE = "base"  # the level of `network.scale` that scales no group

Groups = dict[str, dict[str, dict[str, float]]]


def check_groups(v: _V, raw: Any, path: Path_) -> Groups:
    """`lab.network.groups`, validated: group -> link name -> {field: value}."""
    if not isinstance(raw, dict) or not raw:
        raise v.doc.error(path, "must map group names to links, e.g. "
                          "`{edge: {node1-node2: 5, node2-node3: 10}}`")
    out: Groups = {}
    owner: dict[str, str] = {}
    for group, links in raw.items():
        gpath = (*path, group)
        if not isinstance(group, str) or not _GROUP.match(group):
            raise v.doc.error(gpath, f"{group!r} is not a group name (valid: lowercase "
                              "letters, digits and _, starting with a letter)")
        if not isinstance(links, dict) or not links:
            raise v.doc.error(gpath, "must map link names to a delay in ms or to fields "
                              f"({', '.join(FIELDS)})")
        out[group] = {}
        for link, body in links.items():
            lpath = (*gpath, link)
            if str(link).strip().lower() in ("all", "*"):
                raise v.doc.error(lpath, "a group lists its links by name (all is not one)")
            try:
                # Both spellings of one link (node1-node2, node2-node1) are one key.
                key = str(sorted(parse_link_name(str(link), None, "link")))
            except NetSpecError as exc:
                raise v.doc.error(lpath, str(exc).split(": ", 1)[-1]) from None
            if key in owner:
                raise v.doc.error(lpath, f"link {link} is already in group {owner[key]}")
            owner[key] = group
            out[group][str(link)] = _fields(v, body, lpath)
    return out


def _fields(v: _V, body: Any, path: Path_) -> dict[str, float]:
    if not isinstance(body, dict):
        lo, hi = FIELDS["delay_ms"]
        return {"delay_ms": v.number(body, path, lo, hi)}
    m = v.mapping(body, path, tuple(FIELDS))
    return {k: v.number(val, (*path, k), *FIELDS[k]) for k, val in m.items()}


def level(v: _V, value: Any, path: Path_) -> float:
    """A scaling level in percent (50 = +50 %)."""
    lo, hi = LEVEL_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise v.doc.error(path, f"level {value!r} is not a percentage (valid: a number "
                          f"from {lo:g} to {hi:g}, e.g. 50 for +50 %)")
    return value  # as written (10, not 10.0): it labels the trials


def terms_level(v: _V, value: Any, path: Path_) -> str:
    """A level of `network.scale`: `<group>+<percent>` terms joined by commas, or
    `base`; kept as written (it labels the trials), each group once, each percent in
    LEVEL_RANGE."""
    lo, hi = LEVEL_RANGE
    valid = (f"valid: `base`, or <group>+<percent> terms joined by commas, e.g. "
             f"endpoint+50 or edge+50,endpoint-10, each percent from {lo:g} to {hi:g}")
    if not isinstance(value, str) or not value.strip():
        raise v.doc.error(path, f"level {value!r} is not a scaling ({valid})")
    text = value.strip()
    if text == BASE:
        return text
    try:
        terms = scale_terms(text)
    except ValueError as exc:
        raise v.doc.error(path, f"level {value!r}: {exc} ({valid})") from None
    for group, pct in terms.items():
        if not lo <= pct <= hi:
            raise v.doc.error(path, f"level {value!r}: {group} {pct:+g} % is out of range "
                              f"({valid})")
    return text


def scale_terms(level: str) -> dict[str, float]:
    """group -> percent of a `network.scale` level (`base`: none); raises ValueError
    naming the term that is not `<group>+<percent>` or a group named twice."""
    if level.strip() == BASE:
        return {}
    out: dict[str, float] = {}
    for term in level.split(","):
        m = _TERM.fullmatch(term.strip())
        if not m:
            raise ValueError(f"{term.strip()!r} is not <group>+<percent>")
        if m.group(1) in out:
            raise ValueError(f"group {m.group(1)} is named twice")
        out[m.group(1)] = float(m.group(2))
    return out


def links(groups: Any, scales: dict[str, float]) -> dict[str, dict[str, float]]:
    """The links of the base table as NetSpec `links` fields, group `g` scaled by
    `scales[g]` percent. `groups` is `lab.network.groups` as the spec gives it."""
    out: dict[str, dict[str, float]] = {}
    for group, table in (groups or {}).items():
        factor = 1 + scales.get(group, 0.0) / 100
        for link, body in table.items():
            fields = dict(body) if isinstance(body, dict) else {"delay_ms": body}
            out[str(link)] = {k: float(x) * factor if k in SCALED else float(x)
                              for k, x in fields.items()}
    return out
