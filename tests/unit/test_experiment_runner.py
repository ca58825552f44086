"""Runner logic that needs no lab: the casslab-load options a cell turns into."""

from __future__ import annotations

from pathlib import Path

from casslab.experiment.runner import CampaignRunner, compaction_map, timeout_guard
from casslab.experiment.spec import parse_spec
from casslab.load.options import IotOptions, LoadOptions, StressOptions, YcsbOptions


def make(text: str, tmp_path: Path) -> CampaignRunner:
    return CampaignRunner(parse_spec(text), tmp_path / "res", home=tmp_path / "home",
                          cache=tmp_path / "cache", lab_name="unit-exp")


def options(r: CampaignRunner, params: dict[str, object]) -> LoadOptions:
    """The casslab-load options the runner gives a cell's trials (its typed cell's)."""
    return r.spec.cell(params).load_options()


def test_cell_options_are_the_spec_options_then_the_factors(tmp_path: Path) -> None:
    r = make("workload: {name: ycsb-a, records: 500, options: {in-flight: 2}}\n"
             "factors:\n  - {name: cl, levels: [QUORUM]}\n"
             "  - {name: option.field-length, levels: [10]}\n", tmp_path)
    opts = options(r, {"cl": "QUORUM", "option.field-length": 10, "nodes": 3})
    assert opts == YcsbOptions(records=500, in_flight=2, cl_read="QUORUM", cl_write="QUORUM",
                               field_length=10)
    # A lab factor is never a casslab-load option.
    assert options(r, {"runtime": "lxc", "profile": "rpi3"}) == YcsbOptions(records=500,
                                                                            in_flight=2)
    iot = make("workload: {name: iot, options: {devices: 10}}\n", tmp_path)
    assert options(iot, {"compaction": "twcs:1:MINUTES", "rate": "66%"}) == IotOptions(
        devices=10, compaction="twcs:1:MINUTES")


def test_a_factor_level_overrides_the_spec_option(tmp_path: Path) -> None:
    r = make("workload: {name: stress-write, options: {in_flight: 2, rate: 50}}\n"
             "factors:\n  - {name: in_flight, levels: [8]}\n", tmp_path)
    assert options(r, {"in_flight": 8}) == StressOptions(records=1000, in_flight=8,
                                                         rate_ops_s=50.0)


def test_compaction_maps_send_class_and_every_option() -> None:
    assert compaction_map("lcs") == "{'class': 'LeveledCompactionStrategy'}"
    assert compaction_map("twcs:5:MINUTES") == (
        "{'class': 'TimeWindowCompactionStrategy', 'compaction_window_size': '5', "
        "'compaction_window_unit': 'MINUTES'}")
    assert compaction_map("{'class': 'X'}") == "{'class': 'X'}"


def test_thread_levels_are_plain_client_counts(tmp_path: Path) -> None:
    r = make("workload: {name: stress-write}\n"
             "factors:\n  - {name: threads, levels: [150, 450]}\n", tmp_path)
    assert options(r, {"threads": 450}) == StressOptions(records=1000, threads=450)


def test_several_clients_get_the_start_margin_on_top_of_the_trial_timeout() -> None:
    assert timeout_guard(300, 1) == ["timeout", "-s", "INT", "-k", "15", "300"]
    assert timeout_guard(300, 2)[-1] == "305"
    assert timeout_guard(12.5, 4)[-1] == "17.5"
