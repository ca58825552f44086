"""An Ansible inventory read as casslab's list of real hosts.

The same file drives Ansible's playbook and casslab's SSH driver, so it is read by Ansible's
own inventory parser (InventoryManager, and VariableManager for the variables): YAML or
INI, host ranges (`pi[1:3]`), `group_vars/` and `host_vars/` beside the file, and variable
precedence all mean here what they mean to `ansible-playbook`. For example:

    all:
      vars: {ansible_user: root, ansible_ssh_private_key_file: ~/.ssh/lab}
      children:
        nodes:                      # role: runs a Cassandra node
          vars: {casslab_profile: rpi3}
          hosts:
            pi[1:2]:                # pi1, pi2 (Ansible's host range)
            pi3: {ansible_host: 10.0.0.13, casslab_data_interface: wlan0}
        clients:                    # role: runs casslab-load
          hosts:
            laptop: {ansible_host: 10.0.0.5}

Among each host's variables casslab reads `ansible_host` (default: the host's name),
`ansible_port`, `ansible_user`, `ansible_ssh_private_key_file`, `ansible_ssh_common_args`
(for its known-hosts file) and its own `casslab_*` keys; any other `casslab_*` key is
refused by name, since a typo there would silently change a run. Values are used as
written: casslab does not evaluate Jinja templates, so a `{{ ... }}` in a value it reads
is refused. In a YAML inventory a group key other than hosts/vars/children is refused
too (Ansible only warns and skips it).
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from casslab.core import specio
from casslab.core.errors import ProfileError, UsageError, require_extra
from casslab.hardware.profiles import resolve_profile

ROLES = ("nodes", "clients")
CASSLAB_VARS = ("casslab_profile", "casslab_data_interface", "casslab_install_root",
                "casslab_java_home")
DEFAULT_INSTALL_ROOT = "/opt/casslab"
DEFAULT_INTERFACE = "eth0"
GROUP_KEYS = ("hosts", "vars", "children")
READ_VARS = ("ansible_host", "ansible_port", "ansible_user", "ansible_ssh_private_key_file",
             "ansible_ssh_common_args")
# Ansible's YAML inventory plugin reads these names (YAML_FILENAME_EXTENSIONS); others
# go to its INI reader.
YAML_SUFFIXES = (".yaml", ".yml", ".json")


class InventoryError(UsageError):
    """The inventory is malformed; the message names the file, line, host and what is valid."""


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    roles: tuple[str, ...]
    user: str = "root"
    port: int = 22
    key_file: Path | None = None
    profile: str = "host"
    data_interface: str = DEFAULT_INTERFACE
    install_root: str = DEFAULT_INSTALL_ROOT
    java_home: str | None = None
    # `ansible_ssh_common_args`: Ansible passes them to ssh; casslab's own ssh and
    # asyncssh read the known-hosts file from them (see known_hosts).
    ssh_common_args: str | None = None

    @property
    def known_hosts(self) -> Path | None:
        """The `-o UserKnownHostsFile=` of ansible_ssh_common_args, if any."""
        words = shlex.split(self.ssh_common_args or "")
        for i, w in enumerate(words):
            opt = w[2:] if w.startswith("-o") and len(w) > 2 else \
                (words[i + 1] if w == "-o" and i + 1 < len(words) else "")
            key, _, value = opt.partition("=")
            if key.strip().lower() == "userknownhostsfile" and value.strip():
                return Path(value.strip()).expanduser()
        return None


@dataclass(frozen=True)
class Inventory:
    source: str
    hosts: tuple[Host, ...]

    @property
    def nodes(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if "nodes" in h.roles)

    @property
    def clients(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if "clients" in h.roles)


def load(path: Path, profiles_file: Path | None = None) -> Inventory:
    text = specio.read_text(path, "inventory", InventoryError)
    return _read(path, text, str(path), profiles_file)


def parse(text: str, source: str, profiles_file: Path | None = None) -> Inventory:
    """An inventory given as text, named `source` in errors: written under its file name to
    a private directory (so Ansible picks the YAML or INI reader by the name, and no
    group_vars apply) and read as `load` reads a file."""
    with tempfile.TemporaryDirectory(prefix="casslab-inventory-") as tmp:
        path = Path(tmp) / (Path(source).name or "inventory")
        path.write_text(text)
        return _read(path, text, source, profiles_file)


def _read(path: Path, text: str, source: str, profiles_file: Path | None) -> Inventory:
    lines = _Lines(text, source)
    if path.suffix in YAML_SUFFIXES:
        _check_yaml_groups(text, source)
    groups, variables = _ansible(path, source)
    hosts = tuple(_host(lines, name, variables[name],
                        tuple(r for r in ROLES if r in groups[name]), profiles_file)
                  for name in variables)
    inventory = Inventory(source=source, hosts=hosts)
    _check_whole(lines, inventory)
    return inventory


def _ansible(path: Path, source: str) -> tuple[dict[str, set[str]], dict[str, dict[str, Any]]]:
    """Each host's groups and variables as Ansible's inventory and variable managers give
    them (the same as `ansible-inventory --list`), in the inventory's order."""
    # Imported here: ansible takes a good part of a second to import, and only commands
    # on real hosts read an inventory.
    require_extra("ansible", "hosts", f"reading inventory {source}")
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[str(path)], parse=False)
    said = io.StringIO()
    # Ansible reports a file no inventory plugin could read as warnings on stderr; they
    # become the one-line error below instead.
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
        parsed = manager.parse_source(str(path))
    if not parsed:
        raise InventoryError(f"{source}: Ansible cannot read it as an inventory (YAML or INI)"
                             f"{_plugin_reason(said.getvalue(), path, source)}")
    manager.reconcile_inventory()
    variables = VariableManager(loader=loader, inventory=manager)
    groups: dict[str, set[str]] = {}
    values: dict[str, dict[str, Any]] = {}
    for host in manager.get_hosts():
        groups[host.name] = {g.name for g in host.get_groups()}
        values[host.name] = dict(variables.get_vars(host=host, include_hostvars=False,
                                                    stage="all"))
    return groups, values


