"""`casslab stress` as cassandra-stress on a real 1-node lab: its defaults, its output
(`--format cassandra-stress`, read back as the common c-s parsers read it) and the
command lines people paste from c-s runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from casslab.lab import Lab

from conftest import LAB1
from csparse import parse_results, parse_rows
from labtools import casslab

pytestmark = pytest.mark.integration
PROFILE = Path(__file__).resolve().parents[2] / "crates" / "load" / "profiles" / \
    "sensor-readings.yaml"


def _one(lab: Lab, cql: str) -> object:
    with lab.cql() as c:
        return c.execute(cql, timeout_s=30).rows[0][0]


def test_a_pasted_write_line_runs_with_c_s_defaults_and_prints_c_s_output(
        lab1: Lab, tmp_path: Path) -> None:
    dc = str(_one(lab1, "SELECT data_center FROM system.local"))
    log, graph = tmp_path / "write.log", tmp_path / "write.html"
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", "write", "n=2000",
                  "cl=ONE", "-schema", f"replication(strategy=NetworkTopologyStrategy,{dc}=1)",
                  "compaction(strategy=LeveledCompactionStrategy)", "keyspace=it_cs_nts",
                  "-mode", "native", "cql3", "user=cassandra", "password=cassandra",
                  "-port", "native=9042", "-errors", "retries=3", "-log", f"file={log}",
                  "-graph", f"file={graph}", "revision=first")
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    out = res.stdout
    # c-s's defaults for write with n=: a warm-up of a quarter of n, then 200 threads.
    assert "Warming up WRITE with 500 iterations...\n" in out
    assert "Running WRITE with 200 threads for 2000 iteration\n" in out
    got = parse_results(out)
    assert got["Total partitions"] == 2000 and got["Total errors"] == 0
    assert got["op rate"] > 0 and got["latency median"] <= got["latency max"]
    assert out.endswith("\nEND\n")
    rows = parse_rows(out)
    assert rows and rows[-1]["type"] == "total" and rows[-1]["total ops"] == "2000"
    assert log.read_text() == out  # -log file= holds what c-s printed
    page = graph.read_text()
    assert page.startswith("<!doctype html>") and "first" in page and "<svg" in page
    # The keyspace and table as the -schema line asked.
    repl = _one(lab1, "SELECT replication FROM system_schema.keyspaces "
                      "WHERE keyspace_name = 'it_cs_nts'")
    # (the lab's CQL helper gives maps as their text)
    assert ".NetworkTopologyStrategy'" in str(repl) and f"'{dc}': '1'" in str(repl), repl
    comp = _one(lab1, "SELECT compaction FROM system_schema.tables WHERE keyspace_name = "
                      "'it_cs_nts' AND table_name = 'standard1'")
    assert ".LeveledCompactionStrategy'" in str(comp), comp
    assert _one(lab1, "SELECT count(*) FROM it_cs_nts.standard1") == 2000


def test_mixed_steps_thread_counts_with_a_summary_per_step(lab1: Lab) -> None:
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", "mixed",
                  "duration=3s", "no-warmup", "-pop", "dist=uniform(1..2000)",
                  "-schema", "keyspace=it_cs_nts", "-rate", "threads>=4", "threads<=8",
                  timeout_s=120)
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    out = res.stdout
    assert out.count("Results:\n") == 2
    assert "Running with 4 threadCount\n" in out and "Running with 8 threadCount\n" in out
    assert "Running [WRITE, READ] with 8 threads 3 seconds\n" in out
    assert "Sleeping for 15s\n" in out  # c-s pauses between steps of a writing command
    assert re.search(r"^Improvement over 4 threadCount: -?\d+%$", out, re.M)
    # Each step's Results block reads back; c-s's default ratio is 1 write per read.
    first = out[:out.index("Sleeping for 15s")]
    got = parse_results(first)
    assert got["Total errors"] == 0 and got["Total operation time"] in (3, 4)
    per_op = re.search(r"^Total partitions *: *[\d,]+ \[READ: ([\d,]+), WRITE: ([\d,]+)\]$",
                       first, re.M)
    assert per_op, first
    reads, writes = (int(x.replace(",", "")) for x in per_op.groups())
    assert 0.7 < reads / writes < 1.4
    table = [ln for ln in out.splitlines() if ln.endswith(tuple("0123456789")) and
             ln.startswith(("4 threadCount, ", "8 threadCount, "))]
    assert [ln.split(",")[1].strip() for ln in table] == ["READ", "WRITE", "total"] * 2
    assert out.endswith("\nEND\n")


def test_a_failed_operation_ends_the_run_unless_errors_are_ignored(lab1: Lab) -> None:
    # CL TWO on one node: every read is unavailable.
    line = ["read", "n=300", "cl=TWO", "no-warmup", "-schema", "keyspace=it_cs_nts",
            "-rate", "threads=4"]
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", *line,
                  "-errors", "retries=1")
    assert res.returncode == 1
    assert re.search(r"^Operation x2 failed: .*Cannot achieve consistency level TWO", res.stdout,
                     re.M), res.stdout[-1500:]
    assert res.stdout.endswith("\nFAILURE\n") and "Results:" not in res.stdout
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", *line,
                  "-errors", "retries=0", "ignore")
    assert res.returncode == 0, res.stderr
    got = parse_results(res.stdout)
    assert got["Total errors"] == 300 and got["Total partitions"] == 300


def test_a_user_profile_runs_with_the_batch_type_of_the_command_line(lab1: Lab) -> None:
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", "user",
                  f"profile={PROFILE}", "ops(insert=1)", "n=200", "no-warmup",
                  "-insert", "batchtype=UNLOGGED", "-rate", "threads=4")
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    got = parse_results(res.stdout)
    assert got["Total partitions"] == 200 and got["Total errors"] == 0
    assert "[insert: 200]" in res.stdout


def test_pasted_col_sizes_and_counts_are_drawn_per_row(lab1: Lab) -> None:
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", "write", "n=300",
                  "no-warmup", "-col", "size=UNIFORM(10..100)", "n=UNIFORM(2..8)",
                  "-schema", "keyspace=it_cs_col", "-rate", "threads=4")
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    assert parse_results(res.stdout)["Total errors"] == 0
    cols = [f'"C{i}"' for i in range(8)]
    with lab1.cql() as c:
        rows = c.execute(f"SELECT {', '.join(cols)} FROM it_cs_col.standard1",
                         timeout_s=30).rows
    assert len(rows) == 300
    # (the lab's CQL helper gives a blob as 0x and its hex digits)
    counts = [sum(v is not None for v in r) for r in rows]
    sizes = [(len(str(v)) - 2) // 2 for r in rows for v in r if v is not None]
    assert set(counts) == set(range(2, 9)), sorted(set(counts))
    # Each row fills its first N columns.
    assert all(all(v is not None for v in r[:n]) for r, n in zip(rows, counts, strict=True))
    assert min(sizes) >= 10 and max(sizes) <= 100 and len(set(sizes)) > 50


@pytest.mark.parametrize(("words", "message"), [
    (["-col", "size=EXP(10..100)"], "-col size=EXP(10..100): expected FIXED(N), UNIFORM(A..B) "
                                    "or GAUSSIAN(A..B[,STDVRNG]) (casslab-load cannot draw EXP)"),
    (["-insert", "batchtype=UNLOGGED"], "-insert batchtype=UNLOGGED: cassandra-stress applies "
                                        "-insert to user profiles only"),
])
def test_pasted_options_casslab_cannot_honour_are_refused_in_one_line(
        words: list[str], message: str) -> None:
    res = casslab("stress", "--name", LAB1, "write", "n=10", *words)
    assert res.returncode == 2
    assert res.stderr.strip() == f"error: {message}" or res.stderr.startswith(
        f"error: {message}"), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
