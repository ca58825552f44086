from pathlib import Path

import pytest

from casslab.core.errors import CasslabError, UsageError
from casslab.load import LoadSpec, RunSummary
from casslab.load.runner import build_command, run_command, workload_args


def test_builtin_workload_names_map_to_subcommands() -> None:
    assert workload_args("ycsb-i") == ["ycsb", "--workload", "i"]
    assert workload_args("stress-mixed") == ["stress", "mixed"]
    assert workload_args("iot") == ["iot", "--reads", "study"]
    assert workload_args("iot-full-latest") == ["iot", "--reads", "full-latest"]


def test_a_profile_path_runs_the_user_subcommand(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("keyspace: k\n")
    assert workload_args(str(profile)) == ["user", "--profile", str(profile)]
    with pytest.raises(UsageError, match="does not exist"):
        workload_args(str(tmp_path / "missing.yaml"))


def test_unknown_workload_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown workload 'tpcc' \(valid: ycsb-a"):
        workload_args("tpcc")


def test_options_become_flags_and_json_output_is_forced() -> None:
    spec = LoadSpec.of("ycsb-a", {"ops": 100, "in_flight": 8, "rate": None, "drop": True,
                                  "no-retry": False}, ["--keyspace", "k"])
    cmd = build_command(spec, ["127.0.1.1:9042", "127.0.1.2:9042"], "/bin/casslab-load")
    assert cmd == ["/bin/casslab-load", "ycsb", "--workload", "a", "--hosts",
                   "127.0.1.1:9042,127.0.1.2:9042", "--ops", "100", "--in-flight", "8",
                   "--drop", "--keyspace", "k", "--format", "json"]


@pytest.mark.parametrize("hosts", [[], [""], ["127.0.1.1:9042", " "]])
def test_an_empty_contact_point_is_refused_before_casslab_load_runs(hosts: list[str]) -> None:
    with pytest.raises(CasslabError, match="no Cassandra node to run ycsb-a against"):
        build_command(LoadSpec.of("ycsb-a", {"ops": 1}), hosts, "/bin/casslab-load")


def test_spec_of_an_unknown_option_fails_before_anything_runs() -> None:
    with pytest.raises(UsageError, match=r"^options\.in-flite: unknown casslab-load option .*"
                       "did you mean 'in-flight'"):
        LoadSpec.of("ycsb-a", {"in-flite": 8})
    with pytest.raises(UsageError, match="unknown workload 'tpcc'"):
        LoadSpec.of("tpcc", {"ops": 1})


def test_summary_line_becomes_typed_values() -> None:
    pct = {"mean_us": 1.5, "p50_us": 1, "p95_us": 2, "p99_us": 3, "p999_us": 4, "max_us": 5,
           "min_us": 1}
    raw = {"type": "summary", "workload": "ycsb-a", "ended_by": "completed", "elapsed_s": 2.0,
           "ops": 10, "ops_s": 5.0, "errors": 1,
           "by_op": {"read": {"ops": 10, "ops_s": 5.0, "ok": 9, "not_found": 0, "errors": 1,
                              "retries": 2, "latency": pct, "service": pct,
                              "first_errors": ["timeout"]}}}
    s = RunSummary.from_json(raw)
    assert s.ops_s == 5.0 and s.by_op[0].latency.p99_us == 3
    assert s.by_op[0].first_errors == ("timeout",) and s.by_op[0].retries == 2
    assert s.overall is None  # a casslab-load without the `all` block
    assert s.clients is None  # nor the `concurrency` block
    threads = {**raw, "concurrency": {"mode": "threads", "clients": 450, "tasks": 1}}
    assert RunSummary.from_json(threads).clients == 450


def test_summary_all_block_becomes_the_overall_summary() -> None:
    def pct(us: int) -> dict[str, float]:
        return {"mean_us": us, "p50_us": us, "p95_us": us, "p99_us": us, "p999_us": us,
                "max_us": us}

    raw = {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": 1.0, "ops": 3,
           "ops_s": 3.0, "errors": 0,
           "by_op": {"read": {"ops": 2, "ops_s": 2.0, "errors": 0, "latency": pct(1000),
                              "service": pct(900)},
                     "update": {"ops": 1, "ops_s": 1.0, "errors": 0, "latency": pct(100000),
                                "service": pct(90000)}},
           "all": {"ops": 3, "ops_s": 3.0, "errors": 0, "latency": pct(1000),
                   "service": pct(900)}}
    s = RunSummary.from_json(raw)
    assert s.overall is not None
    assert (s.overall.name, s.overall.ops, s.overall.latency.p50_us) == ("ALL", 3, 1000)


def test_all_ops_is_the_merged_block_or_the_only_type_never_a_mix() -> None:
    from casslab.load.summary import RunSummary

    def pct(us: int) -> dict[str, int]:
        return {"mean_us": us, "p50_us": us, "p95_us": us, "p99_us": us, "p999_us": us,
                "max_us": us}

    def op(us: int, ops: int) -> dict[str, object]:
        return {"ops": ops, "ops_s": ops, "errors": 0, "latency": pct(us), "service": pct(us)}

    base = {"workload": "ycsb-a", "ended_by": "ops", "elapsed_s": 1.0, "ops": 10,
            "ops_s": 10.0, "errors": 0}
    two = RunSummary.from_json({**base, "by_op": {"read": op(1000, 5), "update": op(9000, 5)}})
    assert two.all_ops() is None
    merged = RunSummary.from_json({**base, "by_op": {"read": op(1000, 5),
                                                     "update": op(9000, 5)},
                                   "all": op(5000, 10)})
    got = merged.all_ops()
    assert got is not None and got.latency.p99_us == 5000
    one = RunSummary.from_json({**base, "by_op": {"read": op(1000, 10), "update": op(9, 0)}})
    got = one.all_ops()
    assert got is not None and got.name == "read"


def test_ycsb_status_lines_on_stderr_reach_on_status_and_the_report_on_text() -> None:
    # A stand-in process printing as casslab-load --format ycsb does: JSON lines and
    # YCSB's status lines on stderr, the report on stdout.
    summary = ('{"type": "summary", "workload": "ycsb-a", "ended_by": "completed", '
               '"elapsed_s": 1.0, "ops": 1, "ops_s": 1.0, "errors": 0, "by_op": {}}')
    script = ("echo '2026-11-27 02:00:00:000 1 sec: 1 operations; 1 current ops/sec;' >&2; "
              f"echo '{summary}' >&2; echo '[OVERALL], RunTime(ms), 1000'")
    text: list[str] = []
    status: list[str] = []
    result = run_command(["sh", "-c", script], text_format="ycsb", on_text=text.append,
                         on_status=status.append)
    assert result.summary.ops == 1
    assert text == ["[OVERALL], RunTime(ms), 1000\n"]
    assert [s.split(" sec:")[0] for s in status] == ["2026-11-27 02:00:00:000 1"]
