"""Compaction maps for ALTER TABLE: class and every option, quoting, strategies."""

from __future__ import annotations

import pytest

from casslab.cassandra.catalog import as_map
from casslab.cassandra.compaction import cql_map
from casslab.tune.compaction import (
    alter_statement,
    build_compaction_map,
    differences,
    quote_ident,
    strategy_of,
)

TWCS = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"


def test_map_keeps_class_and_every_option() -> None:
    current = {"class": TWCS, "compaction_window_size": "1", "compaction_window_unit": "MINUTES",
               "max_threshold": "32", "min_threshold": "4",
               "unsafe_aggressive_sstable_expiration": "true"}
    m = build_compaction_map(current, {"compaction_window_size": "10", "min_threshold": "6"})
    assert m == {**current, "compaction_window_size": "10", "min_threshold": "6"}
    assert next(iter(m)) == "class"


def test_map_adds_new_options() -> None:
    m = build_compaction_map({"class": TWCS}, {"compaction_window_size": "2",
                                               "compaction_window_unit": "MINUTES"})
    assert m == {"class": TWCS, "compaction_window_size": "2",
                 "compaction_window_unit": "MINUTES"}


def test_map_needs_class() -> None:
    with pytest.raises(ValueError, match="no 'class'"):
        build_compaction_map({"min_threshold": "4"}, {})


def test_statement() -> None:
    stmt = alter_statement("iot", "Sensor Data", {"class": TWCS, "min_threshold": "6"})
    assert stmt == ('ALTER TABLE iot."Sensor Data" WITH compaction = '
                    f"{{'class': '{TWCS}', 'min_threshold': '6'}}")
    assert cql_map({"a": "it's"}) == "{'a': 'it''s'}"
    assert quote_ident("sensor_data") == "sensor_data"
    assert quote_ident('a"b') == '"a""b"'


def test_strategy_names() -> None:
    assert strategy_of(TWCS) == "twcs"
    assert strategy_of("UnifiedCompactionStrategy") == "ucs"
    assert strategy_of("org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy") \
        == "sizetieredcompactionstrategy"


def test_differences_use_twcs_defaults_and_case() -> None:
    cur = {"class": TWCS}
    assert differences(cur, {"min_threshold": "4"}, "twcs") == {}
    assert differences(cur, {"compaction_window_unit": "days"}, "twcs") == {}
    assert differences(cur, {"compaction_window_size": "2"}, "twcs") == {
        "compaction_window_size": ("1", "2")}


def test_as_map_reads_worker_text() -> None:
    text = "{'class': 'x.TimeWindowCompactionStrategy', 'min_threshold': '4'}"
    assert as_map(text) == {"class": "x.TimeWindowCompactionStrategy", "min_threshold": "4"}
    assert as_map({"a": 1}) == {"a": "1"}
    assert as_map(None) == {}
