"""What conditions each directed link gets: profiles, seed 002's notation, single links.

Endpoints are `client` (127.0.0.1) and `node1`..`nodeN`. A link name `A-B` means both
directions, `A-to-B` (or `A->B`) one direction; `all` means every link.

Seed 002's notation for a 3-node lab is accepted directly: endpoint-to-edge delays
x, y, z for client<->node1..3 (`client_delay_ms`) and edge-to-edge delays a, b, c for the
node pairs 1-2, 2-3, 1-3 (`node_delay_ms`). Each value is the one-way delay applied in
both directions. For N nodes the pair order generalises as "by distance on the ring":
all pairs (i, i+1), then (i, i+2), ... (for 3 nodes: 1-2, 2-3, 1-3). One value alone
applies to every link of its kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from casslab.core import specio
from casslab.net.errors import NetSpecError
from casslab.net.linkprofiles import (
    ALIASES,
    FIELDS,
    LinkConditions,
    conditions_from_mapping,
    parse_delay_ms,
    parse_field,
    resolve_link_profile,
)

Link = tuple[str, str]
Table = dict[Link, LinkConditions]

CLIENT = "client"
CONGESTION_CONTROLS = ("cubic", "bbr", "reno")
SPEC_KEYS = ("profile", "profiles_file", "all", "client_delay_ms", "node_delay_ms", "links",
             "cc", "seed")
_ENDPOINT = re.compile(r"^(client|node[1-9][0-9]*)$")


def endpoints(node_count: int) -> list[str]:
    return [CLIENT, *(f"node{i}" for i in range(1, node_count + 1))]


def all_links(node_count: int) -> list[Link]:
    """Every directed link: client<->node i, then node i<->node j, in a stable order."""
    out: list[Link] = []
    for i in range(1, node_count + 1):
        out += [(CLIENT, f"node{i}"), (f"node{i}", CLIENT)]
    for i, j in node_pairs(node_count):
        out += [(f"node{i}", f"node{j}"), (f"node{j}", f"node{i}")]
    return out


def node_pairs(node_count: int) -> list[tuple[int, int]]:
    """Node pairs in seed 002's order, generalised: by ring distance, then first node."""
    return [(i, i + d) for d in range(1, node_count) for i in range(1, node_count - d + 1)]


def _endpoint(text: str, node_count: int | None, where: str) -> str:
    """`client` or `nodeN`; with no lab size yet (None), only the name's form is checked."""
    name = text.strip().lower()
    if name.isdigit():
        name = f"node{name}"
    if not _ENDPOINT.match(name) or (node_count is not None
                                     and name not in endpoints(node_count)):
        valid = ("client, node1, node2, ..." if node_count is None
                 else ", ".join(endpoints(node_count)))
        raise NetSpecError(f"{where}: unknown endpoint '{text}' (valid: {valid})")
    return name


def parse_link_name(text: str, node_count: int | None, where: str = "link") -> list[Link]:
    """`node1-node2` (both ways), `node1-to-node2` / `node1->node2` (one way), `all`.

    With node_count None (the lab not opened yet) only the name's form is checked and
    `all` gives no links."""
    raw = text.strip().lower()
    if raw in ("all", "*"):
        return [] if node_count is None else all_links(node_count)
    for sep, both in (("<->", True), ("->", False), ("-to-", False), ("-", True)):
        if sep in raw:
            a, _, b = raw.partition(sep)
            if sep == "-" and "-" in b:
                break
            src = _endpoint(a, node_count, where)
            dst = _endpoint(b, node_count, where)
            if src == dst:
                raise NetSpecError(f"{where}: '{text}' links an endpoint to itself")
            return [(src, dst), (dst, src)] if both else [(src, dst)]
    raise NetSpecError(f"{where}: '{text}' is not a link (use A-B for both directions, "
                       "A-to-B for one, or all; A, B: client, node1, node2, ...)")


def _links_to_itself(text: str) -> bool:
    """`node2-node2`, `2-to-node2`: checked without the lab's size, so a file is refused
    before any lab is looked up."""
    raw = text.strip().lower()
    for sep in ("<->", "->", "-to-", "-"):
        if sep in raw:
            a, _, b = (x.strip() for x in raw.partition(sep))
            a, b = (f"node{x}" if x.isdigit() else x for x in (a, b))
            return a == b
    return False


