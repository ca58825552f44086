"""casslab.experiment.tableopts: table.* factors checked when the spec is read, as ALTER TABLE."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.experiment import tableopts
from casslab.experiment.factors import registry
from casslab.experiment.spec import SpecError, parse_spec


def _spec(factors: str, workload: str = "ycsb-a") -> str:
    return f"workload: {{name: {workload}, prepare: true}}\nfactors:\n{factors}\n"


def _error(factors: str, workload: str = "ycsb-a") -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(_spec(factors, workload))
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("workload", ["ycsb-a", "stress-write", "iot", "iot-full-latest"])
def test_table_factors_are_schema_factors_for_every_builtin_workload(workload: str) -> None:
    spec = parse_spec(_spec("- {name: table.compression, levels: [lz4, zstd, none]}\n"
                            "- {name: table.gc_grace_seconds, levels: [0, 864000]}",
                            workload))
    assert [f.kind for f in spec.factors] == ["schema", "schema"]
    assert spec.factor("table.compression").levels == ("lz4", "zstd", "none")


def test_a_user_profile_table_can_be_named(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("keyspace: ks\ntable: readings\n")
    spec = parse_spec(_spec("- {name: table.caching@readings, levels: [all, none]}",
                            str(profile)))
    assert spec.factors[0].kind == "schema"
    message = _error("- {name: table.caching@other, levels: [all]}", str(profile))
    assert "has no table 'other' (its tables: readings)" in message


@pytest.mark.parametrize(("factor", "expected"), [
    ("- {name: table.compression, levels: [lz4, zstdx]}",
     "factors[0].levels[1] (factor table.compression): 'zstdx' is not a compression (valid: "
     "lz4, zstd"),
    ("- {name: table.compression, levels: [{class: LZ4Compressor, chunk_kb: 4}]}",
     "'chunk_kb' is not a compression option (valid: class, chunk_length_in_kb"),
    ("- {name: table.default_time_to_live, levels: [-1]}",
     "(factor table.default_time_to_live): -1 is not an integer in 0..630720000"),
    ("- {name: table.gc_grace_seconds, levels: ['10d']}",
     "(factor table.gc_grace_seconds): '10d' is not an integer in 0..2147483647"),
    ("- {name: table.bloom_filter_fp_chance, levels: [0.01, 0]}",
     "levels[1] (factor table.bloom_filter_fp_chance): 0 is not a number > 6.71e-05 and <= 1"),
    ("- {name: table.caching, levels: [rows]}",
     "(factor table.caching): 'rows' is not a caching (valid: keys, all, none"),
    ("- {name: table.caching, levels: [{keys: SOME}]}", "keys is ALL or NONE"),
    ("- {name: table.read_repair, levels: [sometimes]}",
     "'sometimes' is not one of BLOCKING, NONE"),
    ("- {name: table.speculative_retry, levels: ['MIN(99p,soon)']}", "is not a retry policy"),
    ("- {name: table.cdc, levels: [1]}", "1 is not true or false"),
    ("- {name: table.compaction, levels: [dtcs]}", "'dtcs' is not a compaction (valid: stcs"),
])
def test_a_bad_level_is_one_line_naming_factor_level_and_what_is_valid(factor: str,
                                                                        expected: str) -> None:
    assert expected in _error(factor)


def test_an_unknown_option_names_the_valid_ones() -> None:
    message = _error("- {name: table.gc_grace, levels: [1]}")
    assert "factors[0].name: table.gc_grace: unknown table option 'gc_grace' (valid: " in message
    assert "gc_grace_seconds" in message


def test_an_option_set_twice_is_refused() -> None:
    both = ("- {name: table.compression, levels: [lz4]}\n"
            "- {name: table.compression@usertable, levels: [zstd]}")
    assert "sets compression as does factor table.compression; keep one" in _error(both)
    assert "as does factor compaction" in _error("- {name: compaction, levels: [lcs]}\n"
                                                 "- {name: table.compaction, levels: [stcs]}")
    iot_ttl = ("workload: {name: iot, options: {table-ttl-s: 60}}\nfactors:\n"
               "- {name: table.default_time_to_live, levels: [120]}\n")
    with pytest.raises(SpecError, match="as does workload option table-ttl-s"):
        parse_spec(iot_ttl)


def test_table_factors_need_the_load_phase_to_create_the_tables() -> None:
    text = ("workload: {name: ycsb-a, prepare: false}\nfactors:\n"
            "- {name: table.comment, levels: [a, b]}\n")
    with pytest.raises(SpecError, match=r"needs workload\.prepare: true"):
        parse_spec(text)


def test_options_need_the_cassandra_version_that_has_them() -> None:
    with pytest.raises(tableopts.TableOptionError, match=r"needs Cassandra 5\.0"):
        tableopts.target("memtable", None, "table.memtable", version="4.1.5")
    assert tableopts.target("memtable", "t", "table.memtable@t", version="5.0.6").table == "t"


def test_the_registry_reads_option_and_table_from_a_factor_name() -> None:
    assert table_levels({"table.memtable@t": "x", "nodes": 3}) == (
        (tableopts.Target("memtable", "t"), "x"),)
    with pytest.raises(tableopts.TableOptionError, match=r"is not table\.<option>"):
        table_levels({"table.Bad": 1})


def test_alter_statements_group_a_cells_options_per_table() -> None:
    params = {"nodes": 1, "table.compression": "zstd", "table.gc_grace_seconds@b": 5,
              "table.caching": "all", "table.comment": "it's"}
    assert tableopts.alter_statements(table_levels(params), "ks", ["a", "b"]) == [
        "ALTER TABLE ks.a WITH compression = {'class': 'ZstdCompressor'} AND caching = "
        "{'keys': 'ALL', 'rows_per_partition': 'ALL'} AND comment = 'it''s'",
        "ALTER TABLE ks.b WITH compression = {'class': 'ZstdCompressor'} AND "
        "gc_grace_seconds = 5 AND caching = {'keys': 'ALL', 'rows_per_partition': 'ALL'} AND "
        "comment = 'it''s'",
    ]


@pytest.mark.parametrize(("level", "cql"), [
    ("none", "{'enabled': 'false'}"),
    ({"class": "LZ4Compressor", "chunk_length_in_kb": 16},
     "{'class': 'LZ4Compressor', 'chunk_length_in_kb': '16'}"),
    ("{'class': 'DeflateCompressor'}", "{'class': 'DeflateCompressor'}"),
])
def test_compression_levels_as_cql(level: object, cql: str) -> None:
    assert tableopts.alter_statements(table_levels({"table.compression": level}), "k",
                                      ["t"]) == [
        f"ALTER TABLE k.t WITH compression = {cql}"]


def test_twcs_compaction_keeps_its_window() -> None:
    assert tableopts.compaction_map("twcs:1:MINUTES") == (
        "{'class': 'TimeWindowCompactionStrategy', 'compaction_window_size': '1', "
        "'compaction_window_unit': 'MINUTES'}")


def test_only_options_the_sstables_carry_reload_the_data() -> None:
    assert tableopts.needs_reload(table_levels({"table.compression@t": "lz4", "nodes": 3}))
    assert tableopts.needs_reload(table_levels({"table.default_time_to_live": 60}))
    assert not tableopts.needs_reload(table_levels({"table.gc_grace_seconds": 0,
                                                    "compaction": "lcs"}))


def table_levels(params: dict[str, object]) -> tuple[tuple[tableopts.Target, object], ...]:
    """The table levels of a cell, sorted out of its levels by the factor registry."""
    return tuple(registry.draft(params).tables)
