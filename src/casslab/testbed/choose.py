"""Local lab or hosts? Asked here once, for the campaign runner (from the spec's
`lab.backend: hosts` and its inventory) and for `casslab lab` and `casslab net` (from
`--inventory`, or the record `lab up --inventory` left under the lab's name).
"""

from __future__ import annotations

from pathlib import Path

from casslab.lab.state import validate_name
from casslab.testbed.base import Testbed
from casslab.testbed.hosts.record import read_record
from casslab.testbed.local import LocalTestbed


def open_testbed(name: str, *, home: Path, cache: Path, inventory: Path | None = None,
                 profiles_file: Path | None = None,
                 known_hosts: Path | None = None) -> Testbed:
    """The testbed `name`: on the hosts of `inventory` when one is given; else on the
    hosts its record names when `lab up --inventory` made it; else on this machine.
    profiles_file: user hardware profiles the inventory's hosts may name; known_hosts:
    the hosts' SSH keys (both for hosts only)."""
    validate_name(name)  # before it names a directory to read
    record = read_record(home, name) if inventory is None else None
    if inventory is None and record is None:
        return LocalTestbed(name, home=home, cache=cache)
    # asyncssh and Ansible are an extra (casslab[hosts]): imported when hosts are used.
    from casslab.testbed.hosts.lab import HostsTestbed

    if record is not None:
        inventory = Path(record.inventory)
        profiles_file = Path(record.profiles_file) if record.profiles_file else None
    assert inventory is not None
    return HostsTestbed(name, inventory, home=home, cache=cache, profiles_file=profiles_file,
                        known_hosts=known_hosts)
