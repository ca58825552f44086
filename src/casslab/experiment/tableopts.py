"""Table options as campaign factors: `table.<option>` and `table.<option>@<table>`.

A factor `table.compression` with levels such as `lz4`, `zstd`, `none` or a map sets the
option on every table of the workload's keyspace; `table.compression@sensor_data` sets it
on that one table only. Like `compaction`, these are schema factors: a change of level
recreates the keyspace, and the runner applies the level with ALTER TABLE once the load
phase has created the tables (`alter_statements`).

Options the stored SSTables carry (REWRITE_OPTIONS) would only reach SSTables written
after the ALTER, so the prepared data would be measured under the old setting. The runner
then truncates the tables and loads the data again: `nodetool upgradesstables -a` would
rewrite in place, but lab nodes run without JMX, and a reload also gives the prepared
rows the table's default TTL, as if the table had been created with the options.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra import compaction
from casslab.cassandra.distribution import DEFAULT_VERSION

# Cassandra's own limits (Attributes.MAX_TTL: 20 years; BloomCalculations'
# minSupportedBloomFilterFpChance for 20 buckets per element).
MAX_TTL_S = 630_720_000
MIN_BLOOM_FP = 6.71e-05
I32_MAX = 2**31 - 1

COMPRESSORS = {"lz4": "LZ4Compressor", "zstd": "ZstdCompressor", "snappy": "SnappyCompressor",
               "deflate": "DeflateCompressor", "noop": "NoopCompressor"}
# CompressionParams' options plus the compressors' own (LZ4Compressor, ZstdCompressor).
COMPRESSION_KEYS = ("class", "chunk_length_in_kb", "enabled", "min_compress_ratio",
                    "crc_check_chance", "compression_level", "lz4_compressor_type",
                    "lz4_high_compressor_level")
CACHING = {"keys": {"keys": "ALL", "rows_per_partition": "NONE"},
           "all": {"keys": "ALL", "rows_per_partition": "ALL"},
           "none": {"keys": "NONE", "rows_per_partition": "NONE"}}
# Options stored in the SSTables themselves: the prepared data is loaded again after them.
REWRITE_OPTIONS = frozenset({"compression", "bloom_filter_fp_chance", "default_time_to_live",
                             "min_index_interval", "max_index_interval"})
# Built-in workloads' tables (casslab-load's ycsb.rs, stress.rs, iot.rs).
BUILTIN_TABLES = {"ycsb": ("usertable",), "stress": ("standard1",), "iot": ("sensor_data",)}


class TableOptionError(ValueError):
    """A table option or level is not one Cassandra takes; the message says what is."""


@dataclass(frozen=True)
class TableOption:
    """One option of CREATE/ALTER TABLE ... WITH: its level check and its CQL form."""

    check: Callable[[Any], str]  # a level -> its CQL literal; raises TableOptionError
    since: str = "4.0"


# ---- level checks: each returns the CQL literal --------------------------------------------

def _integer(lo: int, hi: int) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise TableOptionError(f"{value!r} is not an integer in {lo}..{hi}")
        return str(value)
    return check


def _fraction(lo: float, lo_open: bool = False) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value) and (value > lo if lo_open else value >= lo)
              and value <= 1.0)
        if not ok:
            bound = f"> {lo:g}" if lo_open else f">= {lo:g}"
            raise TableOptionError(f"{value!r} is not a number {bound} and <= 1")
        return repr(float(value))
    return check


def _boolean(value: Any) -> str:
    if not isinstance(value, bool):
        raise TableOptionError(f"{value!r} is not true or false")
    return "true" if value else "false"


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TableOptionError(f"{value!r} is not a string")
    return _quote(value)


def _choice(valid: Sequence[str]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value.upper() not in valid:
            raise TableOptionError(f"{value!r} is not one of {', '.join(valid)}")
        return _quote(value.upper())
    return check


_RETRY = re.compile(r"(?i)(NONE|ALWAYS|\d+(\.\d+)?(p|PERCENTILE)|\d+(\.\d+)?(ms|us|s))")


def _retry_policy(value: Any) -> str:
    """SpeculativeRetryPolicy's forms: NONE, ALWAYS, 99p, 50ms, MIN(a,b), MAX(a,b)."""
    text = str(value).strip() if isinstance(value, str) else ""
    m = re.fullmatch(r"(?i)(MIN|MAX)\s*\(\s*([^,]+?)\s*,\s*([^)]+?)\s*\)", text)
    parts = [m.group(2), m.group(3)] if m else [text]
    if not text or not all(_RETRY.fullmatch(p) for p in parts):
        raise TableOptionError(f"{value!r} is not a retry policy (NONE, ALWAYS, 99p, 50ms, "
                               "MIN(99p,50ms) or MAX(99p,50ms))")
    return _quote(text)


