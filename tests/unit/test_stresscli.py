"""cassandra-stress command lines translated to casslab-load arguments."""

from __future__ import annotations

import pytest

from casslab.load import LoadSpec
from casslab.load.runner import build_command
from casslab.load.stresscli import StressArgError, split_words, translate


def _argv(line: str | list[str]) -> tuple[list[str], tuple[str, ...]]:
    run = translate(line.split() if isinstance(line, str) else line)
    spec = LoadSpec.of(run.workload, run.options, where="")
    return build_command(spec, ["h:9042"], "casslab-load"), run.nodes


def test_a_test_plan_write_line_becomes_the_stress_write_command() -> None:
    argv, nodes = _argv("write n=1000000 cl=ONE -rate threads=50 -pop seq=1..1000000 "
                        "-node 10.0.0.5")
    assert argv == ["casslab-load", "stress", "write", "--hosts", "h:9042", "--cl-read", "ONE",
                    "--cl-write", "ONE", "--ops", "1000000", "--threads", "50",
                    "--pop", "seq(1..1000000)", "--format", "json"]
    assert nodes == ("10.0.0.5",)


def test_mixed_with_ratio_rate_population_columns_schema_mode_and_hdr_log() -> None:
    argv, _ = _argv(["mixed", "ratio(write=1,read=3)", "duration=10m", "cl=local_quorum",
                     "no-warmup", "-rate", "threads=20", "fixed=1000/s",
                     "-pop", "dist=GAUSSIAN(1..5000,5)", "-col", "size=FIXED(64) n=FIXED(5)",
                     "-schema", "replication(factor=3)", "keyspace=ks1",
                     "-mode", "native", "cql3", "-log", "hdrfile=run.hdr", "interval=5"])
    assert argv == ["casslab-load", "stress", "mixed", "--hosts", "h:9042",
                    "--cl-read", "LOCAL_QUORUM", "--cl-write", "LOCAL_QUORUM",
                    "--duration", "600s", "--threads", "20", "--rate", "1000",
                    "--mix", "write=1,read=3", "--interval", "5s", "--hdr-log", "run.hdr",
                    "--keyspace", "ks1", "--rf", "3", "--pop", "gaussian(1..5000,5)",
                    "--column-size", "64", "--format", "json"]


def test_err_and_interval_bounds_become_the_stop_on_convergence() -> None:
    argv, _ = _argv("write err<0.05 n>10 n<50 -rate threads=4")
    assert argv[2:] == ["write", "--hosts", "h:9042", "--threads", "4", "--converge", "0.05",
                        "--converge-min", "10", "--converge-max", "50", "--format", "json"]


def test_without_a_length_it_runs_as_cassandra_stress_does_until_2_percent() -> None:
    argv, _ = _argv("write -rate threads=4")
    assert argv[-8:-2] == ["--converge", "0.02", "--converge-min", "30", "--converge-max",
                           "200"]


def test_read_with_counts_in_short_form_and_throttle() -> None:
    argv, _ = _argv("read n=2m -rate throttle=500/s -pop dist=uniform(1..2000000)")
    assert argv[2:] == ["read", "--hosts", "h:9042", "--ops", "2000000", "--rate", "500",
                        "--pop", "uniform(1..2000000)", "--format", "json"]


def test_user_profile_with_ops_runs_the_user_subcommand(tmp_path: object) -> None:
    from pathlib import Path

    profile = Path(str(tmp_path)) / "p.yaml"
    profile.write_text("keyspace: k\n")
    argv, nodes = _argv(["user", f"profile={profile}", "ops(insert=1, latest=3)", "n=500",
                         "-node", "10.0.0.5,10.0.0.6:9043"])
    assert argv == ["casslab-load", "user", "--profile", str(profile.resolve()), "--hosts",
                    "h:9042", "--ops", "500", "--mix", "insert=1,latest=3", "--format", "json"]
    assert nodes == ("10.0.0.5", "10.0.0.6:9043")


def test_quoted_groups_split_into_words_but_parentheses_keep_theirs() -> None:
    assert split_words(["size=FIXED(34) n=FIXED(5)", "ops(a=1, b=2)"]) == [
        "size=FIXED(34)", "n=FIXED(5)", "ops(a=1, b=2)"]


@pytest.mark.parametrize(("line", "message"), [
    ("counter_write n=10", r"^cassandra-stress command: got 'counter_write'; supported: "
                           r"write, read, mixed, user$"),
    ("write n=10 -port native=9043", r"^cassandra-stress option -port: not supported "
                                     r"\(supported: -rate, -pop"),
    ("write n=ten", r"^n=ten: expected a count like 1000000 or 1m$"),
    ("write err<2", r"^err<2: expected a fraction of the mean like err<0\.02 \(> 0 and < 1\)$"),
    ("write n=100 err<0.02", r"^n= and err</n>/n<: give one"),
    ("write n>x", r"^n>x: expected a whole number >= 2$"),
    ("write duration=5d", r"^duration=5d: expected a duration like 30s, 10m or 2h$"),
    ("write n=10 -rate threads>=4", r"^-rate threads>=4: not supported \(supported: "
                                    r"threads=N, fixed=N/s, throttle=N/s\)$"),
    ("write -pop dist=EXP(1..10)", r"^-pop dist=EXP\(1..10\): not supported"),
    ("write -pop seq=10..1", r"^-pop seq=10..1: expected a range A..B with A <= B$"),
    ("write -col n=FIXED(3)", r"^-col n=FIXED\(3\): not supported"),
    ("write -schema replication(strategy=NetworkTopologyStrategy,dc1=3)",
     r"^-schema replication\(.*\): strategy=NetworkTopologyStrategy not supported"),
    ("write -mode thrift", r"^-mode thrift: not supported"),
    ("write -log level=verbose", r"^-log level=verbose: not supported"),
    ("write n=10 duration=30s", r"^n= and duration=: give one"),
    ("write clustering=FIXED(1)", r"^cassandra-stress write option clustering=FIXED\(1\): "
                                  r"not supported"),
    ("user n=10", r"^cassandra-stress user: profile=FILE.yaml is required$"),
    ("read ratio(write=1)", r"^cassandra-stress read option ratio\(write=1\): not supported"),
    ("write -rate", r"^-rate: needs a value"),
])
def test_unsupported_or_malformed_arguments_are_refused_by_name(line: str,
                                                                message: str) -> None:
    with pytest.raises(StressArgError, match=message) as exc:
        translate(line.split())
    assert "\n" not in str(exc.value)
