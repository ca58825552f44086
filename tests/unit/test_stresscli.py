"""cassandra-stress command lines translated to casslab-load arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.load import LoadSpec
from casslab.load.runner import build_command
from casslab.load.stresscli import StressArgError, ThreadSteps, split_words, translate


def _argv(line: str | list[str]) -> tuple[list[str], tuple[str, ...]]:
    run = translate(line.split() if isinstance(line, str) else line)
    spec = LoadSpec.of(run.workload, run.options, where="")
    return build_command(spec, ["h:9042"], "casslab-load"), run.nodes


def test_a_test_plan_write_line_becomes_the_stress_write_command() -> None:
    argv, nodes = _argv("write n=1000000 cl=ONE -rate threads=50 -pop seq=1..1000000 "
                        "-node 10.0.0.5")
    assert argv == ["casslab-load", "stress", "write", "--hosts", "h:9042", "--cl-read", "ONE",
                    "--cl-write", "ONE", "--error-retries", "9", "--ops", "1000000",
                    "--threads", "50",
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
                    "--error-retries", "9", "--duration", "600s", "--threads", "20",
                    "--rate", "1000",
                    "--mix", "write=1,read=3", "--interval", "5s", "--hdr-log", "run.hdr",
                    "--keyspace", "ks1", "--rf", "3", "--pop", "gaussian(1..5000,5)",
                    "--column-size", "64", "--format", "json"]


def test_drawn_column_sizes_and_counts_go_to_casslab_load_as_distributions() -> None:
    argv, _ = _argv("write n=10 -col size=UNIFORM(10..100) n=GAUSS(2..8,4) -rate threads=4")
    assert argv[argv.index("--column-size-dist") + 1] == "uniform(10..100)"
    assert argv[argv.index("--columns") + 1] == "gaussian(2..8,4)"
    assert "--column-size" not in argv
    argv, _ = _argv("write n=10 -col n=FIXED(8) -rate threads=4")
    assert argv[argv.index("--columns") + 1] == "fixed(8)"


def test_err_and_interval_bounds_become_the_stop_on_convergence() -> None:
    argv, _ = _argv("write err<0.05 n>10 n<50 -rate threads=4")
    assert argv[2:] == ["write", "--hosts", "h:9042", "--error-retries", "9", "--threads", "4",
                        "--converge", "0.05",
                        "--converge-min", "10", "--converge-max", "50", "--format", "json"]


def test_without_a_length_it_runs_as_cassandra_stress_does_until_2_percent() -> None:
    argv, _ = _argv("write -rate threads=4")
    assert argv[-8:-2] == ["--converge", "0.02", "--converge-min", "30", "--converge-max",
                           "200"]


def test_read_with_counts_in_short_form_and_throttle() -> None:
    argv, _ = _argv("read n=2m -rate threads=10 throttle=500/s -pop dist=uniform(1..2000000)")
    assert argv[2:] == ["read", "--hosts", "h:9042", "--error-retries", "9", "--ops", "2000000",
                        "--threads", "10", "--rate", "500",
                        "--pop", "uniform(1..2000000)", "--format", "json"]


def test_user_profile_with_ops_runs_the_user_subcommand(tmp_path: object) -> None:
    from pathlib import Path

    profile = Path(str(tmp_path)) / "p.yaml"
    profile.write_text("keyspace: k\n")
    argv, nodes = _argv(["user", f"profile={profile}", "ops(insert=1, latest=3)", "n=500",
                         "-node", "10.0.0.5,10.0.0.6:9043"])
    assert argv == ["casslab-load", "user", "--profile", str(profile.resolve()), "--hosts",
                    "h:9042", "--error-retries", "9", "--ops", "500", "--mix",
                    "insert=1,latest=3", "--format", "json"]
    assert nodes == ("10.0.0.5", "10.0.0.6:9043")


def test_quoted_groups_split_into_words_but_parentheses_keep_theirs() -> None:
    assert split_words(["size=FIXED(34) n=FIXED(5)", "ops(a=1, b=2)"]) == [
        "size=FIXED(34)", "n=FIXED(5)", "ops(a=1, b=2)"]


@pytest.mark.parametrize(("line", "message"), [
    ("counter_write n=10", r"^cassandra-stress command: got 'counter_write'; supported: "
                           r"write, read, mixed, user$"),
    ("write n=10 -transport truststore=x", r"^cassandra-stress option -transport: not "
                                           r"supported \(supported: -rate, -pop"),
    ("write n=10 -port jmx=7199", r"^-port jmx=7199: not supported \(supported: native=N"),
    ("write n=ten", r"^n=ten: expected a count like 1000000 or 1m$"),
    ("write err<2", r"^err<2: expected a fraction of the mean like err<0\.02 \(> 0 and < 1\)$"),
    ("write n=100 err<0.02", r"^n= and err</n>/n<: give one"),
    ("write n>x", r"^n>x: expected a whole number >= 2$"),
    ("write duration=5d", r"^duration=5d: expected a duration like 30s, 10m or 2h$"),
    ("write n=10 -rate threads>=4 threads=5", r"^-rate threads= and threads>=/threads<=/auto: "
                                              r"give one"),
    ("write n=10 -rate fixed=100/s", r"^-rate fixed=: needs threads=N as well"),
    ("write n=10 -rate threads>=40 threads<=20", r"^-rate threads>=40 threads<=20: the least "
                                                 r"is more than the most$"),
    ("write n=10 -col size=EXP(1..10)", r"^-col size=EXP\(1..10\): expected FIXED\(N\), "
                                       r"UNIFORM\(A..B\) or GAUSSIAN\(A..B\[,STDVRNG\]\) "
                                       r"\(casslab-load cannot draw EXP\)$"),
    ("write n=10 -col n=UNIFORM(1..65)", r"^-col n=UNIFORM\(1..65\): at most 64 columns$"),
    ("write n=10 -col size=FIXED(2000000)", r"^-col size=FIXED\(2000000\): at most 1048576 "
                                           r"bytes per column$"),
    ("write n=10 -col n=UNIFORM(1..5,2)", r"only GAUSSIAN takes a STDVRNG"),
    ("write n=10 -insert batchtype=UNLOGGED", r"^-insert batchtype=UNLOGGED: cassandra-stress "
                                             r"applies -insert to user profiles only"),
    ("write n=10 -mode unprepared", r"^-mode unprepared: not supported \(casslab-load always "
                                    r"prepares"),
    ("write n=10 -mode user=u", r"^-mode user= password=: give both"),
    ("write n=10 -graph title=x", r"^-graph: file=FILE.html is required$"),
    ("write n=10 -errors retries=x", r"^-errors retries=x: expected a whole number >= 0$"),
    ("write n=10 -schema replication(strategy=NetworkTopologyStrategy)",
     r"^-schema replication\(strategy=NetworkTopologyStrategy\): name a datacenter"),
    ("write n=10 -schema compaction(strategy=Nope)", r"^-schema compaction\(strategy=Nope\): "
                                                     r"strategy=Nope: give one of"),
    ("write -pop dist=EXP(1..10)", r"^-pop dist=EXP\(1..10\): not supported"),
    ("write -pop seq=10..1", r"^-pop seq=10..1: expected a range A..B with A <= B$"),
    ("write -col width=FIXED(3)", r"^-col width=FIXED\(3\): not supported"),
    ("write -schema replication(strategy=OldNetworkTopologyStrategy,dc1=3)",
     r"^-schema replication\(.*\): strategy OldNetworkTopologyStrategy not supported"),
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


def test_defaults_are_cassandra_stress_s_write_n_gets_200_threads_others_step() -> None:
    write = translate(["write", "n=100000"])
    assert write.options["threads"] == 200 and write.steps is None
    for line in (["mixed", "duration=30s"], ["read", "n=1000"], ["write", "duration=1m"]):
        run = translate(line)
        assert "threads" not in run.options
        assert run.steps == ThreadSteps(4, 1000, auto=True)


def test_mixed_defaults_to_one_write_per_read_and_every_command_to_nine_retries() -> None:
    run = translate(["mixed", "n=10", "-rate", "threads=4"])
    assert run.options["mix"] == "write=1,read=1"
    assert run.options["error-retries"] == 9 and not run.ignore_errors
    run = translate(["write", "n=10", "-errors", "ignore", "retries=2"])
    assert run.options["error-retries"] == 2 and run.ignore_errors


def test_warmup_is_a_quarter_of_n_at_most_50000_per_node_and_operation_type() -> None:
    assert translate(["write", "n=1000"]).warmup_ops(1) == 250
    assert translate(["write", "n=1000000"]).warmup_ops(3) == 150_000
    assert translate(["mixed", "duration=10s"]).warmup_ops(1) == 100_000
    assert translate(["write", "n=1000", "no-warmup"]).warmup_ops(1) == 0


def test_rate_ranges_step_and_fixed_differs_from_throttle_only_in_the_latency_shown() -> None:
    run = translate(["read", "n=10", "-rate", "threads>=8", "threads<=100"])
    assert run.steps == ThreadSteps(8, 100, auto=False)
    assert translate(["read", "n=10", "-rate", "auto"]).steps == ThreadSteps(4, 1000, True)
    fixed = translate(["read", "n=10", "-rate", "threads=4", "fixed=100/s"])
    throttle = translate(["read", "n=10", "-rate", "threads=4", "throttle=100/s"])
    assert fixed.options == throttle.options and fixed.fixed and not throttle.fixed


def test_pasted_schema_mode_port_log_graph_and_insert_lines_translate(tmp_path: Path) -> None:
    argv, _ = _argv(["write", "n=10", "-schema",
                     "replication(strategy=NetworkTopologyStrategy,dc1=3)",
                     "compaction(strategy=LeveledCompactionStrategy,sstable_size_in_mb=64)"])
    assert argv[argv.index("--replication") + 1] == \
        "{'class': 'NetworkTopologyStrategy', 'dc1': 3}"
    assert argv[argv.index("--compaction") + 1] == \
        "{'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '64'}"
    run = translate(["write", "n=10", "-mode", "native", "cql3", "user=cassandra",
                     "password=secret", "-port", "native=9043", "-log", "file=out.log",
                     "-graph", "file=g.html", "title=T", "-node", "10.0.0.5"])
    assert run.credentials == ("cassandra", "secret") and run.port == 9043
    assert run.log_file == "out.log" and run.graph is not None and run.graph.title == "T"
    profile = tmp_path / "p.yaml"
    profile.write_text("keyspace: k\n")
    argv, _ = _argv(["user", f"profile={profile}", "n=5", "-insert", "batchtype=unlogged"])
    assert argv[argv.index("--batchtype") + 1] == "UNLOGGED"