def delay_items(value: Any) -> list[Any]:
    """The items of a delay list: `10ms,20ms` split at commas, a YAML list as it is, one
    value alone; none for None."""
    if value is None:
        return []
    if isinstance(value, str):
        return value.split(",")
    return list(value) if isinstance(value, list | tuple) else [value]


def parse_delay_list(text: str | list[Any] | tuple[Any, ...], count: int, field_: str,
                     what: str) -> list[float]:
    """`10ms,20ms,30ms` (or a YAML list) -> one delay in ms per link; one value = all."""
    items = delay_items(text)
    # The field names carry ms (client_delay_ms), so a bare number is ms here.
    values = [parse_delay_ms(v, field_, bare_ms=True) for v in items]
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise NetSpecError(f"{field_}: {len(values)} values given; this lab needs {count} "
                           f"({what}) or one for all")
    return values


def link_label(link: Link) -> str:
    return f"{link[0]}->{link[1]}"


@dataclass(frozen=True)
class NetSpec:
    """A request to change link conditions, applied in this order on top of a table:

    1. `profile` (every link gets it), 2. `all` (fields for every link),
    3. `client_delay_ms` / `node_delay_ms` (seed 002's x,y,z and a,b,c),
    4. `links`: (link name, fields) in order; fields may include `profile`.
    `cc` is the namespace's TCP congestion control, `seed` the loss/jitter seed.
    """

    profile: str | None = None
    profiles_file: Path | None = None
    all: dict[str, Any] = field(default_factory=dict)
    client_delay_ms: tuple[Any, ...] | str | None = None
    node_delay_ms: tuple[Any, ...] | str | None = None
    links: tuple[tuple[str, dict[str, Any]], ...] = ()
    cc: str | None = None
    seed: int | None = None

    @classmethod
    def from_profile(cls, name: str, profiles_file: Path | None = None) -> NetSpec:
        """Every link gets profile `name` (what `lab up --net NAME` means)."""
        resolve_link_profile(name, profiles_file)
        return cls(profile=name, profiles_file=profiles_file)

    @classmethod
    def from_yaml(cls, path: Path) -> NetSpec:
        """Read a link table (see docs of this module and `casslab net set --help`).

        Raises NetSpecError as `file:line: field: what is valid`.
        """
        text = specio.read_text(path, "link spec", NetSpecError)
        doc = specio.Doc(text, str(path), error=NetSpecError, key_lines=True,
                         empty="the link spec is empty (give profile, all or links)")
        _check_doc(doc)
        return cls.from_mapping(doc.root, str(path))

    @classmethod
    def from_mapping(cls, raw: Any, where: str = "spec") -> NetSpec:
        if not isinstance(raw, dict):
            raise NetSpecError(f"{where}: expected a mapping with profile/all/links/...")
        known = set(SPEC_KEYS)
        unknown = set(raw) - known
        if unknown:
            raise NetSpecError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} "
                               f"(valid: {', '.join(sorted(known))})")
        links = raw.get("links") or {}
        if not isinstance(links, dict) or not all(isinstance(v, dict) for v in links.values()):
            raise NetSpecError(f"{where}: links must map a link name to fields, e.g. "
                               "`node1-node2: {delay_ms: 5}`")
        all_ = raw.get("all") or {}
        if not isinstance(all_, dict):
            raise NetSpecError(f"{where}: all must be a mapping of fields")
        seed = raw.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or seed < 0):
            raise NetSpecError(f"{where}: seed must be a non-negative integer")
        pf = raw.get("profiles_file")
        spec = cls(profile=raw.get("profile"), profiles_file=Path(pf) if pf else None,
                   all=dict(all_), client_delay_ms=_seq(raw.get("client_delay_ms")),
                   node_delay_ms=_seq(raw.get("node_delay_ms")),
                   links=tuple((str(k), dict(v)) for k, v in links.items()),
                   cc=raw.get("cc"), seed=seed)
        spec.validate_cc()
        return spec

    def validate_cc(self) -> None:
        if self.cc is not None and self.cc not in CONGESTION_CONTROLS:
            raise NetSpecError(f"cc: '{self.cc}' is not one of {', '.join(CONGESTION_CONTROLS)}")

    def check(self) -> None:
        """Refuse what is wrong whatever the lab's size (cc, profiles, field values, the
        form of link names), so a bad value is named before any lab is looked up."""
        self.validate_cc()
        if self.profile:
            resolve_link_profile(self.profile, self.profiles_file)
        if self.all:
            conditions_from_mapping(self.all, "all")
        for name, raw_fields in self.links:
            where = f"link {name}"
            parse_link_name(name, None, where)
            fields_ = dict(raw_fields)
            prof = fields_.pop("profile", None)
            if prof:
                resolve_link_profile(str(prof), self.profiles_file)
            conditions_from_mapping(fields_, where)

    def merged(self, other: NetSpec) -> NetSpec:
        """`other` applied after this spec (for stacking a YAML file and options)."""
        return replace(
            self,
            profile=other.profile or self.profile,
            profiles_file=other.profiles_file or self.profiles_file,
            all={**self.all, **other.all},
            client_delay_ms=other.client_delay_ms or self.client_delay_ms,
            node_delay_ms=other.node_delay_ms or self.node_delay_ms,
            links=self.links + other.links,
            cc=other.cc or self.cc,
            seed=other.seed if other.seed is not None else self.seed,
        )

    def resolve(self, node_count: int, base: Table | None = None) -> Table:
        """The full table of directed links -> conditions after applying this spec.

        Raises NetSpecError naming the field, link or profile that is wrong.
        """
        self.validate_cc()
        links = all_links(node_count)
        table: Table = {k: (base or {}).get(k, LinkConditions()) for k in links}
        if self.profile:
            cond = resolve_link_profile(self.profile, self.profiles_file).conditions
            table = dict.fromkeys(links, cond)
        if self.all:
            table = {k: conditions_from_mapping(self.all, "all", v) for k, v in table.items()}
        if self.client_delay_ms is not None:
            delays = parse_delay_list(self.client_delay_ms, node_count, "client_delay_ms",
                                      "client->node1..N")
            for i, d in enumerate(delays, start=1):
                for k in ((CLIENT, f"node{i}"), (f"node{i}", CLIENT)):
                    table[k] = replace(table[k], delay_ms=d)
        if self.node_delay_ms is not None:
            pairs = node_pairs(node_count)
            order = ", ".join(f"{i}-{j}" for i, j in pairs)
            delays = parse_delay_list(self.node_delay_ms, len(pairs), "node_delay_ms",
                                      f"pairs {order}")
            for (i, j), d in zip(pairs, delays, strict=True):
                for k in ((f"node{i}", f"node{j}"), (f"node{j}", f"node{i}")):
                    table[k] = replace(table[k], delay_ms=d)
        for name, raw_fields in self.links:
            where = f"link {name}"
            targets = parse_link_name(name, node_count, where)
            fields_ = dict(raw_fields)
            prof = fields_.pop("profile", None)
            for k in targets:
                start = (resolve_link_profile(str(prof), self.profiles_file).conditions if prof
                         else table[k])
                table[k] = conditions_from_mapping(fields_, where, start)
        media_rates(table)
        return table


