"""The one reader of YAML inputs: text in, plain values out, every error on one line.

Each spec file casslab reads (experiment, plan, tune rules, net specs, profile files)
goes through `read_text` + `Doc` + `V`, so a bad input is always reported as

    file:line: field.path: what is valid

Lines come from yaml.compose's node marks, so they are exact even in flow style. The
loader refuses what would otherwise travel further as a traceback or a silent mistake:
bytes that are not UTF-8, unknown `!tags`, duplicate keys, recursive or exploding
aliases, NaN and infinity (every range check passes NaN, since comparisons with it are
false), booleans where numbers are wanted (`True` is an int in Python) and fractions
where integers are wanted.

`schema_*` helpers build the JSON Schema fragments each reader publishes for editors
(`casslab schema NAME`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from casslab.core.errors import UsageError

Path_ = tuple[str | int, ...]
# Past this many YAML nodes (after alias expansion) a file is refused: a few nested
# aliases can otherwise expand to billions of values ("billion laughs").
MAX_YAML_VALUES = 100_000


_STANDARD_SCALAR_TAGS = {f"tag:yaml.org,2002:{t}" for t in
                         ("str", "int", "float", "bool", "null", "timestamp", "binary")}


class SpecError(UsageError):
    """A spec file is malformed; the message has file, line, field and what is valid."""


def read_text(path: Path, what: str, error: type[UsageError] = SpecError) -> str:
    """The file's text; `error` (one line) if it cannot be read or is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start}); save the {what} as UTF-8") from None


def fmt_path(path: Path_) -> str:
    """`factors[1].levels[0]` from ("factors", 1, "levels", 0)."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
            continue
        # a key that is not a plain word is quoted so the path stays one readable line
        key = p if p and p.isprintable() and not any(c in p for c in " .[]:") else repr(p)
        out += f".{key}" if out else key
    return out or "(top level)"


def closest(word: str, valid: Sequence[str]) -> str:
    """' (did you mean X?)' for a near miss among `valid`, else ''."""
    near = difflib.get_close_matches(word, list(valid), n=1, cutoff=0.6)
    return f" (did you mean {near[0]}?)" if near else ""


class Doc:
    """Parsed YAML plus the line of every value, keyed by its path.

    key_lines: a mapping key's path points at the key's line rather than its value's
    (for a block value that is the next line).
    """

    def __init__(self, text: str, source: str, *, error: type[UsageError] = SpecError,
                 empty: str = "the file is empty", key_lines: bool = False) -> None:
        self.source = source
        self.error_type = error
        self.key_lines = key_lines
        self.lines: dict[Path_, int] = {}
        # The `name:` of each mapping that has one, so an error inside a list item read
        # before its validator can say which item (`factors[0]` is network.delay_ms).
        self.names: dict[Path_, str] = {}
        self._count = 0
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            raise self._yaml_error(exc) from None
        except (ValueError, RecursionError) as exc:  # e.g. a NUL byte, absurd nesting
            raise error(f"{source}: not valid YAML: {exc}") from None
        if node is None:
            raise error(f"{source}: {empty}")
        try:
            self.root = self._walk(node, (), ())
        except RecursionError:
            raise error(f"{source}: not valid YAML: nested too deeply") from None

    def _yaml_error(self, exc: yaml.YAMLError) -> UsageError:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return self.error_type(f"{self.source}{line}: not valid YAML: {problem}")

    def _walk(self, node: yaml.Node, path: Path_, stack: tuple[int, ...]) -> Any:
        self._count += 1
        if self._count > MAX_YAML_VALUES:
            raise self.error(path, f"the file expands to more than {MAX_YAML_VALUES} values "
                             "(aliases?); split it or write the values out")
        if id(node) in stack:
            raise self.error(path, "an alias refers to itself (a recursive structure)")
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, (*stack, id(node)))
        if isinstance(node, yaml.SequenceNode):
            self._check_tag(node, path, "tag:yaml.org,2002:seq")
            return [self._walk(v, (*path, i), (*stack, id(node)))
                    for i, v in enumerate(node.value)]
        return self._scalar(node, path)

    def _mapping(self, node: yaml.MappingNode, path: Path_, stack: tuple[int, ...]) -> Any:
        self._check_tag(node, path, "tag:yaml.org,2002:map")
        out: dict[str, Any] = {}
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "name" and isinstance(
                    v, yaml.ScalarNode):
                self.names[path] = str(v.value)
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                self.lines[path] = k.start_mark.line + 1
                raise self.error(path, "a key must be a plain value, not a list or mapping")
            key = str(k.value)
            kpath = (*path, key)
            if key in out:
                self.lines[kpath] = k.start_mark.line + 1
                raise self.error(kpath, "is given twice")
            if self.key_lines:
                self.lines[kpath] = k.start_mark.line + 1
            out[key] = self._walk(v, kpath, stack)
        return out

    def _check_tag(self, node: yaml.Node, path: Path_, plain: str) -> None:
        if node.tag != plain:
            raise self.error(path, f"unknown YAML tag {_short_tag(node.tag)!r} (write the value "
                             "without a tag)")

    def _scalar(self, node: yaml.Node, path: Path_) -> Any:
        try:
            value = yaml.SafeLoader("").construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            if node.tag in _STANDARD_SCALAR_TAGS:
                raise self.error(path, f"{node.value!r}: {exc.problem}") from None
            raise self.error(path, f"unknown YAML tag {_short_tag(node.tag)!r} (write the value "
                             "without a tag)") from None
        except (ValueError, TypeError, OverflowError) as exc:  # e.g. a bad !!timestamp
            raise self.error(path, f"{node.value!r} cannot be read: {exc}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(path, f"{node.value} is not a finite number (NaN and infinity "
                             f"are not valid values){self._named_item(path)}")
        if not isinstance(value, str | int | float | bool | type(None)):
            # dates, binary: no spec field takes them; keep the text as written
            return str(node.value)
        return value

    def _named_item(self, path: Path_) -> str:
        """` in network.delay_ms` when `path` lies inside a mapping with a `name:`."""
        for end in range(len(path) - 1, 0, -1):
            if path[:end] in self.names:
                return f" in {self.names[path[:end]]}"
        return ""

    def line(self, path: Path_) -> int:
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)

    def error(self, path: Path_, message: str) -> UsageError:
        """`file:line: field.path: message` as the reader's own error type."""
        one_line = message.replace("\r", "\\r").replace("\n", "\\n")
        return self.error_type(f"{self.source}:{self.line(path)}: {fmt_path(path)}: "
                               f"{one_line}")


