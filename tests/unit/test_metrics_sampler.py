"""The sampler on a real process (this one): node samples carry the CPU credit balance
the lab's credit controller wrote, and none for a node without one."""

from __future__ import annotations

import os
import time
from pathlib import Path

from casslab.metrics.sampler import NodeTarget, Sampler
from casslab.profiles.credits import NodeCredits, write_balance_file


def test_node_samples_carry_the_credit_balance_of_burstable_nodes(tmp_path: Path) -> None:
    balance = tmp_path / "credits.json"
    write_balance_file(balance, [NodeCredits("node1", "t2.micro", 17.5, True, 1.0)], 1.0)
    sampler = Sampler([NodeTarget("node1", os.getpid(), "127.0.0.1", tmp_path, balance),
                       NodeTarget("node2", os.getpid(), "127.0.0.1", tmp_path)],
                      interval_s=0.1)
    sampler.start()
    time.sleep(0.35)
    metrics = sampler.stop()
    assert not metrics.errors
    credits = {s.node: s.cpu_credits for s in metrics.nodes}
    assert credits == {"node1": 17.5, "node2": None}