def media_rates(table: Table) -> dict[str, float]:
    """Each shared medium of the table and its one rate, in order of first use.

    Raises NetSpecError when links on one medium give it different rates.
    """
    out: dict[str, float] = {}
    first: dict[str, Link] = {}
    for link, cond in table.items():
        if not cond.shared or cond.medium is None or cond.rate_mbit is None:
            continue
        seen = out.setdefault(cond.medium, cond.rate_mbit)
        first.setdefault(cond.medium, link)
        if seen != cond.rate_mbit:
            raise NetSpecError(f"medium '{cond.medium}': links give it different rates "
                               f"({link_label(first[cond.medium])} {seen:g} Mbit/s, "
                               f"{link_label(link)} {cond.rate_mbit:g} Mbit/s); a shared "
                               "medium has one rate (set it for all its links, or give a "
                               "link medium: none)")
    return out


def _check_doc(doc: specio.Doc) -> None:
    """Check a link spec file's shape and field values where their lines are known; link
    names and profile names need the lab's size and are checked by `resolve`."""
    v = specio.V(doc)
    raw = v.mapping(doc.root, (), SPEC_KEYS)
    for key in ("profile", "profiles_file"):
        if key in raw:
            v.string(raw[key], (key,))
    if raw.get("cc") is not None:
        v.choice(raw["cc"], ("cc",), CONGESTION_CONTROLS, "congestion control")
    if raw.get("seed") is not None:
        v.integer(raw["seed"], ("seed",), 0)
    fields_doc = ", ".join((*FIELDS, "profile"))
    all_ = raw.get("all")
    if all_ is not None and not isinstance(all_, dict):
        raise doc.error(("all",), f"must be a mapping of fields ({fields_doc})")
    _check_fields(doc, all_ or {}, ("all",))
    links = raw.get("links")
    if links is not None and not isinstance(links, dict):
        raise doc.error(("links",), "must map a link name to fields, e.g. "
                        "`node1-node2: {delay_ms: 5}`")
    for name, body in (links or {}).items():
        if not isinstance(body, dict):
            raise doc.error(("links", name), f"must be a mapping of fields ({fields_doc})")
        _check_fields(doc, {k: x for k, x in body.items() if k != "profile"}, ("links", name))
        if _links_to_itself(str(name)):
            raise doc.error(("links", name), "links an endpoint to itself")
    for key in ("client_delay_ms", "node_delay_ms"):
        value = raw.get(key)
        for i, item in enumerate(delay_items(value)):
            try:
                parse_delay_ms(item, key, bare_ms=True)
            except NetSpecError as exc:
                where = (key, i) if isinstance(value, list) else (key,)
                raise doc.error(where, _after_label(str(exc))) from None


