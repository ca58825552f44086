"""casslab-load against a real 1-node lab: every built-in workload and a user profile,
with the rows it wrote counted and its reads finding them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from casslab.lab import Lab
from casslab.load import LoadSpec, RunSummary, run_load
from casslab.load.runner import build_command, find_binary

from conftest import LAB1
from labtools import TlsFiles, casslab

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "crates" / "load" / "profiles" / "sensor-readings.yaml"


def _run(lab: Lab, workload: str, **options: Any) -> RunSummary:
    hosts = [f"{n.address}:9042" for n in lab.state().nodes]
    extra = options.pop("extra", [])
    result = run_load(LoadSpec.of(workload, options, extra), hosts=hosts,
                      prefix=lab.exec_prefix())
    assert result.summary.ended_by == "completed"
    assert result.summary.errors == 0, [o.first_errors for o in result.summary.by_op]
    assert result.intervals, "no interval lines"
    return result.summary


def _count(lab: Lab, table: str) -> int:
    with lab.cql() as cql:
        return int(cql.execute(f"SELECT count(*) FROM {table}", timeout_s=30).rows[0][0])


def _op(s: RunSummary, name: str) -> Any:
    return next(o for o in s.by_op if o.name == name)


@pytest.mark.parametrize("letter", list("abcdefi"))
def test_ycsb_workload_writes_its_rows_and_reads_find_them(lab1: Lab, letter: str) -> None:
    ks = f"it_ycsb_{letter}"
    s = _run(lab1, f"ycsb-{letter}", phase="both", records=300, ops=600, in_flight=8,
             extra=["--keyspace", ks])
    inserted = _op(s, "insert").ops
    assert inserted >= 300
    assert _count(lab1, f"{ks}.usertable") == inserted
    reads = sum(_op(s, n).ops for n in ("read", "scan", "rmw"))
    updates = _op(s, "update").ops
    assert reads + updates + inserted == 900
    for name in ("read", "rmw", "update"):
        assert _op(s, name).not_found == 0, name
    expected_mix = {"a": ("read", "update"), "b": ("read", "update"), "c": ("read",),
                    "d": ("read", "insert"), "e": ("scan", "insert"), "f": ("read", "rmw"),
                    "i": ("insert",)}[letter]
    assert all(_op(s, n).ops > 0 for n in expected_mix)
    if letter == "f":  # YCSB also reports each rmw's read and update on their own
        parts = s.raw["parts"]
        assert parts["read"]["ops"] == parts["update"]["ops"] == _op(s, "rmw").ops
        assert parts["read"]["latency"]["max_us"] <= _op(s, "rmw").latency.max_us


def test_stress_write_read_and_mixed(lab1: Lab) -> None:
    ks = "it_stress"
    w = _run(lab1, "stress-write", ops=1000, in_flight=16, extra=["--keyspace", ks])
    assert _op(w, "write").ops == 1000
    assert _count(lab1, f"{ks}.standard1") == 1000  # seq(1..1000): every key once
    pop = ["--keyspace", ks, "--pop", "uniform(1..1000)"]
    r = _run(lab1, "stress-read", ops=500, records=1000, extra=pop)
    assert _op(r, "read").ops == 500 and _op(r, "read").not_found == 0
    m = _run(lab1, "stress-mixed", ops=800, records=1000, extra=pop)
    reads, writes = _op(m, "read").ops, _op(m, "write").ops
    assert reads + writes == 800 and _op(m, "read").not_found == 0
    assert 0.6 < reads / 800 < 0.9  # ratio(write=1,read=3)


def test_threads_run_that_many_closed_loop_clients(lab1: Lab) -> None:
    # Seed 004's form: cassandra-stress -rate threads=N, uniform keys.
    ks = "it_threads"
    _run(lab1, "stress-write", ops=2000, threads=50, extra=["--keyspace", ks])
    assert _count(lab1, f"{ks}.standard1") == 2000
    s = _run(lab1, "stress-read", ops=3000, records=2000, threads=50,
             extra=["--keyspace", ks, "--pop", "uniform(1..2000)"])
    assert s.clients == 50 and s.raw["concurrency"]["mode"] == "threads"
    assert _op(s, "read").ops == 3000 and _op(s, "read").not_found == 0
    assert s.raw["config"]["command"]["stress"]["run"]["threads"] == 50


def test_iot_time_series_load_and_reads(lab1: Lab) -> None:
    ks = "it_iot"
    _run(lab1, "iot", phase="load", extra=["--devices", "10", "--keyspace", ks,
                                           "--table-ttl-s", "3600"])
    assert _count(lab1, f"{ks}.sensor_data") == 10 * 5 * 60
    # seed 003's reads (iot) and the former forms (iot-full-latest) on the same data.
    for workload in ("iot", "iot-full-latest"):
        s = _run(lab1, workload, ops=200, extra=["--devices", "10", "--keyspace", ks])
        for name in ("devdat", "lesrow", "avgdat", "insert"):
            assert _op(s, name).ops > 0, (workload, name)
        assert _op(s, "devdat").not_found == 0 and _op(s, "lesrow").not_found == 0
    with lab1.cql() as cql:
        ttl = cql.execute("SELECT default_time_to_live FROM system_schema.tables WHERE "
                          "keyspace_name = %s AND table_name = 'sensor_data'", [ks]).rows
    assert ttl == [[3600]]


def test_user_profile_runs_unchanged(lab1: Lab) -> None:
    s = _run(lab1, str(PROFILE), phase="load", records=20)
    assert _op(s, "insert").ops == 20
    assert _count(lab1, "farm.readings") == 20 * 24  # 24 rows per partition
    s = _run(lab1, str(PROFILE), records=20, ops=300,
             extra=["--mix", "insert=1,latest=4,day=1", "--pop", "uniform(1..20)"])
    assert _op(s, "latest").ops > 0 and _op(s, "latest").not_found == 0
    assert _op(s, "day").not_found == 0


def test_run_command_prints_a_summary_table(lab1: Lab) -> None:
    res = casslab("run", "ycsb-c", "--name", LAB1, "--phase", "both", "--records", "200",
                  "--ops", "300", "--", "--keyspace", "it_cli")
    assert res.returncode == 0, res.stderr
    assert "ycsb-c: 500 ops" in res.stdout and "p99" in res.stdout
    assert "coordinated omission" in res.stdout


def test_run_command_rejects_an_unknown_workload(lab1: Lab) -> None:
    res = casslab("run", "ycsb-z", "--name", LAB1)
    assert res.returncode == 2
    assert res.stderr.startswith("error: unknown workload 'ycsb-z' (valid: ycsb-a")


def test_a_cluster_that_disappears_ends_the_run_with_the_summary_so_far(lab1: Lab) -> None:
    hosts = [f"{n.address}:9042" for n in lab1.state().nodes]
    spec = LoadSpec.of("stress-write", {"duration": "120s", "rate": 500},
                       ["--keyspace", "it_lost", "--unreachable-after", "3s"])
    cmd = [*lab1.exec_prefix(), *build_command(spec, hosts, find_binary())]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(6)
        lab1.stop_node("1", kill=True)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        lab1.start_node("1")
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["type"] == "summary" and summary["ended_by"] == "cluster_lost"
    assert summary["by_op"]["write"]["ok"] > 1000  # ~6 s at 500 ops/s before the loss
    assert proc.returncode == 3
    assert err.strip(), "a clear message on stderr"


def test_tls_connection_verifies_the_node_certificate(lab1: Lab, tls_files: TlsFiles) -> None:
    ks = ["--keyspace", "it_tls"]
    s = _run(lab1, "stress-write", ops=300, extra=[*ks, "--tls-ca", str(tls_files.ca_pem)])
    assert _op(s, "write").ops == 300
    assert _count(lab1, "it_tls.standard1") == 300
    # A CA that did not sign the node's certificate: the handshake must fail, which a
    # plaintext connection (also accepted by this lab) never would.
    hosts = [f"{n.address}:9042" for n in lab1.state().nodes]
    bad = LoadSpec.of("stress-write", {"ops": 10},
                      [*ks, "--tls-ca", str(tls_files.other_ca_pem)])
    res = subprocess.run([*lab1.exec_prefix(), *build_command(bad, hosts, find_binary())],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 1, res.stderr
    assert "cannot connect" in res.stderr and "certificate" in res.stderr.lower()
    s = _run(lab1, "stress-read", ops=100, records=300,
             extra=[*ks, "--pop", "uniform(1..300)", "--tls-insecure"])
    assert _op(s, "read").ops == 100 and _op(s, "read").not_found == 0


def test_tls_needs_a_ca_or_insecure(lab1: Lab) -> None:
    hosts = [f"{n.address}:9042" for n in lab1.state().nodes]
    res = subprocess.run([*build_command(LoadSpec.of("stress-write", {"ops": 1}, ["--tls"]),
                                         hosts, find_binary())],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2  # a bad command line (issue "Hardening": 2 = usage)
    assert "--tls" in res.stderr and "--tls-ca" in res.stderr and "--tls-insecure" in res.stderr