def _plugin_reason(said: str, path: Path, source: str) -> str:
    """Ansible's reason from the plugin meant for this file (yaml by its name, else ini):
    its `[WARNING]: Failed to parse inventory with 'PLUGIN' plugin: REASON` line."""
    reasons = dict(re.findall(r"\[WARNING\]: Failed to parse inventory with '(\w+)' plugin: "
                              r"(.*)", said))
    want = "yaml" if path.suffix in YAML_SUFFIXES else "ini"
    reason = reasons.get(want) or next(iter(reasons.values()), "")
    return f" ({want}: {reason.strip().replace(str(path), source)})" if reason else ""


class _Lines:
    """The line where a host is written, for errors (`file:line: host NAME: ...`): the
    first line naming it as an inventory key or INI entry; a host from a range points at
    the range's line when no line names it."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text.splitlines()
        self.source = source

    def line(self, host: str | None) -> int:
        if host is None:
            return 1
        exact = re.compile(rf"^\s*{re.escape(host)}\s*(:|\s|$)")
        stem = re.compile(rf"^\s*{re.escape(host.rstrip('0123456789'))}\[")
        for pattern in (exact, stem):
            for i, line in enumerate(self.text, 1):
                if pattern.search(line):
                    return i
        return 1

    def error(self, host: str | None, message: str) -> InventoryError:
        return InventoryError(f"{self.source}:{self.line(host)}: {message}")


def _check_yaml_groups(text: str, source: str) -> None:
    """YAML syntax (with casslab's line numbers) and each group's keys: Ansible skips an
    unknown group key with a warning, so a misspelt `childs:` would drop hosts silently."""
    doc = specio.Doc(text, source, error=InventoryError, empty="the inventory is empty")
    v = specio.V(doc)
    for name, group in v.mapping(doc.root, (), _any_keys(doc.root)).items():
        _check_group(v, group, (name,))


def _check_group(v: specio.V, group: Any, path: specio.Path_) -> None:
    if group is None:
        return
    g = v.mapping(group, path, GROUP_KEYS)
    for child, body in v.mapping(g.get("children"), (*path, "children"),
                                 _any_keys(g.get("children"))).items():
        _check_group(v, body, (*path, "children", child))


def _any_keys(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, dict) else ()


def _host(lines: _Lines, name: str, variables: dict[str, Any], roles: tuple[str, ...],
          profiles_file: Path | None) -> Host:
    for key in variables:
        if key.startswith("casslab_") and key not in CASSLAB_VARS:
            raise lines.error(name, f"host {name}: unknown variable {key}"
                              f"{specio.closest(key, CASSLAB_VARS)} (valid: "
                              f"{', '.join(CASSLAB_VARS)})")
    for key in (*READ_VARS, *CASSLAB_VARS):
        if isinstance(variables.get(key), str) and "{{" in variables[key]:
            raise lines.error(name, f"host {name}: {key} {variables[key]!r} is a Jinja "
                              "template (casslab uses values as written; give the value)")
    address = str(variables.get("ansible_host", name))
    port = variables.get("ansible_port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise lines.error(name, f"host {name}: ansible_port {port!r} is not a port "
                          "(valid: 1-65535)")
    root = str(variables.get("casslab_install_root", DEFAULT_INSTALL_ROOT))
    if not PurePosixPath(root).is_absolute():
        raise lines.error(name, f"host {name}: casslab_install_root {root!r} must be an "
                          "absolute path")
    profile = str(variables.get("casslab_profile", "host"))
    try:
        resolve_profile(profile, profiles_file)
    except ProfileError as exc:
        raise lines.error(name, f"host {name}: casslab_profile: {exc}") from None
    key_file = variables.get("ansible_ssh_private_key_file")
    java = variables.get("casslab_java_home")
    common = variables.get("ansible_ssh_common_args")
    return Host(name=str(name), address=address, roles=roles,
                user=str(variables.get("ansible_user", "root")), port=int(port),
                key_file=Path(str(key_file)).expanduser() if key_file else None,
                profile=profile,
                data_interface=str(variables.get("casslab_data_interface", DEFAULT_INTERFACE)),
                install_root=root, java_home=str(java) if java else None,
                ssh_common_args=str(common) if common else None)


def _check_whole(lines: _Lines, inventory: Inventory) -> None:
    if not inventory.nodes:
        raise lines.error(None, "no host in group `nodes` (a lab needs at least one node; put "
                          "hosts in a group named nodes, e.g. all.children.nodes.hosts)")
    by_address: dict[tuple[str, int], str] = {}
    for h in inventory.hosts:
        if not h.roles:
            continue  # listed for Ansible only: casslab leaves it alone
        _check_address(lines, h)
        other = by_address.setdefault((_canonical(h.address), h.port), h.name)
        if other != h.name:
            raise lines.error(h.name, f"hosts {other} and {h.name} have the same address "
                              f"{h.address}:{h.port} (each host needs its own)")


def _check_address(lines: _Lines, h: Host) -> None:
    if not h.address or any(c.isspace() for c in h.address):
        raise lines.error(h.name, f"host {h.name}: ansible_host {h.address!r} is not an "
                          "address or host name")


def _canonical(address: str) -> str:
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address.lower()
