"""YCSB property files and -p overrides mapped onto casslab-load's ycsb options."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.load import LoadSpec
from casslab.load.runner import build_command, find_binary
from casslab.load.ycsbprops import (
    BUILTIN_DISTRIBUTION,
    BUILTIN_MIXES,
    CASSLAB_DEFAULTS,
    PropertyError,
    from_sources,
    parse_properties,
)

WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"


def _argv(workload: str, options: dict[str, object]) -> list[str]:
    return build_command(LoadSpec.of(workload, options), ["h:9042"], "casslab-load")


@pytest.mark.parametrize("letter", list("abcdef"))
def test_a_shipped_workload_file_is_the_builtin_workload_of_that_name(letter: str) -> None:
    w = from_sources([WORKLOADS / f"workload{letter}"], [])
    assert w.warnings == ()
    assert _argv(w.workload, w.options) == _argv(f"ycsb-{letter}", {})


def test_overrides_win_over_the_file_and_map_to_casslab_load_options() -> None:
    w = from_sources([WORKLOADS / "workloada"],
                     ["recordcount=1000000", "operationcount=5000", "threadcount=8",
                      "target=500", "fieldlength=20", "cassandra.readconsistencylevel=QUORUM"])
    assert w.workload == "ycsb-a"
    assert w.options == {"records": 1_000_000, "ops": 5000, "threads": 8, "rate": 500.0,
                         "field-length": 20, "cl-read": "QUORUM"}


def test_a_mix_no_builtin_has_runs_with_an_explicit_mix_and_distribution() -> None:
    w = from_sources([], ["readproportion=0.7", "updateproportion=0.3",
                          "requestdistribution=hotspot", "hotspotopnfraction=0.9"],
                     base="ycsb-b")
    assert w.workload == "ycsb-a"
    assert w.options == {"mix": "read=0.7,update=0.3", "distribution": "hotspot",
                         "hotspot-opn-fraction": 0.9}
    # casslab-load accepts what the mapping produces.
    assert "--mix" in _argv(w.workload, w.options)


def test_ycsb_defaults_apply_to_what_a_file_leaves_out() -> None:
    # CoreWorkload's own defaults: 95 % read, 5 % update, uniform keys.
    w = from_sources([], [])
    assert w.options == {"mix": "read=0.95,update=0.05", "distribution": "uniform"}


def test_a_builtin_with_p_overrides_keeps_its_mix() -> None:
    w = from_sources([], ["recordcount=500"], base="ycsb-e")
    assert (w.workload, w.options) == ("ycsb-e", {"records": 500})


@pytest.mark.parametrize(("prop", "message"), [
    ("readproprtion=0.5", r"^-p: unknown YCSB property 'readproprtion' \(did you mean "
                          r"'readproportion'\?"),
    ("insertorder=ordered", r"^-p: insertorder=ordered: casslab-load supports only "
                            r"insertorder=hashed"),
    ("requestdistribution=exponential", r"requestdistribution=exponential: casslab-load "
                                        r"offers uniform, zipfian, latest, hotspot$"),
    ("recordcount=-3", r"^-p: recordcount=-3: must be an integer >= 1$"),
    ("operationcount=0", r"operationcount=0 \(run until stopped\)"),
    ("workload=site.ycsb.workloads.TimeSeriesWorkload", r"core workload only"),
    ("nokey", r"^-p nokey: expected key=value"),
])
def test_bad_properties_are_refused_in_one_line_naming_them(prop: str, message: str) -> None:
    with pytest.raises(PropertyError, match=message) as exc:
        from_sources([WORKLOADS / "workloada"], [prop])
    assert "\n" not in str(exc.value)


def test_settings_of_ycsb_itself_are_warned_about_not_refused() -> None:
    w = from_sources([WORKLOADS / "workloada"], ["exporter=site.ycsb.JSONExporter",
                                                 "measurementtype=hdrhistogram"])
    assert w.options == {}
    assert w.warnings == ("-p: exporter ignored (YCSB client/binding setting; casslab-load "
                          "has no equivalent)",)


def test_file_errors_name_the_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "mine"
    f.write_text("# a comment\nrecordcount = 10\nreadproportion: 1\\\n  .0\nbogus=1\n")
    props = parse_properties(f.read_text(), str(f))
    assert [(p.key, p.value, p.where) for p in props[:2]] == [
        ("recordcount", "10", f"{f}:2"), ("readproportion", "1.0", f"{f}:3")]
    with pytest.raises(PropertyError, match=rf"^{re.escape(str(f))}:5: unknown YCSB property"):
        from_sources([f], [])
    with pytest.raises(PropertyError, match=r"missing: cannot read this YCSB workload file"):
        from_sources([tmp_path / "missing"], [])


def test_builtin_tables_match_casslab_load_help() -> None:
    """The Python copies of the built-ins' mixes and defaults agree with casslab-load."""
    text = subprocess.run([find_binary(), "ycsb", "--help"], capture_output=True, text=True,
                          check=True).stdout
    described = dict(re.findall(r"^\s*- ([a-z]): (.*)$", text, re.M))
    assert set(described) == set(BUILTIN_MIXES)
    words = {"rmw": "read-modify-write"}
    for letter, mix in BUILTIN_MIXES.items():
        parts = [p.strip() for p in described[letter].split(",")]
        shares = {re.sub(r" \(.*", "", p.split(" % ")[1]): float(p.split(" % ")[0]) / 100
                  for p in parts if " % " in p}
        assert shares == {words.get(op, op): w for op, w in mix.items()}, letter
        assert parts[-1] == BUILTIN_DISTRIBUTION.get(letter, "zipfian"), letter
    flat = " ".join(text.split())
    for flag in ("records", "field-count", "field-length", "max-scan-length",
                 "zipfian-constant", "hotspot-data-fraction", "hotspot-opn-fraction"):
        m = re.search(rf"--{flag} <[A-Z_]+> .*?\[default: ([0-9.]+)\]", flat)
        assert m, flag
        assert float(m.group(1)) == CASSLAB_DEFAULTS[flag], flag


