"""Level labels: declared in the spec or chosen automatically, short and unique."""

from __future__ import annotations

import pytest

from casslab.core.specio import Doc
from casslab.experiment.labels import auto_labels, read_labels
from casslab.experiment.scales import spec_digest, stored_doc
from casslab.experiment.spec import SpecError, parse_spec

EDGE = [{"client": {"delay_ms": 10},
         "groups": {"edge": {"node1-node2": 5, "node2-node3": 10, "node1-node3": 15}}},
        {"client": {"delay_ms": 10},
         "groups": {"edge": {"node1-node2": 15, "node2-node3": 20, "node1-node3": 25}}}]


def test_mapping_levels_print_only_what_varies_one_value_per_group() -> None:
    assert auto_labels(EDGE) == ["edge=5/10/15", "edge=15/20/25"]


def test_a_varying_millisecond_key_prints_its_unit() -> None:
    levels = [{"client": {"delay_ms": 10}}, {"client": {"delay_ms": 20}}]
    assert auto_labels(levels) == ["delay=10ms", "delay=20ms"]


def test_same_leaf_names_under_different_parents_keep_their_parent() -> None:
    levels = [{"a": {"delay_ms": 1}, "b": {"delay_ms": 2}},
              {"a": {"delay_ms": 3}, "b": {"delay_ms": 2}},
              {"a": {"delay_ms": 3}, "b": {"delay_ms": 4}}]
    assert auto_labels(levels) == ["a.delay=1ms, b.delay=2ms", "a.delay=3ms, b.delay=2ms",
                                   "a.delay=3ms, b.delay=4ms"]


def test_a_key_missing_from_one_level_is_shown_as_a_dash() -> None:
    assert auto_labels([{"loss_pct": 1}, {}]) == ["loss_pct=1", "loss_pct=-"]


def test_scalar_levels_print_as_themselves() -> None:
    assert auto_labels([1.0, 2.5, "ycsb-a", True]) == ["1", "2.5", "ycsb-a", "true"]


def test_a_single_mapping_level_says_what_it_is() -> None:
    assert auto_labels([{"client": {"delay_ms": 10}}]) == ["delay=10ms"]


HEAD = "lab: {nodes: 3}\nworkload: {name: ycsb-a}\nfactors:\n"
NET = ("  - name: network\n    levels:\n"
       "      - {client: {delay_ms: 10}, groups: {edge: {node1-node2: 5}}}\n"
       "      - {client: {delay_ms: 10}, groups: {edge: {node1-node2: 15}}}\n")


def test_declared_labels_replace_the_automatic_ones() -> None:
    s = parse_spec(HEAD + NET + "    labels: [near, far]\n"
                   "  - {name: cl, levels: [ONE, TWO], labels: {TWO: two}}\n")
    assert s.factors[0].labels == ("near", "far")
    assert s.factors[1].labels == ("ONE", "two")


def test_without_labels_the_spec_has_the_automatic_ones() -> None:
    s = parse_spec(HEAD + NET)
    assert s.factors[0].labels == ("node1-node2=5", "node1-node2=15")


@pytest.mark.parametrize(("labels", "message"), [
    ("[near]", "factors[0].labels: has 1 labels for 2 levels (valid: one label per level"),
    ("[near, near]", "factors[0].labels: label 'near' names two levels"),
    ("[near, '']", "factors[0].labels[1]: '' must be a non-empty string"),
    ("{near: x}", "factors[0].labels.near: near is not a level of this factor (valid: "
                  "none: use a list of labels)"),
    ("near", "factors[0].labels: must be a list of labels in the levels' order"),
])
def test_bad_labels_are_one_line_naming_the_field(labels: str, message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_spec(HEAD + NET + f"    labels: {labels}\n")
    assert "\n" not in str(exc.value)
    assert message in str(exc.value), str(exc.value)


def test_a_scalar_label_key_must_be_a_level() -> None:
    with pytest.raises(SpecError, match=r"factors\[0\].labels.4: 4 is not a level of this "
                       r"factor \(valid: 3, 5\)"):
        parse_spec(HEAD + "  - {name: nodes, levels: [3, 5], labels: {4: four}}\n")


def test_the_report_reads_labels_from_a_stored_spec_whose_files_are_gone() -> None:
    stored = HEAD + NET + "    labels: [near, far]\n  - {name: nodes, levels: [1, 3]}\n"
    factors = [{"name": "network", "levels": [lv for lv in (
        {"client": {"delay_ms": 10}, "groups": {"edge": {"node1-node2": 5}}},
        {"client": {"delay_ms": 10}, "groups": {"edge": {"node1-node2": 15}}})]},
        {"name": "nodes", "levels": [1, 3]}]
    assert read_labels(Doc(stored, "stored spec"), factors) == {"network": ("near", "far"),
                                                           "nodes": ("1", "3")}


def test_labels_follow_the_levels_a_scale_keeps() -> None:
    text = (HEAD + "  - {name: nodes, levels: [3, 5, 7], labels: [small, mid, big]}\n"
            "scales:\n  two: {factors.nodes.levels: [7, 3]}\n"
            "  new: {factors.nodes.levels: [3, 4]}\n")
    assert parse_spec(text, scale="smoke").factors[0].labels == ("small", "mid")
    assert parse_spec(text, scale="two").factors[0].labels == ("big", "small")
    assert parse_spec(text, scale="new").factors[0].labels == ("3", "4")  # automatic


def test_a_stored_unscaled_spec_labels_the_levels_the_scaled_campaign_ran() -> None:
    stored = HEAD + "  - {name: nodes, levels: [3, 5, 7], labels: [small, mid, big]}\n"
    assert read_labels(Doc(stored, "stored spec"), [{"name": "nodes", "levels": [3, 7]}]) == {
        "nodes": ("small", "big")}
    # a level the spec does not label (an older spec): the automatic labels
    assert read_labels(Doc(stored, "stored spec"), [{"name": "nodes", "levels": [3, 4]}]) == {
        "nodes": ("3", "4")}


def test_the_report_reads_labels_at_the_scale_the_campaign_ran() -> None:
    stored = (HEAD + "  - {name: nodes, levels: [3, 5], labels: [small, big]}\n"
              "scales:\n  paper: {factors.nodes.labels: [three, five]}\n")
    ran = [{"name": "nodes", "levels": [3, 5]}]
    paper = stored_doc(stored, spec_digest(stored, "paper"))
    assert read_labels(paper, ran) == {"nodes": ("three", "five")}
    as_written = stored_doc(stored, spec_digest(stored, None))
    assert read_labels(as_written, ran) == {"nodes": ("small", "big")}


def test_string_levels_written_as_a_cql_map_print_only_what_varies() -> None:
    twcs = ("{'class': 'TimeWindowCompactionStrategy', 'compaction_window_size': '%s', "
            "'compaction_window_unit': 'MINUTES', 'min_threshold': '6'}")
    assert auto_labels([twcs % 2, twcs % 22]) == ["compaction_window_size=2",
                                                  "compaction_window_size=22"]
    # not a mapping literal: printed whole
    assert auto_labels(["{not a map", "insert=0.97"]) == ["{not a map", "insert=0.97"]
