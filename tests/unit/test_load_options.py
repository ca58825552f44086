"""casslab.load.options: names and values checked by casslab-load's own rules, one argv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.load.options import (
    DESCRIPTION,
    FAMILIES,
    SELECTOR_FLAGS,
    Description,
    IotOptions,
    OptionError,
    StressOptions,
    Warmup,
    YcsbOptions,
    consistency_levels,
    from_mapping,
    shipped,
)
from casslab.load.runner import LoadSpec, find_binary

# Written by casslab-load's describe::tests from its real clap definitions with two rules
# planted in clap only: ycsb --records in 1..=5000, ycsb --seed needs --ops.
PLANTED = Path(__file__).parents[1] / "fixtures" / "load_options_planted.json"


def _error(workload: str, mapping: dict[str, Any], where: str = "options") -> str:
    with pytest.raises(OptionError) as info:
        from_mapping(workload, mapping, where)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_the_committed_description_is_what_the_built_binary_prints() -> None:
    argv = [find_binary(), "options", "--json"]
    printed = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert json.loads(printed) == json.loads(DESCRIPTION.read_text())


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_fields_are_the_options_casslab_load_describes(family: str) -> None:
    described = {flag for flag, rule in shipped().rules(family).items() if not rule.positional}
    ours = set(FAMILIES[family].flags()) | set(SELECTOR_FLAGS[family])
    assert ours - described == set(), "options casslab-load does not take"
    assert described - ours == set(), "casslab-load options without a field"


def test_a_rule_planted_in_casslab_loads_clap_definition_is_checked() -> None:
    planted = Description.read(PLANTED)
    # The shipped description has neither rule ...
    o = YcsbOptions.from_mapping({"records": 6000, "seed": 3})
    assert (o.records, o.seed) == (6000, 3)
    # ... the planted one refuses both, with the same words as the binary.
    with pytest.raises(OptionError, match=r"^options.records: 6000 must be an integer in "
                       r"1..=5000$"):
        YcsbOptions.from_mapping({"records": 6000}, description=planted)
    with pytest.raises(OptionError, match=r"^options.seed: needs ops$"):
        YcsbOptions.from_mapping({"seed": 3}, description=planted)
    assert YcsbOptions.from_mapping({"seed": 3, "ops": 10}, description=planted).seed == 3
    # Planted in ycsb only: stress keeps its rules.
    assert StressOptions.from_mapping({"records": 6000}, description=planted).records == 6000


def test_an_option_casslab_load_gained_without_a_field_here_is_named_as_such() -> None:
    raw = json.loads(DESCRIPTION.read_text())
    records = next(o for o in raw["commands"]["ycsb"]["options"] if o["flag"] == "records")
    raw["commands"]["ycsb"]["options"].append({**records, "flag": "batch-size", "id": "b"})
    with pytest.raises(OptionError, match="casslab has no field for it"):
        YcsbOptions.from_mapping({"batch-size": 4}, description=Description.of(raw))


def test_conflicts_clap_declares_are_checked_though_casslab_never_listed_them() -> None:
    # stress --replication conflicts_with rf in config.rs; no Python line says so.
    assert _error("stress-write", {"replication": "{'class': 'SimpleStrategy'}", "rf": 3}) \
        .startswith("options.replication: cannot be used with rf")


def test_consistency_levels_are_casslab_loads() -> None:
    assert consistency_levels() == ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL",
                                    "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE")


def test_names_are_the_flags_with_dashes_or_underscores() -> None:
    o = from_mapping("ycsb-a", {"in-flight": 8, "cl_read": "local-quorum", "field_count": 4})
    assert isinstance(o, YcsbOptions)
    assert (o.in_flight, o.cl_read, o.field_count) == (8, "LOCAL_QUORUM", 4)


def test_unknown_option_is_refused_with_the_closest_name() -> None:
    message = _error("ycsb-b", {"in-flite": 8}, "workload.options")
    assert message.startswith("workload.options.in-flite: unknown casslab-load option")
    assert "did you mean 'in-flight'?" in message


def test_option_of_another_workload_family_is_refused() -> None:
    assert "unknown casslab-load option for ycsb" in _error("ycsb-a", {"devices": 10})
    assert isinstance(from_mapping("iot", {"devices": 10}), IotOptions)


@pytest.mark.parametrize("cl", ["SERIAL", "LOCAL_SERIAL", "most"])
def test_consistency_levels_casslab_load_lacks_are_refused(cl: str) -> None:
    message = _error("stress-read", {"cl-read": cl})
    assert message.startswith(f"options.cl-read: '{cl}' must be one of ANY, ONE")
    assert "SERIAL" not in message.split("must be")[1]


@pytest.mark.parametrize(("mapping", "expected"), [
    ({"workers": 0}, "options.workers: 0 must be an integer >= 1"),
    ({"in-flight": 0}, "options.in-flight: 0 must be an integer >= 1"),
    ({"rate": 0}, "options.rate: 0 must be a number > 0"),
    ({"rate": "fast"}, "options.rate: 'fast' must be a number > 0"),
    ({"tick": "2s"}, "options.tick: '2s' must be a duration >= 1ms and <= 1s"),
    ({"tick": "500us"}, "options.tick: '500us' must be a duration >= 1ms and <= 1s"),
    ({"interval": "5ms"}, "options.interval: '5ms' must be a duration >= 10ms"),
    ({"timeout": "12 parsecs"}, "options.timeout: unknown unit 'parsecs' in '12 parsecs'"),
    ({"timeout": "soon"}, "options.timeout: 'soon' is not a duration"),
    ({"timeout": 12}, "options.timeout: bare number 12 is ambiguous: add a unit"),
    ({"field-count": 33}, "options.field-count: 33 must be an integer in 1..=32"),
    ({"records": 0}, "options.records: 0 must be an integer >= 1"),
    ({"max-scan-length": 0}, "options.max-scan-length: 0 must be an integer >= 1"),
    ({"distribution": "gaussian"}, "options.distribution: 'gaussian' must be one of zipfian"),
    ({"phase": "Load"}, "options.phase: 'Load' must be one of load, run, both"),
    ({"ttl-s": 2**31}, "options.ttl-s: 2147483648 must be an integer in 0..=630720000"),
    ({"ttl-s": -1}, "options.ttl-s: -1 must be an integer in 0..=630720000"),
    ({"io-threads": 0}, "options.io-threads: 0 must be an integer in 1..=1024"),
    ({"field-length": 2**21}, "options.field-length: 2097152 must be an integer in "
     "0..=1048576"),
    ({"zipfian-constant": 1}, "options.zipfian-constant: 1 must be a number > 0 and < 1"),
    ({"hotspot-data-fraction": 1.5}, "options.hotspot-data-fraction: 1.5 must be a number "
     ">= 0 and <= 1"),
    ({"hotspot-opn-fraction": "x"}, "options.hotspot-opn-fraction: 'x' must be a number >= 0 "
     "and <= 1"),
    ({"converge": 1.0}, "options.converge: 1.0 must be a number > 0 and < 1"),
    ({"timeout": "0s"}, "options.timeout: '0s' must be a duration > 0"),
    ({"duration": "0s"}, "options.duration: '0s' must be a duration > 0"),
    ({"unreachable-after": "0s"}, "options.unreachable-after: '0s' must be a duration > 0"),
    ({"drop": "yes"}, "options.drop: 'yes' is a flag: true or false"),
    ({"warmup": "soon"}, "options.warmup: 'soon' must be an op count (5000) or a duration"),
])
def test_values_casslab_load_refuses_are_refused(mapping: dict[str, Any], expected: str) -> None:
    assert _error("ycsb-a", mapping).startswith(expected)


@pytest.mark.parametrize(("workload", "mapping", "expected"), [
    ("iot", {"series": 6}, "options.series: 6 must be an integer in 1..=5"),
    ("iot", {"values-per-insert": 10_001}, "options.values-per-insert: 10001 must be an "
     "integer in 1..=10000"),
    ("iot", {"devices": 0}, "options.devices: 0 must be an integer >= 1"),
    ("iot", {"compaction": "twcs:0:MINUTES"}, "options.compaction: 'twcs:0:MINUTES': window "
     "size '0' must be"),
    ("iot", {"compaction": "twcs:1:WEEKS"}, "options.compaction: 'twcs:1:WEEKS': window unit"),
    ("iot", {"compaction": "dtcs"}, "options.compaction: 'dtcs': use stcs, lcs, ucs"),
    ("stress-write", {"column-size": 0}, "options.column-size: 0 must be an integer in 1.."),
    ("stress-write", {"records": 0}, "options.records: 0 must be an integer >= 1"),
    ("iot", {"table-ttl-s": 630_720_001}, "options.table-ttl-s: 630720001 must be an integer "
     "in 0..=630720000"),
])
def test_workload_rules_are_those_of_the_workload(workload: str, mapping: dict[str, Any],
                                                  expected: str) -> None:
    assert _error(workload, mapping).startswith(expected)


def test_iot_compaction_forms_casslab_load_takes_are_accepted() -> None:
    for value in ("stcs", "LCS", "ucs", "twcs", "twcs:1:minutes", "{'class': 'X'}"):
        assert IotOptions.from_mapping({"compaction": value}).compaction == value


@pytest.mark.parametrize(("mix", "expected"), [
    ("read=1,scan", "'scan' is not NAME=WEIGHT"),
    ("read=1,foo=1", "unknown operation 'foo'; operations: read, update, insert, scan, rmw"),
    ("read=x", "weight 'x' is not a number"),
    ("read=-1,update=2", "weights must be non-negative"),
    ("read=0", "at least one weight must be positive"),
])
def test_mix_follows_casslab_load_opmix(mix: str, expected: str) -> None:
    assert expected in _error("ycsb-a", {"mix": mix})


def test_mix_names_are_those_of_the_family() -> None:
    assert "operations: insert, devdat, lesrow, avgdat" in _error("iot", {"mix": "read=1"})
    assert from_mapping("stress-mixed", {"mix": "write=1,read=3"}).mix == "write=1,read=3"
    # A user profile names its own operations: casslab-load checks them.
    assert from_mapping("p.yaml", {"mix": "insert=1,q1=9"}).mix == "insert=1,q1=9"


def test_options_that_go_together_are_checked_together() -> None:
    assert _error("ycsb-a", {"tls-cert": "c.pem"}).startswith("options.tls-cert: needs tls-key")
    assert _error("ycsb-a", {"tls-insecure": True, "tls-ca": "ca.pem"}).startswith(
        "options.tls-insecure: cannot be used with tls-ca")
    assert _error("iot", {"stages": "s.yaml", "ops": 10}).startswith("options.stages:")


def test_error_without_where_names_the_command_line_flag() -> None:
    assert _error("ycsb-a", {"cl_write": "serial"}, "").startswith("--cl-write: 'serial'")


def test_option_error_is_a_usage_error() -> None:
    assert issubclass(OptionError, UsageError)


def test_a_whole_float_is_an_integer_and_a_fraction_is_refused() -> None:
    assert from_mapping("ycsb-a", {"in-flight": 3.0}).to_argv() == ["--in-flight", "3"]
    assert _error("ycsb-a", {"in-flight": 2.5}).startswith("options.in-flight: 2.5 must be")


def test_none_leaves_an_option_unset() -> None:
    assert from_mapping("ycsb-a", {"ops": None, "rate": None}) == YcsbOptions()


def test_durations_parse_as_core_units_and_casslab_load_do() -> None:
    forms = ("500ms", "30s", "2m", "1h", "1.5sec", "250us", "250µs", "3min")
    assert [from_mapping("ycsb-a", {"timeout": t}).timeout_s for t in forms] == \
        pytest.approx([0.5, 30.0, 120.0, 3600.0, 1.5, 0.00025, 0.00025, 180.0])
    # A bare number is no duration for either (it was seconds here, once).
    for bare in ("1.5", 7):
        assert "add a unit" in _error("ycsb-a", {"duration": bare})


def test_warmup_is_an_op_count_or_a_duration() -> None:
    assert from_mapping("iot", {"warmup": 5000}).warmup == Warmup(ops=5000)
    assert from_mapping("iot", {"warmup": "5000"}).warmup == Warmup(ops=5000)
    assert from_mapping("iot", {"warmup": "10s"}).warmup == Warmup(seconds=10.0)


def test_to_argv_spells_each_set_option_once_in_field_order() -> None:
    o = YcsbOptions(hosts=("127.0.1.1:9042", "127.0.1.2:9042"), ops=100, in_flight=8,
                    duration_s=0.5, rate_ops_s=250.0, warmup=Warmup(seconds=10.0), drop=True,
                    no_retry=False, zipfian_constant=0.9)
    assert o.to_argv() == ["--hosts", "127.0.1.1:9042,127.0.1.2:9042", "--ops", "100",
                           "--duration", "0.5s", "--warmup", "10s", "--in-flight", "8",
                           "--rate", "250", "--drop", "--zipfian-constant", "0.9"]


def test_to_mapping_round_trips_through_from_mapping() -> None:
    o = IotOptions(devices=10, warmup=Warmup(seconds=2.5), tick_s=0.002, cl_read="ALL",
                   stages=Path("s.yaml"), rate_ops_s=12.5)
    assert IotOptions.from_mapping(o.to_mapping()) == o


def test_load_phase_drops_the_options_that_only_shape_the_run() -> None:
    o = StressOptions(rate_ops_s=10.0, mix="write=1", ops=5, duration_s=3.0, records=100,
                      rf=3, in_flight=4)
    assert o.for_load_phase() == StressOptions(records=100, rf=3, in_flight=4)


def test_load_phase_loads_at_its_own_concurrency_not_the_runs_closed_loop_clients() -> None:
    o = StressOptions(threads=450, think_time_s=0.005, records=100)
    assert o.for_load_phase() == StressOptions(records=100)


def test_load_phase_overrides_set_its_own_concurrency_over_the_runs() -> None:
    o = YcsbOptions(records=100, in_flight=1, ops=1000)
    assert o.for_load_phase({"in-flight": 16}) == YcsbOptions(records=100, in_flight=16)
    assert o.for_load_phase({"in_flight": 16, "workers": 2}) == YcsbOptions(
        records=100, in_flight=16, workers=2)


def test_load_phase_overrides_refuse_a_run_only_option_by_name() -> None:
    with pytest.raises(OptionError, match=r"workload.load_options.rate: shapes only the "
                       r"measured run"):
        YcsbOptions(records=100).for_load_phase({"rate": 50})


def test_load_phase_overrides_are_checked_as_options_are() -> None:
    with pytest.raises(OptionError, match=r"workload.load_options.in-flight"):
        YcsbOptions(records=100).for_load_phase({"in-flight": 0})


def test_flag_names_a_field() -> None:
    assert IotOptions.flag("table_ttl_s") == "table-ttl-s"


def test_threads_are_closed_loop_clients_and_io_threads_the_runtime() -> None:
    o = from_mapping("stress-read", {"threads": 450, "io_threads": 2, "think-time": "5ms"})
    assert isinstance(o, StressOptions)
    assert (o.threads, o.io_threads, o.think_time_s) == (450, 2, 0.005)
    assert o.to_argv() == ["--io-threads", "2", "--threads", "450", "--think-time", "0.005s"]
    # A whole float (a level resolved from '66%' of a searched peak) is a thread count.
    assert from_mapping("ycsb-a", {"threads": 297.0}).threads == 297


@pytest.mark.parametrize(("mapping", "expected"), [
    ({"threads": 50, "workers": 2}, "options.threads: cannot be used with workers"),
    ({"workers": 2, "threads": 50}, "options.threads: cannot be used with workers"),
    ({"threads": 50, "in_flight": 8}, "options.threads: cannot be used with in-flight"),
    ({"threads": 0}, "options.threads: 0 must be an integer in 1..=32768"),
    ({"threads": 40_000}, "options.threads: 40000 must be an integer in 1..=32768"),
    ({"think-time": "1ms"}, "options.think-time: needs threads"),
    ({"threads": 5, "think-time": "1ms", "rate": 10}, "options.think-time: cannot be used "
     "with rate"),
])
def test_threads_refuses_the_other_concurrency_and_bad_counts(mapping: dict[str, Any],
                                                              expected: str) -> None:
    assert _error("stress-write", mapping).startswith(expected)


def test_iot_read_variants_are_iot_workloads_and_a_profile_named_iot_is_not() -> None:
    assert isinstance(from_mapping("iot-full-latest", {"devices": 10}), IotOptions)
    assert not isinstance(from_mapping("iot-mine.yaml", {}), IotOptions)


def test_error_retries_go_out_as_casslab_loads_flag_and_refuse_a_negative() -> None:
    spec = LoadSpec.of("stress-write", {"error-retries": 3})
    argv = spec.options.to_argv()
    assert argv[argv.index("--error-retries") + 1] == "3"
    with pytest.raises(UsageError, match="error-retries"):
        LoadSpec.of("stress-write", {"error-retries": -1})


def test_an_insert_range_must_lie_within_the_records() -> None:
    o = from_mapping("ycsb-a", {"records": 1000, "insert-start": 600, "insert-count": 400})
    assert o.to_argv() == ["--records", "1000", "--insert-start", "600", "--insert-count", "400"]
    assert _error("ycsb-a", {"records": 1000, "insert-start": 600, "insert-count": 401}) == (
        "options.insert-count: insert-start 600 + insert-count 401 is more than records 1000 "
        "(the load inserts key numbers insert-start..insert-start+insert-count-1 of the "
        "records)")
    # Without records: casslab-load's default (1000), read from its description.
    assert _error("ycsb-a", {"insert-start": 1000}).startswith(
        "options.insert-start: 1000 is not below records 1000")
    assert _error("ycsb-a", {"insert-count": 0}).startswith(
        "options.insert-count: 0 must be an integer >= 1")
    assert _error("ycsb-a", {"insert-start": -1}).startswith(
        "options.insert-start: -1 must be an integer >= 0")


def test_an_insert_range_shapes_the_data_so_the_load_phase_keeps_it() -> None:
    o = YcsbOptions(insert_start=500, insert_count=500, ops=10, distribution="uniform")
    assert o.for_load_phase() == YcsbOptions(insert_start=500, insert_count=500)