def test_hdr_file_output_becomes_casslab_loads_interval_log_under_the_same_prefix() -> None:
    w = from_sources([WORKLOADS / "workloada"],
                     ["hdrhistogram.fileoutput=true", "hdrhistogram.output.path=/tmp/run1-"])
    assert w.options == {"hdr-log": "/tmp/run1-ycsb.hdr"}
    assert w.warnings == ()
    assert from_sources([WORKLOADS / "workloada"],
                        ["hdrhistogram.fileoutput=false"]).options == {}
    with pytest.raises(PropertyError, match=r"hdrhistogram\.fileoutput=yes: expected true"):
        from_sources([], ["hdrhistogram.fileoutput=yes"])


def test_the_bindings_keyspace_is_honoured_as_keyspace() -> None:
    w = from_sources([WORKLOADS / "workloada"], ["cassandra.keyspace=bench"])
    assert w.warnings == () and w.options == {"keyspace": "bench"}
    assert "--keyspace" in _argv(w.workload, w.options)


def test_minscanlength_1_is_what_casslab_load_does_and_others_are_refused() -> None:
    assert from_sources([WORKLOADS / "workloade"], ["minscanlength=1"]).warnings == ()
    with pytest.raises(PropertyError, match=r"minscanlength=5: casslab-load supports only "
                       r"minscanlength=1"):
        from_sources([WORKLOADS / "workloade"], ["minscanlength=5"])


def test_insertcount_of_the_whole_range_needs_no_option() -> None:
    w = from_sources([WORKLOADS / "workloada"], ["recordcount=5000", "insertcount=5000"])
    assert w.warnings == () and w.options == {"records": 5000}


def test_insertstart_and_insertcount_split_a_load_into_casslab_loads_insert_range() -> None:
    # Two machines of a YCSB split load: each inserts its half of the 1000 key numbers.
    first = from_sources([WORKLOADS / "workloada"],
                         ["recordcount=1000", "insertstart=0", "insertcount=500"])
    second = from_sources([WORKLOADS / "workloada"],
                          ["recordcount=1000", "insertstart=500", "insertcount=500"])
    assert first.warnings == second.warnings == ()
    # recordcount=1000 is casslab-load's own --records: left out, as any default.
    assert first.options == {"insert-count": 500}
    assert second.options == {"insert-start": 500, "insert-count": 500}
    argv = _argv(second.workload, second.options | {"phase": "load"})
    assert argv[argv.index("--insert-start") + 1] == "500"
    assert "--insert-count" in _argv(first.workload, first.options)
    # Without recordcount among the properties the count goes through as given; the
    # options check it against --records (casslab's own --records wins over properties).
    w = from_sources([], ["insertstart=10", "insertcount=20"], base="ycsb-c")
    assert w.options == {"insert-start": 10, "insert-count": 20}
    # An empty value is YCSB's unset.
    assert from_sources([], ["insertstart=", "insertcount="], base="ycsb-c").options == {}


