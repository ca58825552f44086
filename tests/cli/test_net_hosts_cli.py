"""`casslab net set/check --inventory`: a mistake in the request is one line naming it,
before any host is contacted (the inventory's hosts here do not exist)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

INVENTORY = """\
all:
  children:
    nodes:
      hosts:
        pi1: {ansible_host: 192.0.2.11}
        pi2: {ansible_host: 192.0.2.12}
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["set", "--link", "pi1-nosuch:delay=5ms"],
         "error: link pi1-nosuch: unknown host 'nosuch' (valid: pi1, pi2; or client, node1, "
         "node2)"),
        (["set", "--link", "pi1-pi2:delay=5"],
         "error: link pi1-pi2: delay: bare number 5 is ambiguous: add a unit, e.g. 5ms or "
         "5s"),
        (["check", "--link", "pi1-pi2"],
         "error: --link: not with --inventory (every link between the hosts is checked)"),
    ],
)
def test_a_bad_request_on_hosts_is_one_line_before_any_host_is_contacted(
        tmp_path: Path, args: list[str], message: str) -> None:
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(INVENTORY)
    res = casslab("net", *args, "--inventory", str(inventory), timeout_s=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip().splitlines() == [message]
