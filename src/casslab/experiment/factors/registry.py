"""The factor registry: every kind of factor a campaign spec can vary, declared once.

An entry says, for one kind: the pattern of its names, what it touches (`kind`, the
spec's and the results database's word), what a change of its level costs (`change`:
a lab rebuild, a reload of the keyspace and its data, a live change, or nothing), the
parser of its levels, where a level lands in a cell (`apply`) and which casslab-load
options it sets (`flags`). Nothing outside this package reads a factor's name to learn
what it is (tests/unit/test_factor_registry.py greps for it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casslab.core.specio import Path_, V
from casslab.experiment import linkscale, profilefactors, tableopts
from casslab.experiment.factors import parsers as p
from casslab.experiment.factors.network import NetLevels
from casslab.experiment.levels import is_relative, relative_fraction
from casslab.hardware import BUILTIN_PROFILES, LIVE_FIELDS
from casslab.lab.state import RUNTIME_NAMES
from casslab.load.options import canonical, family_of

# Names a check elsewhere needs to refer to one factor by (never a prefix of one).
NODES, PROFILE, RUNTIME, WORKLOAD, RF, COMPACTION = ("nodes", "profile", "runtime",
                                                    "workload", "rf", "compaction")
CL, CL_READ, CL_WRITE, RATE = "cl", "cl_read", "cl_write", "rate"
TUNER_FACTOR = "tuner"
# An A/A factor: its levels are names of identical copies of every cell (casslab
# calibrate; an A/A pair beside real factors). Nothing is applied for it.
COPY_FACTOR = "copy"
# Workload options that take a concurrency or a rate and may be searched or be relative.
# `threads` is casslab-load's --threads: N closed-loop clients of one request each (YCSB's
# -threads, cassandra-stress's -rate threads=N), so seed 004's 450 and 150 are levels.
CONCURRENCY = ("in_flight", "workers", "threads")
SEARCHABLE = (*CONCURRENCY, RATE)
# What a change of level costs, by kind (rebuild the lab, reload the keyspace and its
# data, change it live, or nothing): the plan's reset before a trial follows it.
CHANGE_OF_KIND = {"lab": "rebuild", "limits": "live", "network": "live", "schema": "reload",
                  "workload": "live", "tuner": "reload", "copy": "none"}


@dataclass
class Draft:
    """A cell's levels sorted by what they set, as the entries' `apply` leave them."""

    lab: dict[str, Any] = field(default_factory=dict)  # nodes, profile, runtime
    overrides: dict[str, Any] = field(default_factory=dict)  # cassandra.yaml key -> value
    fields: dict[str, float | int] = field(default_factory=dict)  # profile fields
    network: Any = None  # the level of factor `network` (None: not varied)
    scales: dict[str, float] = field(default_factory=dict)  # link group -> percent
    scoped: list[tuple[str, str, Any]] = field(default_factory=list)  # scope, param, value
    workload: str | None = None
    compaction: str | None = None
    tables: list[tuple[tableopts.Target, Any]] = field(default_factory=list)
    tuner: str = p.TUNER_OFF


Parse = Callable[[V, re.Match[str], Any, Path_, Path | None], Any]
Apply = Callable[[Draft, re.Match[str], Any], None]
Flags = Callable[[re.Match[str], str], tuple[str, ...]]


def _none(_d: Draft, _m: re.Match[str], _value: Any) -> None:
    return None


def _no_flags(_m: re.Match[str], _workload: str) -> tuple[str, ...]:
    return ()


def _same_flag(m: re.Match[str], _workload: str) -> tuple[str, ...]:
    return (canonical(m.group(0)),)


@dataclass(frozen=True)
class Entry:
    """One kind of factor (see the module docstring); `doc` is its name as FACTOR_DOC
    lists it."""

    doc: str
    pattern: re.Pattern[str]
    kind: str
    parse: Parse
    apply: Apply = _none
    flags: Flags = _no_flags

    @property
    def change(self) -> str:
        return CHANGE_OF_KIND[self.kind]


def _lab(key: str) -> Apply:
    def apply(d: Draft, _m: re.Match[str], value: Any) -> None:
        d.lab[key] = value
    return apply


def _set_field(d: Draft, m: re.Match[str], value: Any) -> None:
    d.fields[m.group(1)] = value


def _set_override(d: Draft, m: re.Match[str], value: Any) -> None:
    d.overrides[m.group(1)] = value


def _set_network(d: Draft, _m: re.Match[str], value: Any) -> None:
    d.network = value


def _set_scale(d: Draft, m: re.Match[str], value: Any) -> None:
    d.scales[m.group(1)] = float(value)


def _set_scales(d: Draft, _m: re.Match[str], value: Any) -> None:
    d.scales.update(linkscale.scale_terms(str(value)))


def _set_link(d: Draft, m: re.Match[str], value: Any) -> None:
    d.scoped.append((m.group(1) or "all", m.group(2), value))


def _set_workload(d: Draft, _m: re.Match[str], value: Any) -> None:
    d.workload = str(value)


def _set_compaction(d: Draft, _m: re.Match[str], value: Any) -> None:
    d.compaction = str(value)


def _set_table(d: Draft, m: re.Match[str], value: Any) -> None:
    d.tables.append((table_target(m), value))


def _set_tuner(d: Draft, _m: re.Match[str], value: Any) -> None:
    d.tuner = str(value)


def _table_level(v: V, m: re.Match[str], value: Any, path: Path_, _b: Path | None) -> Any:
    try:
        return tableopts.check_level(table_target(m), value)
    except tableopts.TableOptionError as exc:
        raise v.doc.error(path, str(exc)) from None


def _tuner(v: V, _m: re.Match[str], value: Any, path: Path_, base_dir: Path | None) -> str:
    try:
        return p.tuner_level(value, base_dir)
    except ValueError as exc:
        raise v.doc.error(path, str(exc)) from None


def _records_flags(_m: re.Match[str], workload: str) -> tuple[str, ...]:
    # iot sizes its data with --devices
    return () if family_of(workload) == "iot" else (canonical("records"),)


def _compaction_flags(_m: re.Match[str], workload: str) -> tuple[str, ...]:
    # other workloads get it as ALTER TABLE, not as an option
    return ("compaction",) if family_of(workload) == "iot" else ()


def _exact(*names: str) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(n) for n in names))




def _profile_fields(*, live: bool) -> re.Pattern[str]:
    fields = [f for f in profilefactors.FIELDS if (f in LIVE_FIELDS) == live]
    return re.compile(rf"profile\.({'|'.join(fields)})")


def _profile_level(v: V, m: re.Match[str], value: Any, path: Path_, _b: Path | None) -> Any:
    return profilefactors.level(v, m.group(1), value, path)

_LINK_PARAMS = "|".join(p.NETWORK_PARAMS)

REGISTRY: tuple[Entry, ...] = (
    Entry("nodes", _exact(NODES), "lab", lambda v, _m, x, path, _b: p.node_count(v, x, path),
          _lab(NODES)),
    Entry("profile", _exact(PROFILE), "lab",
          lambda v, _m, x, path, _b: v.choice(x, path, list(BUILTIN_PROFILES), "profile"),
          _lab(PROFILE)),
    # memory and heap take effect when the JVM starts again: a rebuild; CPU and disk are
    # written on the running nodes' cgroups (casslab.experiment.profilefactors)
    Entry(f"profile.<{'|'.join(profilefactors.FIELDS)}>", _profile_fields(live=False), "lab",
          _profile_level, _set_field),
    Entry("", _profile_fields(live=True), "limits", _profile_level, _set_field),
    Entry("runtime", _exact(RUNTIME), "lab",
          lambda v, _m, x, path, _b: v.choice(x, path, list(RUNTIME_NAMES), "runtime"),
          _lab(RUNTIME)),
    Entry("set.<cassandra.yaml key>", re.compile(r"set\.(.*)", re.DOTALL), "lab",
          lambda v, _m, x, path, _b: p.scalar(v, x, path), _set_override),
    Entry("network", _exact("network"), "network",
          lambda v, _m, x, path, _b: p.network_value(v, x, path), _set_network),
    Entry(f"network[.all|client|nodes|nodeA-nodeB].<{_LINK_PARAMS}>",
          re.compile(rf"network(?:\.(all|client|nodes|node\d+-node\d+))?\.({_LINK_PARAMS})"),
          "network", lambda v, m, x, path, _b: p.link_param(v, m.group(2), x, path), _set_link),
    Entry("network.scale.<group of lab.network.groups>",
          re.compile(rf"network\.scale\.({linkscale.GROUP_PATTERN})"), "network",
          lambda v, _m, x, path, _b: linkscale.level(v, x, path), _set_scale),
    Entry("network.scale (levels <group>+<percent>[,...] or base)", _exact("network.scale"),
          "network", lambda v, _m, x, path, _b: linkscale.terms_level(v, x, path),
          _set_scales),
    Entry("workload", _exact(WORKLOAD), "schema",
          lambda v, _m, x, path, b: p.workload_name(v, x, path, b), _set_workload),
    Entry("records", _exact("records"), "schema",
          lambda v, _m, x, path, _b: v.integer(x, path, 1), flags=_records_flags),
    Entry("rf", _exact(RF), "schema", lambda v, _m, x, path, _b: p.node_count(v, x, path),
          flags=_same_flag),
    Entry("compaction", _exact(COMPACTION), "schema",
          lambda v, _m, x, path, _b: p.compaction_level(v, x, path), _set_compaction,
          _compaction_flags),
    Entry("cl", _exact(CL), "workload", lambda v, _m, x, path, _b: p.consistency(v, x, path),
          flags=lambda _m, _w: ("cl-read", "cl-write")),
    Entry("cl_read, cl_write", _exact(CL_READ, CL_WRITE), "workload",
          lambda v, _m, x, path, _b: p.consistency(v, x, path), flags=_same_flag),
    Entry("in_flight, workers, threads", _exact(*CONCURRENCY), "workload",
          lambda v, _m, x, path, _b: v.integer(x, path, 1, 100_000), flags=_same_flag),
    Entry("rate", _exact(RATE), "workload",
          lambda v, _m, x, path, _b: v.number(x, path, 0.0, lo_open=True), flags=_same_flag),
    Entry("option.<casslab-load option>", re.compile(r"option\.([a-z][a-z0-9-]*)"),
          "workload", lambda v, _m, x, path, _b: p.scalar(v, x, path),
          flags=lambda m, _w: (canonical(m.group(1)),)),
    # runs beside the load; the keyspace it altered is recreated
    Entry("tuner", _exact(TUNER_FACTOR), "tuner", _tuner, _set_tuner),
    Entry("copy (A/A: levels that change nothing)", _exact(COPY_FACTOR), "copy",
          lambda v, _m, x, path, _b: p.copy_name(v, x, path)),
    Entry("table.<option>[@<table>]", re.compile(r"table\.(.*)", re.DOTALL), "schema",
          _table_level, _set_table),
)

FACTOR_DOC = ", ".join(e.doc for e in REGISTRY if e.doc)
_TABLE_NAME = re.compile(r"([a-z_]+)(?:@([A-Za-z0-9_]+))?")


def kinds_that(change: str) -> tuple[str, ...]:
    """The kinds of factor whose change of level costs `change`."""
    return tuple(k for k, c in CHANGE_OF_KIND.items() if c == change)


def lookup(name: str) -> tuple[Entry, re.Match[str]] | None:
    """The entry a factor name belongs to, with the match of its pattern; None: unknown."""
    for entry in REGISTRY:
        m = entry.pattern.fullmatch(name)
        if m:
            return entry, m
    return None


def _entry(name: str) -> tuple[Entry, re.Match[str]]:
    found = lookup(name)
    if found is None:
        raise ValueError(f"unknown factor {name!r} (valid: {FACTOR_DOC})")
    return found


def factor_kind(name: str) -> str | None:
    """lab, limits, network, schema, workload, tuner or copy; None for an unknown name."""
    found = lookup(name)
    return found[0].kind if found else None


def table_target(m: re.Match[str]) -> tableopts.Target:
    """The target of a `table.<option>[@<table>]` name; raises TableOptionError."""
    name = m.group(0)
    t = _TABLE_NAME.fullmatch(m.group(1))
    if not t:
        raise tableopts.TableOptionError(
            f"{name!r} is not table.<option> or table.<option>@<table>")
    return tableopts.target(t.group(1), t.group(2), name)


def name_problem(name: str) -> str | None:
    """What is wrong with a known factor's name beyond its pattern (a table option
    Cassandra does not have), or None."""
    entry, m = _entry(name)
    if entry.apply is _set_table:
        try:
            table_target(m)
        except tableopts.TableOptionError as exc:
            return str(exc)
    return None


def parse_level(v: V, name: str, value: Any, path: Path_, has_search: bool,
                base_dir: Path | None) -> Any:
    """One level of factor `name` as the cell keeps it; raises the spec's error."""
    entry, m = _entry(name)
    if is_relative(value):
        if name not in SEARCHABLE:
            raise v.doc.error(path, f"{value!r}: levels relative to the peak are only for "
                              f"{', '.join(SEARCHABLE)}")
        if not has_search:
            raise v.doc.error(path, f"{value!r} is relative to the peak, but the spec has no "
                              "`search:` section to find it")
        if relative_fraction(value) <= 0:
            raise v.doc.error(path, f"{value!r} must be > 0%")
        return value.strip()
    return entry.parse(v, m, value, path, base_dir)


