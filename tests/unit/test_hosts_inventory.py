"""An Ansible YAML inventory becomes casslab's hosts: roles from the groups, variables
inherited as Ansible does, and each mistake one line naming the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.hosts.inventory import InventoryError, parse

GOOD = """\
all:
  vars: {ansible_user: pi, ansible_ssh_private_key_file: /keys/lab}
  children:
    nodes:
      vars: {casslab_profile: rpi3}
      hosts:
        pi1: {ansible_host: 10.0.0.11}
        pi2: {ansible_host: 10.0.0.12, casslab_data_interface: wlan0, casslab_profile: rpi2}
    clients:
      hosts:
        laptop: {ansible_host: 10.0.0.5, ansible_port: 2222}
    monitoring:
      hosts:
        grafana: {ansible_host: 10.0.0.5}
"""


def test_roles_come_from_the_nodes_and_clients_groups() -> None:
    inv = parse(GOOD, "hosts.yaml")
    assert [h.name for h in inv.nodes] == ["pi1", "pi2"]
    assert [h.name for h in inv.clients] == ["laptop"]


def test_variables_are_inherited_all_then_group_then_host() -> None:
    inv = {h.name: h for h in parse(GOOD, "hosts.yaml").hosts}
    assert inv["pi1"].user == "pi" and inv["pi1"].key_file == Path("/keys/lab")
    assert inv["pi1"].profile == "rpi3" and inv["pi1"].data_interface == "eth0"
    assert inv["pi2"].profile == "rpi2" and inv["pi2"].data_interface == "wlan0"
    assert inv["laptop"].port == 2222 and inv["laptop"].profile == "host"


def test_a_host_outside_the_roles_may_share_an_address() -> None:
    # grafana (no role) shares laptop's address but another port: casslab ignores it.
    assert "grafana" in {h.name for h in parse(GOOD, "hosts.yaml").hosts}


def test_the_address_defaults_to_the_host_name() -> None:
    inv = parse("all:\n  children:\n    nodes:\n      hosts:\n        db1:\n", "h.yaml")
    assert inv.nodes[0].address == "db1"


@pytest.mark.parametrize(("text", "message"), [
    ("all:\n  children:\n    clients:\n      hosts: {c1: {}}\n",
     r"h\.yaml:1: .*no host in group `nodes`"),
    ("all:\n  children:\n    nodes:\n      hosts:\n        a: {ansible_host: 10.0.0.1}\n"
     "        b: {ansible_host: 10.0.0.1}\n",
     r"h\.yaml:6: .*hosts a and b have the same address 10\.0\.0\.1:22"),
    ("all:\n  children:\n    nodes:\n      hosts:\n        a: {casslab_profle: rpi3}\n",
     r"h\.yaml:5: .*host a: unknown variable casslab_profle \(did you mean casslab_profile\?\)"),
    ("all:\n  children:\n    nodes:\n      hosts:\n        a: {casslab_profile: rpi9}\n",
     r"host a: casslab_profile: unknown profile 'rpi9'"),
    ("all:\n  children:\n    nodes:\n      hosts:\n        a: {ansible_port: 0}\n",
     r"host a: ansible_port 0 is not a port"),
    ("all:\n  children:\n    nodes:\n      hosts:\n        a: {casslab_install_root: opt}\n",
     r"host a: casslab_install_root 'opt' must be an absolute path"),
    ("nodes:\n  hosts: {a: {}}\n", r"unknown key.*\(valid: all\)"),
    ("all:\n  childs: {}\n", r"all\.childs: unknown key"),
])
def test_a_bad_inventory_is_one_line_naming_the_host(text: str, message: str) -> None:
    with pytest.raises(InventoryError, match=message) as info:
        parse(text, "h.yaml")
    assert "\n" not in str(info.value)



@pytest.mark.parametrize(("args", "expected"), [
    ("-o UserKnownHostsFile=/k/known -o StrictHostKeyChecking=yes", "/k/known"),
    ("-oUserKnownHostsFile=/k/known", "/k/known"),
    ("-o StrictHostKeyChecking=yes", None),
])
def test_the_known_hosts_file_comes_from_ansible_ssh_common_args(
        args: str, expected: str | None) -> None:
    text = GOOD.replace("ansible_user: pi,",
                        f"ansible_user: pi, ansible_ssh_common_args: '{args}',")
    host = parse(text, "hosts.yaml").nodes[0]
    assert host.ssh_common_args == args
    assert host.known_hosts == (Path(expected) if expected else None)
