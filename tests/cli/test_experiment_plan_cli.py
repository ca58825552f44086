"""`casslab experiment plan SPEC` shows each trial's block, warm-up and reset with its
reason, and a summary line (issue 15: run order that respects warm-up)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

EXAMPLE_000 = Path(__file__).parent.parent.parent / "examples" / "000-rpi-iot" / "links.yaml"


def test_plan_of_example_000_shows_blocks_warmups_and_why() -> None:
    res = casslab("experiment", "plan", str(EXAMPLE_000), env=None)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    # interleaved rounds on two kept labs (1 and 2 nodes), the link profile switched
    # between trials; a workload change recreates the table
    words = " ".join(res.stdout.split())
    assert ("181 blocks, 382 warm-ups, 480 kept trials; resets: 120 recreate, 2 rebuild, "
            "59 resume; 60 rounds of 8 kept trials, each round after the first: "
            "2 recreate, 1 resume") in words
    header = next(line for line in lines if "seq" in line)
    for col in ("block", "warm-up", "reset before", "why"):
        assert col in header
    assert any("first trial: no lab yet" in line for line in lines)
    assert any("schema changed: workload" in line for line in lines)
