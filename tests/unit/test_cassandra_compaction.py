"""The one definition of compaction strategies: names, classes, levels, CQL maps."""

from __future__ import annotations

import pytest

from casslab.cassandra import compaction


def test_every_short_name_has_a_class_and_maps_back() -> None:
    for short in compaction.SHORT_NAMES:
        cls = compaction.class_name(short)
        assert compaction.short_name(cls) == short
        assert compaction.short_name(f"org.apache.cassandra.db.compaction.{cls}") == short
    assert compaction.short_name("com.example.MyStrategy") is None


def test_twcs_window_levels_carry_both_window_options() -> None:
    assert compaction.level_options("twcs:5:MINUTES") == {
        "class": "TimeWindowCompactionStrategy", "compaction_window_size": "5",
        "compaction_window_unit": "MINUTES"}
    assert compaction.level_options("lcs") == {"class": "LeveledCompactionStrategy"}


@pytest.mark.parametrize("bad", ["xcs", "lcs:5:MINUTES", "twcs:5", "twcs:5:WEEKS", ""])
def test_a_bad_level_names_the_valid_ones(bad: str) -> None:
    assert not compaction.is_level(bad)
    with pytest.raises(ValueError, match="twcs:SIZE:MINUTES"):
        compaction.level_options(bad)


def test_cql_maps_quote_their_values() -> None:
    assert compaction.cql_map({"class": "X", "k": "it's"}) == "{'class': 'X', 'k': 'it''s'}"
