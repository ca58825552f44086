"""Several load clients: each client's command, the schema step, the merge of counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casslab.core.errors import UsageError
from casslab.load.multi import (
    ClientPlace,
    _run_all,
    client_command,
    copy_file,
    local_places,
    merged_intervals,
    merged_summary,
    prometheus_addr,
    schema_spec,
)
from casslab.load.runner import LoadError, LoadSpec
from casslab.load.summary import RunSummary


def _place(name: str) -> ClientPlace:
    return ClientPlace(name, ("ip", "netns", "exec", "ns1"), "/opt/casslab-load", "/tmp/w/",
                       copy_file)


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_each_client_gets_its_slice_log_and_the_shared_start() -> None:
    spec = LoadSpec.of("stress-write", {"ops": 1000, "rate": 300, "seed": 7, "drop": True})
    cmds = [client_command(spec, _place(f"c{i}"), i, 3, ["10.0.0.1:9042"], 1_700_000_000.25)
            for i in range(3)]
    for i, argv in enumerate(cmds):
        assert argv[:5] == ["ip", "netns", "exec", "ns1", "/opt/casslab-load"]
        assert _value(argv, "--client") == f"{i}/3"
        assert _value(argv, "--start-at") == "1700000000.25"
        assert _value(argv, "--hdr-log") == f"/tmp/w/c{i}.hlog"
        # Totals go to every client (casslab-load takes its share); one data seed.
        assert (_value(argv, "--ops"), _value(argv, "--rate"), _value(argv, "--seed")) == \
            ("1000", "300", "7")
        assert "--drop" not in argv


def test_a_user_profile_is_named_by_its_copy_where_the_client_runs(tmp_path: Path) -> None:
    profile = tmp_path / "kv.yaml"
    profile.write_text("keyspace: ks\n")
    place = ClientPlace("c", ("ssh", "h1"), "/opt/bin/casslab-load", "/opt/run", copy_file,
                        {str(profile.resolve()): "/opt/run/profiles/ab12-kv.yaml"})
    spec = LoadSpec.of(str(profile), {"ops": 10})
    argv = client_command(spec, place, 0, 2, ["10.0.0.1:9042"], 1_700_000_000.0)
    assert _value(argv, "--profile") == "/opt/run/profiles/ab12-kv.yaml"
    assert str(profile.resolve()) not in argv and argv[:2] == ["ssh", "h1"]


def test_the_schema_step_runs_no_operation_and_keeps_the_drop() -> None:
    spec = LoadSpec.of("ycsb-a", {"ops": 1000, "warmup": "5s", "drop": True, "records": 50})
    argv = schema_spec(spec).options.to_argv()
    assert _value(argv, "--ops") == "0" and _value(argv, "--phase") == "run"
    assert "--drop" in argv and "--warmup" not in argv and _value(argv, "--records") == "50"


def test_a_client_count_outside_1_to_64_is_one_line(tmp_path: Path) -> None:
    for k in (0, 65):
        with pytest.raises(UsageError, match=rf"^clients: {k} is not a client count "
                           r"\(valid: 1\.\.64\)$"):
            local_places(k, [], tmp_path, binary="casslab-load")
    assert [p.name for p in local_places(2, [], tmp_path, binary="x")] == ["client1",
                                                                            "client2"]


def test_a_failing_client_is_named_after_all_have_ended() -> None:
    # b fails at once; a later: the error is raised once a has ended, naming the first.
    slow = ["sh", "-c", "sleep 0.3; echo 'error: late' >&2; exit 2"]
    fast = ["sh", "-c", "echo 'error: boom' >&2; exit 3"]
    with pytest.raises(LoadError, match=r"^load client a \(1 of 2\): casslab-load exited 2 "
                       r"without a summary: late$"):
        _run_all([slow, fast], ["a", "b"])


def _client(ops: int, ok: int, errors: int, p99: int, ended: str = "completed"
            ) -> RunSummary:
    lat = {"mean_us": 1.0, "p50_us": 1, "p95_us": 1, "p99_us": p99, "p999_us": p99,
           "max_us": p99}
    op = {"ops": ops, "ops_s": ops / 10, "ok": ok, "not_found": 0, "errors": errors,
          "retries": 0, "latency": lat, "service": lat, "first_errors": ["x"] * errors}
    raw: dict[str, Any] = {
        "type": "summary", "workload": "stress-write", "seed": 1, "ended_by": ended,
        "elapsed_s": 10.0, "wall_s": 11.0, "ops": ops, "ops_s": ops / 10, "ok": ok,
        "not_found": 0, "errors": errors, "retries": 0, "by_op": {"write": op},
        "all": op, "stages": [{"name": "run", "ops": ops, "errors": errors,
                               "elapsed_s": 10.0, "recorded": True}],
        "concurrency": {"mode": "workers", "clients": 16, "tasks": 1}}
    return RunSummary.from_json(raw)


def test_the_summary_sums_counts_takes_merged_percentiles_and_keeps_each_client() -> None:
    lat = {"mean_us": 2.0, "p50_us": 2, "p95_us": 3, "p99_us": 500, "p999_us": 900,
           "max_us": 900}
    block = {"ops": 280, "latency": lat, "service": lat, "hist": {"latency": "h"}}
    merged = {"by_op": {"write": block}, "all": block, "logs": 2, "start_s": 5.0,
              "interval_s": 1.0, "intervals": 10, "ops": 280}
    clients = [_client(100, 100, 0, 300), _client(200, 180, 20, 700, "cluster_lost")]
    s = RunSummary.from_json(merged_summary(clients, merged))
    assert (s.ops, s.errors, s.ended_by, s.ops_s) == (300, 20, "cluster_lost", 30.0)
    assert s.by_op[0].ops == 300 and s.by_op[0].latency.p99_us == 500
    assert s.overall is not None and s.overall.latency.p99_us == 500
    assert s.raw["all"]["hist"] == {"latency": "h"}
    assert [c["ops"] for c in s.raw["clients"]] == [100, 200]
    assert s.raw["stages"][0]["ops"] == 300 and s.clients == 32


def test_intervals_get_the_clients_error_counts_of_their_time_slot() -> None:
    merged = {"start_s": 100.0, "interval_s": 1.0}
    lines = [{"type": "interval", "t_s": 1.0, "interval_s": 1.0, "ops": 10, "ops_s": 10.0,
              "by_op": {}}]
    # The second client started 0.4 s later: its first interval is still slot 0,
    # its second slot 1 (which only it has).
    a = [{"t_s": 1.0, "interval_s": 1.0, "errors": 1, "ok": 5, "stage": "run"}]
    b = [{"t_s": 1.0, "interval_s": 1.0, "errors": 2, "ok": 5, "stage": "run"},
         {"t_s": 2.0, "interval_s": 1.0, "errors": 4, "ok": 0, "stage": "run"},
         {"t_s": 2.5, "interval_s": 0.5, "errors": 0, "ok": 0, "recorded": False}]
    out = merged_intervals(lines, merged, [a, b], [100.0, 100.4])
    assert [(iv["t_s"], iv["errors"], iv["ops"], iv["stage"]) for iv in out] == \
        [(1.0, 3, 13, "run"), (2.0, 4, 4, "run")]


def test_a_log_already_where_the_controller_reads_it_is_not_copied(tmp_path: Path) -> None:
    log = tmp_path / "client1.hlog"
    log.write_text("#[StartTime: 1 (seconds since epoch)]\n")
    copy_file(str(log), log)  # the local lab: the client's workdir is the work dir
    other = tmp_path / "copy.hlog"
    copy_file(str(log), other)
    assert log.read_text() == other.read_text()


def test_parts_take_the_merged_logs_percentiles_and_the_clients_counts() -> None:
    lat = {"mean_us": 2.0, "p50_us": 2, "p95_us": 3, "p99_us": 500, "p999_us": 900,
           "max_us": 900}
    block = {"ops": 300, "latency": lat, "service": lat}
    part_lat = {**lat, "p99_us": 1234}
    merged = {"by_op": {"write": block}, "all": block, "logs": 2, "start_s": 5.0,
              "interval_s": 1.0, "intervals": 10, "ops": 300,
              "parts": {"read": {"ops": 30, "latency": part_lat, "service": part_lat}}}
    clients = [_client(100, 100, 0, 300), _client(200, 200, 0, 700)]
    for c, n in zip(clients, (10, 20), strict=True):
        c.raw["parts"] = {"read": {"ops": n, "ok": n - 1, "not_found": 1, "errors": 0,
                                   "retries": 0, "latency": lat, "service": lat}}
    parts = merged_summary(clients, merged)["parts"]
    assert list(parts) == ["read"]
    assert (parts["read"]["ops"], parts["read"]["ok"], parts["read"]["not_found"]) == \
        (30, 28, 2)
    assert parts["read"]["latency"]["p99_us"] == 1234, "the merged log's, never averaged"
    assert parts["read"]["ops_s"] == 3.0


def test_each_client_serves_prometheus_on_its_own_port() -> None:
    assert [prometheus_addr("127.0.0.1:9470", i) for i in range(3)] == [
        "127.0.0.1:9470", "127.0.0.1:9471", "127.0.0.1:9472"]
    assert prometheus_addr("[::1]:9470", 1) == "[::1]:9471"
    assert prometheus_addr("127.0.0.1:0", 5) == "127.0.0.1:0"  # any free port, each
    with pytest.raises(UsageError, match="give HOST:PORT"):
        prometheus_addr("9470", 1)
    with pytest.raises(UsageError, match="at most 65534"):
        prometheus_addr("h:65535", 1)


def test_a_prometheus_address_among_the_extra_arguments_moves_too() -> None:
    spec = LoadSpec.of("ycsb-a", {"ops": 10}, ["--prometheus", "127.0.0.1:9470",
                                                "--prometheus-linger", "2s"])
    cmd = client_command(spec, _place("client2"), 1, 2, ["127.0.0.1:9042"], 1e10)
    assert _value(cmd, "--prometheus") == "127.0.0.1:9471"