def _range(lo: float, hi: float | None, lo_open: bool = False) -> str:
    low = f"> {lo:g}" if lo_open else f">= {lo:g}"
    return f"{low} and <= {hi:g}" if hi is not None else low


class V:
    """Typed checks of values taken from a `Doc`; each raises `doc.error` (one line)."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc

    def mapping(self, value: Any, path: Path_, keys: Sequence[str]) -> dict[str, Any]:
        """`value` as a mapping (None: empty) whose keys are all in `keys`."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.doc.error(path, f"must be a mapping with keys {', '.join(keys)}")
        for k in value:
            if k not in keys:
                raise self.doc.error((*path, k), f"unknown key{closest(k, keys)} (valid: "
                                     f"{', '.join(keys)})")
        return value

    def integer(self, value: Any, path: Path_, lo: int, hi: int | None = None) -> int:
        """An integer in [lo, hi]; booleans and fractions are refused."""
        if isinstance(value, bool) or not isinstance(value, int):
            kind = ("a boolean, " if isinstance(value, bool) else
                    "a fraction, " if isinstance(value, float) else "")
            raise self.doc.error(path, f"{value!r} is {kind}not an integer (valid: "
                                 f"{_range(lo, hi)})")
        if value < lo or (hi is not None and value > hi):
            raise self.doc.error(path, f"{value} is out of range (valid: {_range(lo, hi)})")
        return value

    def number(self, value: Any, path: Path_, lo: float, hi: float | None = None,
               lo_open: bool = False) -> float:
        """A finite number in [lo, hi] (or (lo, hi] with lo_open); booleans are refused."""
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value)):
            raise self.doc.error(path, f"{value!r} is not a number (valid: "
                                 f"{_range(lo, hi, lo_open)})")
        if value < lo or (lo_open and value == lo) or (hi is not None and value > hi):
            raise self.doc.error(path, f"{value} is out of range (valid: "
                                 f"{_range(lo, hi, lo_open)})")
        return float(value)

    def choice(self, value: Any, path: Path_, valid: Sequence[str], what: str = "value") -> str:
        if not isinstance(value, str) or value not in valid:
            hint = closest(value, valid) if isinstance(value, str) else ""
            raise self.doc.error(path, f"{value!r} is not a valid {what}{hint} "
                                 f"(valid: {', '.join(valid)})")
        return value

    def boolean(self, value: Any, path: Path_) -> bool:
        if not isinstance(value, bool):
            raise self.doc.error(path, f"{value!r} is not a boolean (valid: true, false)")
        return value

    def string(self, value: Any, path: Path_) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.doc.error(path, f"{value!r} must be a non-empty string")
        return value


# ---- JSON Schema fragments ----------------------------------------------------------------

JsonSchema = dict[str, Any]


def schema_object(properties: dict[str, JsonSchema], required: Sequence[str] = (),
                  description: str = "", extra: JsonSchema | None = None) -> JsonSchema:
    """An object with these properties; unknown keys are invalid unless `extra` types them."""
    out: JsonSchema = {"type": "object", "properties": properties,
                       "additionalProperties": extra if extra is not None else False}
    if required:
        out["required"] = list(required)
    if description:
        out["description"] = description
    return out


def schema_map(values: JsonSchema, description: str = "") -> JsonSchema:
    """An object whose keys are names (free) and whose values all follow `values`."""
    out: JsonSchema = {"type": "object", "additionalProperties": values}
    if description:
        out["description"] = description
    return out


def schema_integer(lo: int | None = None, hi: int | None = None,
                   description: str = "") -> JsonSchema:
    out: JsonSchema = {"type": "integer"}
    if lo is not None:
        out["minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    if description:
        out["description"] = description
    return out


def schema_number(lo: float | None = None, hi: float | None = None, lo_open: bool = False,
                  description: str = "") -> JsonSchema:
    out: JsonSchema = {"type": "number"}
    if lo is not None:
        out["exclusiveMinimum" if lo_open else "minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    if description:
        out["description"] = description
    return out


def schema_enum(values: Sequence[str], description: str = "") -> JsonSchema:
    out: JsonSchema = {"enum": list(values)}
    if description:
        out["description"] = description
    return out


def schema_document(title: str, body: JsonSchema) -> JsonSchema:
    """A top-level schema with the draft and title editors look for."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, **body}


def _short_tag(tag: str) -> str:
    """The tag as the user wrote it: `!!python/tuple`, not `tag:yaml.org,2002:python/tuple`."""
    return "!!" + tag.removeprefix(_YAML_TAG_PREFIX) if tag.startswith(_YAML_TAG_PREFIX) else tag


_YAML_TAG_PREFIX = "tag:yaml.org,2002:"