@pytest.mark.parametrize(("props", "message"), [
    (["recordcount=1000", "insertstart=600", "insertcount=500"],
     r"^-p: insertstart=600 \+ insertcount=500 is more than recordcount=1000 \(the load "
     r"inserts key numbers insertstart\.\.insertstart\+insertcount-1"),
    (["recordcount=1000", "insertstart=1000"],
     r"^-p: insertstart=1000 is not below recordcount=1000"),
    (["insertstart=-1"], r"^-p: insertstart=-1: must be an integer >= 0$"),
    (["insertcount=0"], r"^-p: insertcount=0: must be an integer >= 1$"),
    (["insertcount=half"], r"^-p: insertcount=half: must be an integer >= 1$"),
])
def test_an_insert_range_outside_the_records_is_refused_in_one_line(props: list[str],
                                                                    message: str) -> None:
    with pytest.raises(PropertyError, match=message) as exc:
        from_sources([WORKLOADS / "workloada"], props)
    assert "\n" not in str(exc.value)


def test_casslab_options_refuse_an_insert_range_beyond_records() -> None:
    w = from_sources([], ["insertstart=600", "insertcount=500"], base="ycsb-a")
    with pytest.raises(UsageError, match=r"^--insert-count: insert-start 600 \+ insert-count "
                       r"500 is more than records 1000 "):
        LoadSpec.of(w.workload, w.options, where="")
    assert LoadSpec.of(w.workload, w.options | {"records": 1100}, where="")


def test_operationcount_0_with_maxexecutiontime_runs_for_the_time_not_zero_operations() -> None:
    # YCSB's 0 is "no count": passed on as --ops 0, casslab-load would stop at once.
    w = from_sources([], ["maxexecutiontime=60", "operationcount=0"], base="ycsb-a")
    assert w.options == {"duration": "60s"}
    assert "--ops" not in _argv(w.workload, w.options)


def test_a_count_equal_to_casslab_loads_default_is_kept_beside_a_duration() -> None:
    # casslab-load's default count applies only without a duration: with one, a count
    # left out would make the run last the whole duration instead of whichever is first.
    w = from_sources([], ["maxexecutiontime=60", f"operationcount={CASSLAB_DEFAULTS['ops']}"],
                     base="ycsb-a")
    assert w.options == {"duration": "60s", "ops": CASSLAB_DEFAULTS["ops"]}


def test_hdrhistogram_percentiles_and_measurement_interval_are_honoured() -> None:
    w = from_sources([WORKLOADS / "workloada"], ["hdrhistogram.percentiles=50,99.9",
                                                 "measurement.interval=both"])
    assert w.warnings == ()
    assert w.options == {"percentiles": "50,99.9", "measurement-interval": "both"}
    argv = _argv(w.workload, w.options)
    assert argv[argv.index("--percentiles") + 1] == "50,99.9"
    assert argv[argv.index("--measurement-interval") + 1] == "both"


@pytest.mark.parametrize(("prop", "message"), [
    ("hdrhistogram.percentiles=95,abc", r"hdrhistogram\.percentiles=95,abc: expected "
                                        r"percentiles above 0 and at most 100"),
    ("hdrhistogram.percentiles=0,99", r"hdrhistogram\.percentiles=0,99: expected"),
    ("measurement.interval=wall", r"measurement\.interval=wall: expected op, intended or both"),
])
def test_bad_measurement_properties_are_refused_in_one_line(prop: str, message: str) -> None:
    with pytest.raises(PropertyError, match=message) as exc:
        from_sources([WORKLOADS / "workloada"], [prop])
    assert "\n" not in str(exc.value)
