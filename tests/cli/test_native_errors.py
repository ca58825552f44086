"""casslab-load and casslab-netem: a user error is one line `error: ...`, exit 2 for the
command line and 1 for a failure, never a backtrace (even with RUST_BACKTRACE=1); the
`casslab run` wrapper passes the line on once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

RELEASE = Path(__file__).resolve().parents[2] / "target" / "release"
LOAD = RELEASE / "casslab-load"
NETEM = RELEASE / "casslab-netem"
pytestmark = pytest.mark.skipif(not (LOAD.exists() and NETEM.exists()),
                                reason="build the Rust binaries first (make rust)")


def native(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RUST_BACKTRACE="1")
    return subprocess.run([str(binary), *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


def only_line(res: subprocess.CompletedProcess[str]) -> str:
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert "backtrace" not in res.stderr and "Caused by" not in res.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--ops", "-1"], "-1 is negative: give a whole number >= 0"),
        (["--duration", "-5s"], "-5s is negative"),
        (["--warmup", "-10s"], "-10s is negative"),
        (["--bogus"], "unexpected argument '--bogus'"),
        (["--ops", "ten"], "invalid value 'ten' for '--ops <OPS>'"),
    ],
)
def test_load_command_line_errors_are_one_line(args: list[str], expected: str) -> None:
    res = native(LOAD, "ycsb", "--workload", "a", "--hosts", "127.0.0.1:1", *args)
    assert res.returncode == 2
    assert expected in only_line(res)
    assert res.stdout == ""


# Every clap error kind on both binaries: the one line keeps what clap puts on its
# further lines (the missing argument, the possible values, the valid subcommands).
CLAP_KINDS = [
    # missing required argument
    (LOAD, ["ycsb"], "the following required arguments were not provided: "
     "--workload <WORKLOAD>"),
    (NETEM, ["run"], "the following required arguments were not provided: --config <CONFIG>"),
    (NETEM, ["check-config"], "not provided: --config <CONFIG>"),
    # invalid value of a choice
    (LOAD, ["ycsb", "--workload", "z"], "invalid value 'z' for '--workload <WORKLOAD>' "
     "[possible values: a, b, c, d, e, f, i]"),
    (LOAD, ["stress", "scan"], "invalid value 'scan' for '<MODE>' "
     "[possible values: write, read, mixed]"),
    (LOAD, ["iot", "--reads", "all"], "[possible values: study, full-latest]"),
    # value validation
    (NETEM, ["run", "--config", "x", "--queue-num", "70000"],
     "invalid value '70000' for '--queue-num <QUEUE_NUM>': 70000 is not in 0..=65535"),
    # unknown argument, with clap's tip when it has one
    (LOAD, ["ycsb", "-w", "a", "--record", "5"], "unexpected argument '--record' found; "
     "tip: a similar argument exists: '--records'"),
    (NETEM, ["run", "--config", "x", "--bogus"], "unexpected argument '--bogus' found"),
    # invalid and missing subcommand
    (LOAD, ["nosuch"], "unrecognized subcommand 'nosuch'; valid subcommands: ycsb, stress, "
     "iot, user, merge or options"),
    (NETEM, ["start"], "unrecognized subcommand 'start'; valid subcommands: run or "
     "check-config"),
    (LOAD, [], "a subcommand is required: ycsb, stress, iot, user, merge or options"),
    (NETEM, [], "a subcommand is required: run or check-config"),
    # conflicts and requirements between arguments
    (LOAD, ["stress", "write", "--threads", "5", "--workers", "2"],
     "the argument '--threads <THREADS>' cannot be used with '--workers <WORKERS>'"),
    (LOAD, ["stress", "write", "--think-time", "1ms"],
     "the following required arguments were not provided: --threads <THREADS>"),
    # a value missing after its option
    (NETEM, ["run", "--config"], "a value is required for '--config <CONFIG>' but none was "
     "supplied"),
]


@pytest.mark.parametrize(("binary", "args", "expected"), CLAP_KINDS,
                         ids=[f"{b.name}-{'-'.join(a) or 'bare'}" for b, a, _ in CLAP_KINDS])
def test_every_clap_error_kind_keeps_its_details_on_one_line(
        binary: Path, args: list[str], expected: str) -> None:
    res = native(binary, *args)
    assert res.returncode == 2 and res.stdout == ""
    line = only_line(res)
    assert line == f"error: {expected} (see --help)" or (
        expected in line and line.endswith(" (see --help)")), line


# Every numeric option of casslab-load with a range is checked while the command line is
# parsed: refused in one line naming the option and the range, exit 2, before any
# connection (the contact point 127.0.0.1:1 would otherwise fail as "cannot connect").
LOAD_RANGES = [
    (["ycsb", "-w", "a", "--records", "0"], "--records <RECORDS>': must be an integer >= 1"),
    (["iot", "--devices", "0"], "--devices <DEVICES>': must be an integer >= 1"),
    (["iot", "--series", "6"], "--series <SERIES>': must be an integer in 1..=5"),
    (["iot", "--values-per-insert", "0"], "must be an integer in 1..=10000"),
    (["iot", "--table-ttl-s", "-1"], "--table-ttl-s <TABLE_TTL_S>': must be an integer in "
     "0..=630720000"),
    (["stress", "write", "--records", "0"], "--records <RECORDS>': must be an integer >= 1"),
    (["stress", "write", "--column-size", "0"], "must be an integer in 1..=1048576"),
    (["user", "--profile", "p.yaml", "--records", "0"], "must be an integer >= 1"),
    (["user", "--profile", "p.yaml", "--rf", "0"], "--rf <RF>': must be an integer in "
     "1..=4294967295"),
    (["ycsb", "-w", "a", "--field-count", "33"], "must be an integer in 1..=32"),
    (["ycsb", "-w", "a", "--field-length", "2000000"], "must be an integer in 0..=1048576"),
    (["ycsb", "-w", "a", "--max-scan-length", "0"], "must be an integer >= 1"),
    (["ycsb", "-w", "a", "--zipfian-constant", "1"], "must be a number > 0 and < 1"),
    (["ycsb", "-w", "a", "--hotspot-data-fraction", "1.5"], "must be a number >= 0 and <= 1"),
    (["ycsb", "-w", "a", "--hotspot-opn-fraction", "-0.1"], "must be a number >= 0 and <= 1"),
    (["ycsb", "-w", "a", "--rf", "0"], "must be an integer in 1..=4294967295"),
    (["ycsb", "-w", "a", "--workers", "0"], "--workers <WORKERS>': must be an integer >= 1"),
    (["ycsb", "-w", "a", "--in-flight", "0"], "must be an integer >= 1"),
    (["ycsb", "-w", "a", "--threads", "0"], "must be an integer in 1..=32768"),
    (["ycsb", "-w", "a", "--io-threads", "0"], "must be an integer in 1..=1024"),
    (["ycsb", "-w", "a", "--error-retries", "-1"], "must be an integer in 0..=4294967295"),
    (["ycsb", "-w", "a", "--ttl-s", "-5"], "--ttl-s <TTL_S>': must be an integer in "
     "0..=630720000"),
    (["ycsb", "-w", "a", "--seed", "x"], "--seed <SEED>': must be an integer >= 0"),
    (["ycsb", "-w", "a", "--rate", "0"], "--rate <RATE>': must be a number > 0"),
    (["ycsb", "-w", "a", "--converge", "1"], "must be a number > 0 and < 1"),
    (["ycsb", "-w", "a", "--converge", "0.1", "--converge-min", "1"],
     "must be an integer >= 2"),
    (["ycsb", "-w", "a", "--converge", "0.1", "--converge-max", "1"],
     "must be an integer >= 2"),
    (["ycsb", "-w", "a", "--start-at", "-1"], "must be a number > 0"),
    (["ycsb", "-w", "a", "--timeout", "0s"], "--timeout <TIMEOUT>': must be a duration > 0"),
    (["ycsb", "-w", "a", "--duration", "0s"], "must be a duration > 0"),
    (["ycsb", "-w", "a", "--tick", "2s"], "must be a duration >= 1ms and <= 1s"),
    (["ycsb", "-w", "a", "--interval", "1ms"], "must be a duration >= 10ms"),
    (["ycsb", "-w", "a", "--unreachable-after", "0s"], "must be a duration > 0"),
    (["ycsb", "-w", "a", "--insert-start", "-1"], "--insert-start <INSERT_START>': must be an "
     "integer >= 0"),
    (["ycsb", "-w", "a", "--insert-count", "0"], "--insert-count <INSERT_COUNT>': must be an "
     "integer >= 1"),
]


@pytest.mark.parametrize(("args", "expected"), LOAD_RANGES,
                         ids=[" ".join(a) for a, _ in LOAD_RANGES])
def test_load_numeric_ranges_are_checked_before_connecting(
        args: list[str], expected: str) -> None:
    res = native(LOAD, *args, "--hosts", "127.0.0.1:1")
    assert res.returncode == 2 and res.stdout == ""
    line = only_line(res)
    assert line.startswith("error: invalid value ") and expected in line, line
    assert "connect" not in line


def test_load_option_values_checked_in_the_workload_also_come_before_connecting(
        tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("keyspace: k\ntable: t\n")
    for args, expected in (
            (["iot", "--compaction", "twcs:0:DAYS"], "--compaction: window size \"0\""),
            (["user", "--profile", str(profile), "--pop", "exp(1..10)"], "exp(1..10)"),
            (["ycsb", "-w", "a", "--records", "10", "--insert-start", "5", "--insert-count",
              "6"], "--insert-start 5 + --insert-count 6 is more than --records 10")):
        res = native(LOAD, *args, "--hosts", "127.0.0.1:1", "--timeout", "1s")
        assert res.returncode == 2, res.stderr
        line = only_line(res)
        assert expected in line and "connect" not in line, line


def test_netem_config_errors_name_the_field(tmp_path: Path) -> None:
    config = tmp_path / "links.json"
    config.write_text('{"links": [{"mark": 1}, {"mark": 2, "delay_us": -5}]}')
    res = native(NETEM, "check-config", "--config", str(config))
    assert res.returncode == 1
    assert only_line(res) == (f"error: link config {config} is not valid JSON for "
                              "casslab-netem: links[1].delay_us: invalid value: integer `-5`, "
                              "expected u64 at line 1 column 50")


def test_load_stages_errors_name_the_field(tmp_path: Path) -> None:
    stages = tmp_path / "stages.yaml"
    stages.write_text("stages:\n  - {ops: 10}\n  - {ops: -5}\n")
    res = native(LOAD, "ycsb", "-w", "a", "--stages", str(stages), "--hosts", "127.0.0.1:1")
    assert res.returncode == 2
    line = only_line(res)
    expected = f"stages file {stages}: stages[1].ops: invalid type: integer `-5`, expected u64"
    assert expected in line, line


def test_load_profile_errors_name_the_field(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("keyspace: k\ntable: t\ninsert:\n  partitions: 5\n")
    res = native(LOAD, "user", "--profile", str(profile), "--hosts", "127.0.0.1:1")
    assert res.returncode == 2
    assert f"profile {profile}: insert.partitions must be a string" in only_line(res)


def test_load_help_is_still_help() -> None:
    res = native(LOAD, "ycsb", "--help")
    assert res.returncode == 0 and "--ops" in res.stdout


def test_netem_failure_says_its_cause_once(tmp_path: Path) -> None:
    missing = tmp_path / "links.json"
    res = native(NETEM, "check-config", "--config", str(missing))
    assert res.returncode == 1
    line = only_line(res)
    assert line.startswith(f"error: cannot read link config {missing}: ")
    assert line.count("No such file or directory") == 1


def test_netem_bad_json_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "links.json"
    bad.write_text("{")
    res = native(NETEM, "check-config", "--config", str(bad))
    assert res.returncode == 1
    assert f"link config {bad} is not valid JSON" in only_line(res)


def test_casslab_run_names_a_negative_ops() -> None:
    res = casslab("run", "ycsb-a", "--ops", "-1", "--hosts", "127.0.0.1")
    assert res.returncode == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and res.stdout == "", res.stderr + res.stdout
    assert lines[0].count("error:") == 1
    assert "--ops: -1" in lines[0]
