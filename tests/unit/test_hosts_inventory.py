"""An Ansible inventory becomes casslab's hosts: read by Ansible's own parser (YAML or INI,
host ranges, group_vars), roles from the groups, and each mistake one line naming the
host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casslab.testbed.hosts.inventory import Host, InventoryError, load, parse

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
    ("all:\n  childs: {}\n", r"all\.childs: unknown key"),
    ("all:\n  children:\n    nodes:\n      hosts:\n        a: {ansible_host: '{{ ip }}'}\n",
     r"h\.yaml:5: host a: ansible_host '\{\{ ip \}\}' is a Jinja template"),
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


def test_a_file_ansible_cannot_read_is_one_line_with_ansibles_reason(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("[nodes:colours]\npi1\n")
    with pytest.raises(InventoryError, match=r"hosts: Ansible cannot read it as an inventory "
                       r"\(YAML or INI\).*colours") as info:
        load(path)
    assert "\n" not in str(info.value)


def test_top_level_groups_are_groups_as_for_ansible() -> None:
    # Ansible reads a group at the top of a YAML inventory as a child of `all`.
    inv = parse("nodes:\n  hosts: {a: {ansible_host: 10.0.0.1}}\n", "h.yaml")
    assert [h.name for h in inv.nodes] == ["a"]


RANGES_YAML = """\
all:
  vars: {ansible_user: pi}
  children:
    nodes:
      hosts:
        pi[1:3]:
        db: {ansible_host: 10.0.0.9, ansible_port: 2222}
    clients:
      hosts:
        laptop: {ansible_host: 10.0.0.5, casslab_profile: host}
"""
RANGES_INI = """\
[nodes]
pi[1:2] casslab_data_interface=wlan0
db ansible_host=10.0.0.9 ansible_port=2222

[clients]
laptop ansible_host=10.0.0.5

[all:vars]
ansible_user=pi
"""
# group_vars beside the file: applies to both inventories, under a host's own vars.
GROUP_VARS = "casslab_profile: rpi3\nansible_port: 2200\nansible_host_key_checking: false\n"


def _ansible_inventory(path: Path) -> dict[str, object]:
    exe = shutil.which("ansible-inventory", path=str(Path(sys.executable).parent))
    assert exe, "ansible-inventory is installed with ansible-core (the hosts extra)"
    out = subprocess.run([exe, "-i", str(path), "--list"], capture_output=True, text=True,
                         check=True, env={**os.environ, "ANSIBLE_LOCALHOST_WARNING": "0"})
    listed: dict[str, object] = json.loads(out.stdout)
    return listed


def _as_ansible(h: Host) -> dict[str, object]:
    return {"ansible_host": h.address, "ansible_port": h.port, "ansible_user": h.user,
            "casslab_profile": h.profile, "casslab_data_interface": h.data_interface}


@pytest.mark.parametrize(("name", "text"), [("hosts.yaml", RANGES_YAML),
                                            ("hosts.ini", RANGES_INI)])
def test_hosts_and_variables_are_what_ansible_inventory_lists(
        name: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(text)
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "nodes.yaml").write_text(GROUP_VARS)
    listed = _ansible_inventory(path)
    hostvars: dict[str, dict[str, object]] = listed["_meta"]["hostvars"]  # type: ignore[index]
    inv = load(path)
    for group in ("nodes", "clients"):
        assert [h.name for h in getattr(inv, group)] == \
            listed[group]["hosts"]  # type: ignore[index]
    for h in inv.hosts:
        mine = _as_ansible(h)
        theirs = hostvars[h.name]
        # casslab's defaults stand where Ansible has no value
        assert {k: mine[k] for k in theirs if k in mine} == \
            {k: v for k, v in theirs.items() if k in mine}
    by_name = {h.name: h for h in inv.hosts}
    assert by_name["pi2"].profile == "rpi3" and by_name["pi2"].port == 2200
    assert by_name["db"].port == 2222 and by_name["laptop"].profile == "host"
