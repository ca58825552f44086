"""`casslab lab list`: every lab under a casslab home, on this machine or on hosts, read
from their state files and records alone (no lab stack, no SSH)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from casslab.lab.state import list_labs
from casslab.system.process import is_same_process
from casslab.testbed.hosts.record import list_hosts_labs


@dataclass(frozen=True)
class Listed:
    """One row of `lab list`."""

    name: str
    nodes: int
    running: str  # a count, or "?" where counting would need a round over SSH
    profile: str
    version: str
    where: str  # the namespace, or the hosts


def list_testbeds(home: Path) -> list[Listed]:
    """Every lab under `home`: this machine's, then those on hosts (from their records)."""
    local = [Listed(s.name, len(s.nodes),
                    str(sum(is_same_process(n.pid, n.start_ticks) for n in s.nodes)),
                    s.profiles_text(), s.cassandra_version, s.netns or "-")
             for s in list_labs(home)]
    return local + [Listed(r.name, len(r.nodes), "?", "(inventory)", r.version,
                           f"hosts: {', '.join(r.nodes)}") for r in list_hosts_labs(home)]