def _check_fields(doc: specio.Doc, fields_: dict[str, Any], path: specio.Path_) -> None:
    for key, value in fields_.items():
        if ALIASES.get(key, key) not in FIELDS:
            valid = (*FIELDS, *ALIASES)
            raise doc.error((*path, key), f"unknown field{specio.closest(key, valid)} "
                            f"(valid: {', '.join(valid)})")
        try:
            parse_field(key, value, "")
        except NetSpecError as exc:
            raise doc.error((*path, key), _after_label(str(exc))) from None


def _after_label(message: str) -> str:
    """The units parsers prefix their message with the field's name; the path says it."""
    return message.split(": ", 1)[1] if ": " in message else message


def _seq(value: Any) -> tuple[Any, ...] | str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return tuple(value)
    return (value,)


def parse_link_option(text: str, node_count: int | None) -> tuple[str, dict[str, Any]]:
    """`node1-node2:delay=10ms,jitter=2ms,loss=1%,burst=3,rate=10mbit,medium=wifi` (or
    profile=4g)."""
    name, sep, rest = text.partition(":")
    if not sep or not rest.strip():
        raise NetSpecError(f"--link '{text}': expected LINK:field=value,... e.g. "
                           "node1-node2:delay=10ms,loss=1%")
    parse_link_name(name, node_count, f"--link {name}")
    fields_: dict[str, Any] = {}
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise NetSpecError(f"--link '{text}': '{item}' is not field=value (fields: delay, "
                               "jitter, loss, burst, rate, medium, profile)")
        fields_[key.strip()] = value.strip()
    return name.strip(), fields_


def json_schema() -> specio.JsonSchema:
    """The link spec file (`casslab net set --spec`) as JSON Schema for editors; link and
    profile names depend on the lab and are checked when the spec is applied."""
    value = {"type": ["number", "string"], "description": "a number in the field's unit or "
             "a value with a unit (10ms, 1.5s, 1%, 7.21mbit)"}
    fields_ = specio.schema_object({k: value for k in (*FIELDS, *ALIASES)})
    with_profile = specio.schema_object({**fields_["properties"], "profile": {"type": "string"}})
    delays = {"oneOf": [value, {"type": "array", "items": value}]}
    return specio.schema_document("casslab link spec", specio.schema_object({
        "profile": {"type": "string", "description": "a link profile for every link"},
        "profiles_file": {"type": "string"},
        "all": fields_,
        "client_delay_ms": delays,
        "node_delay_ms": delays,
        "links": specio.schema_map(with_profile, "link name (node1-node2, node1-to-node2, "
                                   "all) -> fields"),
        "cc": specio.schema_enum(CONGESTION_CONTROLS),
        "seed": specio.schema_integer(0),
    }))
