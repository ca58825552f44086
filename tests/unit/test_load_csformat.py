"""cassandra-stress's text output rendered from casslab-load's JSON lines, read back the
way the common c-s parsers read it."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

from casslab.load import csformat as cs
from casslab.load import csgraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from csparse import parse_results, parse_rows


def _hist(mean: float, p50: int, p95: int, p99: int, p999: int, mx: int) -> dict[str, Any]:
    return {"mean_us": mean, "p50_us": p50, "p95_us": p95, "p99_us": p99, "p999_us": p999,
            "max_us": mx}


def _block(ops: int, ok: int, errors: int, service: dict[str, Any],
           latency: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"ops": ops, "ok": ok, "not_found": ops - ok - errors, "errors": errors,
            "service": service, "latency": latency or service}


WRITE = _block(6000, 6000, 0, _hist(1500.0, 1200, 4000, 9000, 20000, 31000))
READ = _block(4000, 3000, 2, _hist(2500.0, 2000, 6000, 12000, 25000, 40000),
              _hist(9000.0, 8000, 16000, 22000, 35000, 50000))
ALL = _block(10000, 9000, 2, _hist(1900.0, 1500, 5000, 10000, 24000, 40000),
             _hist(4000.0, 3000, 9000, 15000, 30000, 50000))
SUMMARY = {"type": "summary", "elapsed_s": 3725.5, "ops": 10000,
           "by_op": {"write": WRITE, "read": READ}, "all": ALL}


def test_results_block_reads_back_with_the_parsers_rules() -> None:
    text = "\n".join([*cs.results_block(SUMMARY, predefined=True, fixed=False), "END"])
    got = parse_results(text)
    assert got == {"op rate": 3.0, "partition rate": 3.0, "row rate": 2.0,
                   "latency mean": 1.9, "latency median": 1.5,
                   "latency 95th percentile": 5.0, "latency 99th percentile": 10.0,
                   "latency 99.9th percentile": 24.0, "latency max": 40.0,
                   "Total partitions": 10000, "Total errors": 2,
                   "Total operation time": 3725}
    lines = text.splitlines()
    assert lines[:3] == ["", "", "Results:"]
    assert "Op rate                   :        3 op/s  [READ: 1 op/s, WRITE: 2 op/s]" in lines
    assert "Latency 99th percentile   :   10.0 ms [READ: 12.0 ms, WRITE: 9.0 ms]" in lines
    assert "Total partitions          :     10,000 [READ: 4,000, WRITE: 6,000]" in lines
    assert "Total errors              :          2 [READ: 2, WRITE: 0]" in lines
    assert "Total operation time      : 01:02:05" in lines


def test_fixed_rate_reports_latency_from_the_intended_start_as_c_s_does() -> None:
    text = "\n".join([*cs.results_block(SUMMARY, predefined=True, fixed=True), "END"])
    got = parse_results(text)
    assert got["latency mean"] == 4.0 and got["latency max"] == 50.0


def test_interval_rows_per_type_then_total_with_running_counts() -> None:
    printer = cs.IntervalPrinter(predefined=True, fixed=False)
    lines = [cs.header()]
    for t in (1.0, 2.0):
        lines += printer.lines({"type": "interval", "recorded": True, "t_s": t + 0.5,
                                "interval_s": 1.0, "errors": 2, "by_op": {"write": WRITE,
                                                                          "read": READ},
                                "all": ALL})
    # A warm-up interval prints nothing.
    assert printer.lines({"recorded": False, "t_s": 0.5, "interval_s": 0.5}) == []
    rows = parse_rows("\n".join(lines))
    assert [r["type"] for r in rows] == ["READ", "WRITE", "total"] * 2
    last = rows[-1]
    assert last["total ops"] == "20000" and last["op/s"] == "10000"
    assert last["row/s"] == "9000" and last["errors"] == "2"
    assert (last["mean"], last[".99"], last["max"], last["time"]) == ("1.9", "10.0", "40.0",
                                                                      "2.0")
    assert rows[3]["total ops"] == "8000"  # READ after two intervals
    assert all(len(ln) == len(cs.HEAD) for ln in lines)


def test_one_operation_type_prints_only_total_rows() -> None:
    printer = cs.IntervalPrinter(predefined=True, fixed=False)
    lines = printer.lines({"t_s": 1.0, "interval_s": 1.0, "by_op": {"write": WRITE},
                           "all": WRITE})
    assert len(lines) == 1 and lines[0].startswith("total,")


def test_uncertainty_is_the_relative_standard_error_of_the_mean() -> None:
    u = cs.Uncertainty()
    for v in (90.0, 110.0):
        u.update(v)
    assert u.value() == pytest.approx(10.0 / math.sqrt(2) / 100.0)
    assert math.isnan(cs.Uncertainty().value())


def test_thread_steps_and_the_stop_once_throughput_stops_improving() -> None:
    assert list(cs.thread_steps(4, 1000)) == [4, 8, 16, 24, 36, 54, 81, 121, 181, 271, 406,
                                              609, 913]
    assert list(cs.thread_steps(4, 16)) == [4, 8, 16]
    rising = [100.0, 200.0, 300.0, 400.0]
    assert cs.keep_stepping(rising, auto=True, uncertainty=-1)
    flat = [100.0, 200.0, 300.0, 290.0, 280.0, 285.0]
    assert not cs.keep_stepping(flat, auto=True, uncertainty=-1)
    assert cs.keep_stepping(flat, auto=False, uncertainty=-1)
    # Fewer than 4 steps: always on (c-s needs 3 improvements to compare).
    assert cs.keep_stepping([100.0, 50.0, 10.0], auto=True, uncertainty=-1)


def test_steps_table_has_a_row_per_type_and_total_for_each_step() -> None:
    steps = [cs.Step(4, SUMMARY, 0.01), cs.Step(8, SUMMARY, 0.02)]
    lines = cs.steps_table(steps, predefined=True, fixed=False)
    assert lines[0].startswith("           id, type")
    assert [ln.split(",")[1].strip() for ln in lines[1:]] == ["READ", "WRITE", "total"] * 2
    assert lines[-1].startswith("8 threadCount, total,")


def test_graph_page_holds_its_revisions_and_adds_later_runs(tmp_path: Path) -> None:
    page = tmp_path / "g.html"
    rows = [{"time": 1.0, "op/s": 100.0, "med": 1.0, ".95": 2.0, ".99": 3.0, "max": 4.0}]
    csgraph.write(page, "t", [csgraph.revision("r1", "casslab stress write n=1", rows)])
    csgraph.write(page, "t", [csgraph.revision("r2", "casslab stress write n=2", rows)])
    text = page.read_text()
    assert text.startswith("<!doctype html>") and text.count("<svg") == 4
    assert [r["revision"] for r in csgraph.previous_revisions(page)] == ["r1", "r2"]