def draft(params: Mapping[str, Any]) -> Draft:
    """Levels by factor name sorted by what they set."""
    d = Draft()
    for name, value in params.items():
        entry, m = _entry(name)
        entry.apply(d, m, value)
    return d


def scale_factor(group: str) -> str:
    """The name of the factor that scales link group `group` (`network.scale.<group>`)."""
    return f"network.scale.{group}"


def scaled_groups(params: Mapping[str, Any]) -> list[str]:
    """The link groups a cell's `network.scale.<group>` factors scale, in factor order."""
    return [m.group(1) for name in params if (found := lookup(name)) is not None
            and found[0].apply is _set_scale for m in (found[1],)]


def net_levels(params: Mapping[str, Any]) -> NetLevels:
    """The network levels among `params` (casslab.experiment.factors.network.wanted)."""
    d = draft(params)
    return NetLevels(d.network, d.scales, tuple(d.scoped))


def factor_flags(name: str, workload: str) -> tuple[str, ...]:
    """The casslab-load options factor `name` sets for `workload` (as flags); () if none."""
    entry, m = _entry(name)
    return entry.flags(m, workload)


def option_factor(flag: str) -> str:
    """The name of the factor that sets casslab-load option `flag` (`--mix` -> option.mix)."""
    name = f"option.{flag}"
    _entry(name)  # a flag the option pattern does not take is a bug of the caller
    return name