def _cql_map(value: Any, keys: Sequence[str] | None, what: str) -> str:
    """A YAML mapping (keys checked) or a literal CQL map '{...}' (passed to Cassandra)."""
    if isinstance(value, str) and value.strip().startswith("{") and value.strip().endswith("}"):
        return value.strip()
    if not isinstance(value, dict) or not value:
        raise TableOptionError(f"{value!r} is not a {what} map")
    for k, v in value.items():
        if keys is not None and k not in keys:
            raise TableOptionError(f"{k!r} is not a {what} option (valid: {', '.join(keys)})")
        if isinstance(v, dict | list):
            raise TableOptionError(f"{what} option {k!r} takes a scalar, not {v!r}")
    return "{" + ", ".join(f"{_quote(str(k))}: {_quote(_scalar(v))}"
                           for k, v in value.items()) + "}"


def _compression(value: Any) -> str:
    if isinstance(value, str) and value.lower() in (*COMPRESSORS, "none"):
        name = value.lower()
        if name == "none":
            return "{'enabled': 'false'}"
        return "{'class': " + _quote(COMPRESSORS[name]) + "}"
    if isinstance(value, str) and not value.strip().startswith("{"):
        raise TableOptionError(f"{value!r} is not a compression (valid: "
                               f"{', '.join(COMPRESSORS)}, none, or a map {{class: ..., "
                               "chunk_length_in_kb: ...}})")
    try:
        return _cql_map(value, COMPRESSION_KEYS, "compression")
    except TableOptionError as exc:
        raise TableOptionError(f"{exc}; a compression is {', '.join(COMPRESSORS)}, none or a "
                               "map {class: ..., chunk_length_in_kb: ...}") from None


def _caching(value: Any) -> str:
    if isinstance(value, str) and value.lower() in CACHING:
        return _cql_map(CACHING[value.lower()], None, "caching")
    if isinstance(value, str) and not value.strip().startswith("{"):
        raise TableOptionError(f"{value!r} is not a caching (valid: keys, all, none, or a "
                               "map {keys: ALL|NONE, rows_per_partition: ALL|NONE|N})")
    try:
        out = _cql_map(value, ("keys", "rows_per_partition"), "caching")
    except TableOptionError as exc:
        raise TableOptionError(f"{exc}; caching is keys, all, none or a map {{keys: ALL|NONE, "
                               "rows_per_partition: ALL|NONE|N}") from None
    if isinstance(value, dict):
        keys, rows = str(value.get("keys", "ALL")).upper(), str(value.get("rows_per_partition",
                                                                           "NONE")).upper()
        if keys not in ("ALL", "NONE") or not (rows in ("ALL", "NONE") or rows.isdigit()):
            raise TableOptionError(f"{value!r}: keys is ALL or NONE, rows_per_partition ALL, "
                                   "NONE or a row count")
    return out


def compaction_map(value: Any) -> str:
    """A compaction level (stcs, lcs, ucs, twcs[:SIZE:UNIT], a map) as its CQL map."""
    if isinstance(value, dict):
        if "class" not in value:
            raise TableOptionError(f"{value!r}: a compaction map needs a class")
        return _cql_map(value, None, "compaction")
    text = str(value).strip() if isinstance(value, str) else ""
    if text.startswith("{"):
        return _cql_map(text, None, "compaction")
    if not compaction.is_level(text):
        raise TableOptionError(f"{value!r} is not a compaction (valid: "
                               f"{compaction.LEVEL_SYNTAX}, or a map with a class)")
    return _cql_map(compaction.level_options(text), None, "compaction")


def _scalar(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# Every option ALTER TABLE ... WITH takes in Cassandra 4.0-5.0: the constants of
# org.apache.cassandra.schema.TableParams.Option (read from cassandra-all 5.0.6 with javap)
# and the CQL reference (cassandra.apache.org/doc/5.0/cassandra/developing/cql/ddl.html,
# "Table options"). Left out: `extensions` (binary blobs for server plugins) and the
# CREATE-only clauses (id, CLUSTERING ORDER, COMPACT STORAGE).
TABLE_OPTIONS: dict[str, TableOption] = {
    "additional_write_policy": TableOption(_retry_policy),
    "allow_auto_snapshot": TableOption(_boolean, "5.0"),
    "bloom_filter_fp_chance": TableOption(_fraction(MIN_BLOOM_FP, lo_open=True)),
    "caching": TableOption(_caching),
    "cdc": TableOption(_boolean),
    "comment": TableOption(_text),
    "compaction": TableOption(compaction_map),
    "compression": TableOption(_compression),
    "crc_check_chance": TableOption(_fraction(0.0)),
    "default_time_to_live": TableOption(_integer(0, MAX_TTL_S)),
    "gc_grace_seconds": TableOption(_integer(0, I32_MAX)),
    "incremental_backups": TableOption(_boolean, "5.0"),
    "max_index_interval": TableOption(_integer(1, I32_MAX)),
    "memtable": TableOption(_text, "5.0"),  # a memtable configuration of cassandra.yaml
    "memtable_flush_period_in_ms": TableOption(_integer(0, I32_MAX)),
    "min_index_interval": TableOption(_integer(1, I32_MAX)),
    "read_repair": TableOption(_choice(("BLOCKING", "NONE"))),
    "speculative_retry": TableOption(_retry_policy),
}


@dataclass(frozen=True)
class Target:
    """What a table factor sets: an option, on one table or (table None) on all."""

    option: str
    table: str | None


def target(option: str, table: str | None, name: str,
           version: str = DEFAULT_VERSION) -> Target:
    """The target of factor `name` (the registry reads option and table from it); raises
    TableOptionError naming what is valid."""
    if option not in TABLE_OPTIONS:
        raise TableOptionError(f"{name}: unknown table option {option!r} (valid: "
                               f"{', '.join(TABLE_OPTIONS)})")
    since = TABLE_OPTIONS[option].since
    if _version(version) < _version(since):
        raise TableOptionError(f"table option {option!r} needs Cassandra {since}+ (the lab "
                               f"runs {version})")
    return Target(option, table)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2])


