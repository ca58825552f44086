"""The sampler on a real process (this one): node samples carry the CPU credit balance
the lab's credit controller wrote, and none for a node without one."""

from __future__ import annotations

import os
import time
from pathlib import Path

from casslab.hardware.credits import NodeCredits, write_balance_file
from casslab.metrics.sampler import NodeTarget, Sampler


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


def test_parse_proc_of_this_process_texts_matches_read_proc() -> None:
    from casslab.metrics.sampler import parse_proc, read_proc

    texts = [Path(f"/proc/{os.getpid()}/{f}").read_text() for f in ("stat", "io", "status")]
    parsed, read = parse_proc(*texts), read_proc(os.getpid())
    assert read is not None
    assert parsed.read_bytes <= read.read_bytes and parsed.rss_mib > 0
    assert abs(parsed.cpu_user_s - read.cpu_user_s) < 0.5


def test_parse_net_dev_finds_the_interface_or_says_none() -> None:
    from casslab.metrics.sampler import parse_net_dev

    text = ("Inter-|   Receive\n face |bytes packets\n"
            "    lo: 10 1 0 0 0 0 0 0 20 1 0 0 0 0 0 0\n"
            "  eth0: 300 3 0 0 0 0 0 0 400 4 0 0 0 0 0 0\n")
    assert parse_net_dev(text, "eth0") == (300, 400)
    assert parse_net_dev(text, "wlan0") is None
