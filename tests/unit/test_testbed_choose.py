"""Local lab or hosts is decided in one place: an inventory given, else the lab's hosts
record, else this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import LabStateError, UsageError
from casslab.lab import LabOptions
from casslab.testbed.choose import open_testbed
from casslab.testbed.hosts.lab import HostsTestbed
from casslab.testbed.hosts.record import HostsRecord, write_record
from casslab.testbed.listing import list_testbeds
from casslab.testbed.local import LocalTestbed

INVENTORY = """\
all:
  children:
    nodes:
      hosts:
        pi1: {ansible_host: 10.0.0.11}
        pi2: {ansible_host: 10.0.0.12}
"""


def _inventory(tmp_path: Path) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(INVENTORY)
    return path


def test_a_name_without_inventory_or_record_is_a_lab_on_this_machine(tmp_path: Path) -> None:
    testbed = open_testbed("edge", home=tmp_path, cache=tmp_path)
    assert isinstance(testbed, LocalTestbed)
    assert testbed.fixed_nodes() is None and testbed.where() == "lab edge"
    assert not testbed.exists()


def test_an_inventory_makes_it_the_hosts_testbed_with_the_inventorys_nodes(
        tmp_path: Path) -> None:
    testbed = open_testbed("pis", home=tmp_path, cache=tmp_path,
                           inventory=_inventory(tmp_path))
    assert isinstance(testbed, HostsTestbed)
    assert testbed.fixed_nodes() == 2 and testbed.log_file("node1") is None
    assert testbed.where() == f"hosts of {tmp_path / 'hosts.yaml'}"


def test_a_hosts_record_under_the_name_reopens_its_inventory_and_profiles_file(
        tmp_path: Path) -> None:
    inventory = _inventory(tmp_path)
    (tmp_path / "boards.yaml").write_text("profiles: {}\n")
    write_record(tmp_path, HostsRecord("pis", str(inventory), "5.0.6", ["pi1", "pi2"],
                                       str(tmp_path / "boards.yaml")))
    testbed = open_testbed("pis", home=tmp_path, cache=tmp_path)
    assert isinstance(testbed, HostsTestbed) and testbed.exists()
    assert testbed.inventory_path == inventory
    assert testbed.profiles_file == tmp_path / "boards.yaml"
    [row] = list_testbeds(tmp_path)
    assert (row.name, row.nodes, row.running, row.where) == ("pis", 2, "?", "hosts: pi1, pi2")
    # `lab up --name pis` without --inventory reaches this lab, and is refused, not rerun.
    with pytest.raises(LabStateError, match=r"'pis' is up on hosts .*lab down --name pis"):
        testbed.up(LabOptions(nodes=2))


def test_a_bad_name_is_refused_before_any_record_is_read(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"\.\./x"):
        open_testbed("../x", home=tmp_path, cache=tmp_path)
