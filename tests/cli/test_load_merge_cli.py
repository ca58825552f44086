"""`casslab-load merge` through the real binary: logs of two clients, one started later,
add up by absolute time into one log and one summary whose count is the sum."""

from __future__ import annotations

import base64
import json
import subprocess
import zlib
from pathlib import Path

from hdrh.histogram import HdrHistogram

from casslab.load.runner import find_binary

T0 = 1_700_000_000.0


def write_log(path: Path, start_s: float, counts: list[int], latency_us: int) -> None:
    lines = ["#[Histogram log format version 1.3]",
             f"#[StartTime: {start_s:.3f} (seconds since epoch)]",
             '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"']
    for i, n in enumerate(counts):
        h = HdrHistogram(1, 3_600_000_000, 3)
        h.record_value(latency_us, n)
        lines.append(f"Tag=read,{i:.3f},1.000,{latency_us / 1000:.3f},{h.encode().decode()}")
    path.write_text("\n".join(lines) + "\n")


def decoded_counts(path: Path) -> list[tuple[float, int]]:
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("Tag=read,"):
            _, start, _, _, blob = line.split(",")
            out.append((float(start), HdrHistogram.decode(blob).get_total_count()))
    return out


def test_merge_adds_two_clients_logs_by_absolute_time(tmp_path: Path) -> None:
    a, b, merged = tmp_path / "a.hlog", tmp_path / "b.hlog", tmp_path / "m.hlog"
    write_log(a, T0, [100, 200, 300], 1000)
    write_log(b, T0 + 1, [40, 50], 8000)  # the second client started a second later
    r = subprocess.run([find_binary(), "merge", str(a), str(b), "-o", str(merged)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["ops"] == 690 and s["by_tag"]["read"]["count"] == 690
    assert s["by_tag"]["read"]["max_us"] >= 7990
    assert decoded_counts(merged) == [(0.0, 100), (1.0, 240), (2.0, 350)]


def test_a_log_without_start_time_is_one_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hlog"
    payload = base64.b64encode(zlib.compress(b"x")).decode()
    bad.write_text(f"Tag=read,0.000,1.000,1.000,{payload}\n")
    r = subprocess.run([find_binary(), "merge", str(bad)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and str(bad) in r.stderr, r.stderr


def test_a_reader_that_closes_the_pipe_early_ends_the_merge_quietly(tmp_path: Path) -> None:
    """`casslab-load merge --intervals LOG | head -1`: the output (2.6 MB here) outgrows
    the pipe, the reader leaves after one line; the merge ends with exit 0 and nothing on
    stderr (println! panicked there, with a backtrace)."""
    log = tmp_path / "long.hlog"
    write_log(log, T0, [10] * 3000, 1000)
    p = subprocess.Popen([find_binary(), "merge", str(log), "--intervals"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    first = json.loads(p.stdout.readline())
    p.stdout.close()
    assert p.wait(timeout=60) == 0
    assert p.stderr.read() == b""
    assert "all" in first