def fixed_by_inventory(name: str) -> bool:
    """A factor real hosts cannot vary: the inventory fixes the nodes, their profiles and
    runtime."""
    entry, _ = _entry(name)
    return entry.kind in ("lab", "limits") and entry.apply is not _set_override


def table_targets(names: Sequence[str]) -> dict[str, tableopts.Target]:
    """The table factors among `names`, by name."""
    out: dict[str, tableopts.Target] = {}
    for name in names:
        entry, m = _entry(name)
        if entry.apply is _set_table:
            out[name] = table_target(m)
    return out


def check_scale_groups(v: V, lab_network: Any, names: Sequence[str],
                       levels: Sequence[Sequence[Any]] = ()) -> None:
    """Every `network.scale.<group>` factor, and every group a `network.scale` level
    names (`levels[i]` are factor i's), is a group of `lab.network.groups`; a group is
    scaled by one factor kind only (`network.scale` beside `network.scale.<group>`
    would leave the cell's scaling to the factors' order)."""
    groups = lab_network.get("groups") if isinstance(lab_network, dict) else None
    valid = ", ".join(groups or {}) or "none defined: add lab.network.groups"
    kinds = {i: _entry(name) for i, name in enumerate(names)}
    own = [i for i, (e, _m) in kinds.items() if e.apply is _set_scale]
    terms = [i for i, (e, _m) in kinds.items() if e.apply is _set_scales]
    for i in own:
        m = kinds[i][1]
        if m.group(1) not in (groups or {}):
            raise v.doc.error(("factors", i, "name"), f"factor {names[i]}: no group "
                              f"'{m.group(1)}' in lab.network.groups (valid: {valid})")
    for i in terms:
        if own:
            raise v.doc.error(("factors", i, "name"), f"factor network.scale beside "
                              f"{names[own[0]]}: scale each group with one of them")
        for j, level in enumerate(levels[i] if i < len(levels) else ()):
            for group in linkscale.scale_terms(str(level)):
                if group not in (groups or {}):
                    raise v.doc.error(("factors", i, "levels", j), f"level {level}: no "
                                      f"group '{group}' in lab.network.groups (valid: "
                                      f"{valid})")