def check_level(t: Target, value: Any) -> Any:
    """A level of a factor setting `t`, unchanged once checked; raises TableOptionError
    saying what a level may be."""
    TABLE_OPTIONS[t.option].check(value)
    return value


def workload_tables(workload: str, family: str) -> tuple[str, ...] | None:
    """The tables a workload creates: built-in ones by family, a user profile's `table`;
    None when it cannot be known before a run."""
    if family in BUILTIN_TABLES:
        return BUILTIN_TABLES[family]
    table = profile_value(workload, "table")
    return (table,) if table else None


def profile_value(profile: str, key: str) -> str | None:
    """A top-level field (`keyspace`, `table`) of a cassandra-stress user profile; None
    when the file or the field is missing (casslab-load reports those itself)."""
    try:
        doc = yaml.safe_load(Path(profile).read_text())
    except (OSError, yaml.YAMLError):
        return None
    value = doc.get(key) if isinstance(doc, dict) else None
    return str(value) if value else None


def check_factors(targets: Mapping[str, Target], workloads: Mapping[str, str],
                  prepare: bool, options: Sequence[str] = (), *,
                  compaction_factor: bool = False) -> tuple[str, str] | None:
    """Rules between table factors and the rest of the spec: (factor name, problem) or None.

    targets: the table factors by name; workloads: every workload the campaign runs ->
    its family (ycsb, stress, iot, user); options: the casslab-load options the spec sets
    (iot's own table-ttl-s, compaction); compaction_factor: the spec varies compaction.
    """
    if targets and not prepare:
        return next(iter(targets)), ("needs workload.prepare: true (ALTER TABLE needs the "
                                     "tables the load phase creates)")
    owners: dict[str, str] = {}
    if compaction_factor:
        owners["compaction"] = "factor compaction"
    if "table-ttl-s" in options:
        owners["default_time_to_live"] = "workload option table-ttl-s"
    if "compaction" in options:
        owners.setdefault("compaction", "workload option compaction")
    seen: list[tuple[str, Target]] = []
    for name, t in targets.items():
        if t.option in owners:
            return name, f"sets {t.option} as does {owners[t.option]}; keep one"
        for other, o in seen:
            if o.option == t.option and None in (o.table, t.table):
                return name, f"sets {t.option} as does factor {other}; keep one"
        seen.append((name, t))
        problem = _table_problem(t, workloads)
        if problem:
            return name, problem
    return None


def _table_problem(t: Target, workloads: Mapping[str, str]) -> str | None:
    if t.table is None:
        return None
    for wl, family in workloads.items():
        tables = workload_tables(wl, family)
        if tables is not None and t.table not in tables:
            return (f"workload {Path(wl).name} has no table {t.table!r} (its tables: "
                    f"{', '.join(tables)})")
    return None


def alter_statements(levels: Sequence[tuple[Target, Any]], keyspace: str,
                     tables: Sequence[str]) -> list[str]:
    """ALTER TABLE statements for a cell's table factors (target, level), one per table
    (all options of a table in one statement); `tables` are the keyspace's tables."""
    per_table: dict[str, list[str]] = {}
    for t, value in levels:
        literal = TABLE_OPTIONS[t.option].check(value)
        for table in ([t.table] if t.table else tables):
            per_table.setdefault(table, []).append(f"{t.option} = {literal}")
    return [f"ALTER TABLE {keyspace}.{table} WITH {' AND '.join(opts)}"
            for table, opts in per_table.items()]


def needs_reload(levels: Sequence[tuple[Target, Any]]) -> bool:
    """Whether a cell sets an option the SSTables carry (see the module docstring)."""
    return any(t.option in REWRITE_OPTIONS for t, _ in levels)
