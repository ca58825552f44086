"""YCSB and cassandra-stress conventions on a real 1-node lab: a cassandra-stress command
line run by `casslab stress`, and `casslab run --format ycsb` read by a YCSB-style parser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from casslab.lab import Lab

from conftest import LAB1
from labtools import casslab

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# YCSB's status thread and text exporter, as the scripts that read them parse them.
STATUS = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} (\d+) sec: (\d+) operations; "
                    r"([\d.]+) current ops/sec;(.*)$")
STATUS_OP = re.compile(r"\[([A-Z-]+): Count=(\d+), Max=(\d+), Min=(\d+), Avg=([\d.]+), "
                       r"90=(\d+), 99=(\d+), 99\.9=(\d+), 99\.99=(\d+)\]")
SECTION = re.compile(r"^\[([A-Za-z-]+)\], ([^,]+), ([\d.E-]+)$")
OP_METRICS = {"Operations", "AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)",
              "95thPercentileLatency(us)", "99thPercentileLatency(us)", "Return=OK"}


def _count(lab: Lab, table: str) -> int:
    with lab.cql() as cql:
        return int(cql.execute(f"SELECT count(*) FROM {table}", timeout_s=30).rows[0][0])


def _summary(stdout: str) -> dict[str, object]:
    lines = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
    assert lines and all(isinstance(ln, dict) for ln in lines), stdout[-500:]
    summary = lines[-1]
    assert summary["type"] == "summary"
    return summary


def test_a_cassandra_stress_write_then_read_line_runs_on_the_lab(lab1: Lab,
                                                                 tmp_path: Path) -> None:
    hdr = tmp_path / "write.hdr"
    res = casslab("stress", "--name", LAB1, "--format", "json", "write", "n=300", "cl=ONE",
                  "-rate", "threads=4", "-pop", "seq=1..300", "-col", "size=FIXED(20)",
                  "-schema", "replication(factor=1)", "keyspace=it_cs", "-mode", "native",
                  "cql3", "-log", f"hdrfile={hdr}")
    assert res.returncode == 0, res.stderr
    s = _summary(res.stdout)
    assert (s["workload"], s["ops"], s["errors"]) == ("stress-write", 300, 0)
    assert _count(lab1, "it_cs.standard1") == 300
    log = hdr.read_text()
    assert "#[Histogram log format version 1.3]" in log
    assert re.search(r"^Tag=write,[\d.]+,[\d.]+,[\d.]+,\S+$", log, re.M), log[:600]

    res = casslab("stress", "--name", LAB1, "--format", "json", "read", "n=200", "cl=ONE",
                  "-pop", "dist=uniform(1..300)", "-col", "size=FIXED(20)",
                  "-schema", "keyspace=it_cs")
    assert res.returncode == 0, res.stderr
    s = _summary(res.stdout)
    read = s["by_op"]["read"]  # type: ignore[index]
    assert (read["ops"], read["not_found"], read["errors"]) == (200, 0, 0)


def test_run_format_ycsb_prints_status_lines_and_sections_as_ycsb(lab1: Lab) -> None:
    res = casslab("run", "ycsb", "-P", str(REPO / "workloads" / "workloada"),
                  "-p", "recordcount=200", "-p", "operationcount=400", "-p", "threadcount=4",
                  "--phase", "both", "--name", LAB1, "--format", "ycsb",
                  "--", "--keyspace", "it_ycsb_fmt", "--interval", "200ms")
    assert res.returncode == 0, res.stderr
    # YCSB writes its status lines to stderr and only the report to stdout.
    status = [m for ln in res.stderr.splitlines() if (m := STATUS.match(ln))]
    assert status, res.stderr[-500:]
    assert int(status[-1].group(2)) == 600  # 200 loaded + 400 run, counted from the start
    for m in status:
        for op in STATUS_OP.finditer(m.group(4)):
            count, mx, mn, p90, p99 = (int(op.group(i)) for i in (2, 3, 4, 6, 7))
            assert count > 0 and mn <= p90 <= p99 <= mx
    lines = res.stdout.splitlines()
    sections = [SECTION.match(ln) for ln in lines if SECTION.match(ln)]
    assert len(sections) == len(lines), res.stdout  # nothing else on stdout
    # --phase both: two reports, the load's then the run's, as YCSB's load and run.
    reports: list[dict[str, dict[str, float]]] = []
    for m in sections:
        if m.group(1) == "OVERALL" and m.group(2) == "RunTime(ms)":
            reports.append({})
        reports[-1].setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
    assert len(reports) == 2, res.stdout
    load, run = reports
    for got in reports:
        assert set(got["OVERALL"]) == {"RunTime(ms)", "Throughput(ops/sec)"}
    assert set(load) >= {"OVERALL", "INSERT"} and set(run) >= {"OVERALL", "READ", "UPDATE"}
    for got, op in ((load, "INSERT"), (run, "READ"), (run, "UPDATE")):
        assert set(got[op]) >= OP_METRICS, op
        assert got[op]["MinLatency(us)"] <= got[op]["99thPercentileLatency(us)"] \
            <= got[op]["MaxLatency(us)"]
    assert load["INSERT"]["Operations"] == 200 and "INSERT" not in run
    assert run["READ"]["Operations"] + run["UPDATE"]["Operations"] == 400
    assert run["READ"]["Return=OK"] == run["READ"]["Operations"]
    assert _count(lab1, "it_ycsb_fmt.usertable") == 200


def test_ycsb_percentiles_and_measurement_interval_shape_the_ycsb_report(lab1: Lab) -> None:
    res = casslab("run", "ycsb", "-P", str(REPO / "workloads" / "workloada"),
                  "-p", "recordcount=200", "-p", "operationcount=300", "-p", "threadcount=4",
                  "-p", "target=300", "-p", "hdrhistogram.percentiles=50,99.9",
                  "-p", "measurement.interval=intended", "--phase", "both", "--name", LAB1,
                  "--format", "ycsb", "--", "--keyspace", "it_ycsb_pct")
    assert res.returncode == 0, res.stderr
    assert "warning" not in res.stderr  # honoured, not warned about
    rows = {(m.group(1), m.group(2)): float(m.group(3))
            for ln in res.stdout.splitlines() if (m := SECTION.match(ln))}
    # intended: only YCSB's [Intended-OP] blocks, with the percentiles asked for.
    assert not any(op in ("READ", "UPDATE", "INSERT") for op, _ in rows), res.stdout
    p50 = rows[("Intended-READ", "50thPercentileLatency(us)")]
    p999 = rows[("Intended-READ", "99.9PercentileLatency(us)")]
    assert 0 < p50 <= p999 <= rows[("Intended-READ", "MaxLatency(us)")]
    assert not any("95th" in name for _, name in rows)
