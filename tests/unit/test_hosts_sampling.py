"""The remote sampler loop, run here with python3 as a host would run it: one line at
once, one per interval, a last one when its stdin closes; its lines parsed back."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path

import pytest

from casslab.core.errors import CasslabError
from casslab.testbed.hosts.sampling import SamplerTarget, parse_line, sampler_command


def test_the_loop_reads_this_process_its_data_dir_and_the_interface(tmp_path: Path) -> None:
    table = tmp_path / "ks" / "t-0123abcd"
    table.mkdir(parents=True)
    (table / "nb-1-big-Data.db").write_bytes(b"x" * 10000)
    (tmp_path / "system" / "local-99").mkdir(parents=True)
    targets = [SamplerTarget("node1", os.getpid(), str(tmp_path)),
               SamplerTarget("node2", 2**22 + 7, str(tmp_path / "none"))]  # no such pid
    proc = subprocess.Popen(["sh", "-c", sampler_command(targets, "lo", 0.2)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    # The baseline and one interval, however slowly python3 starts on a busy machine.
    first = [proc.stdout.readline(), proc.stdout.readline()]
    proc.stdin.close()
    lines = [ln.rstrip("\n") for ln in [*first, *proc.stdout]]
    assert proc.wait(timeout=10) == 0
    assert len(lines) >= 3  # the baseline, intervals, the last on stdin's end
    readings = [parse_line("h1", line) for line in lines]
    assert [r.host for r in readings] == ["h1"] * len(lines)
    assert all(b.t > a.t for a, b in itertools.pairwise(readings))
    last = readings[-1]
    node = last.nodes["node1"]
    assert last.nodes["node2"] is None
    assert node is not None and node.stat.startswith(f"{os.getpid()} (")
    assert "write_bytes" in node.io and node.status.startswith("VmRSS:")
    assert node.table_dirs == {("ks", "t-0123abcd"): 1, ("system", "local-99"): 0}
    assert node.du_bytes is not None and node.du_bytes >= 10000
    assert last.net_dev is not None and last.net_dev.strip().startswith("lo:")
    assert last.proc_stat.startswith("cpu ")
    assert last.clk_tck == os.sysconf("SC_CLK_TCK")


def test_a_line_that_is_not_a_reading_names_the_host() -> None:
    with pytest.raises(CasslabError, match=r"^pi2: sampler line is not a reading"):
        parse_line("pi2", "Traceback (most recent call last):")
    with pytest.raises(CasslabError, match=r"^pi2: sampler line is not a reading"):
        parse_line("pi2", json.dumps({"t": 1.0}))
