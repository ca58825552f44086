"""An Ansible YAML inventory read as casslab's list of real hosts.

The same file drives Ansible's playbook and casslab's SSH driver, so it is plain Ansible:

    all:
      vars: {ansible_user: root, ansible_ssh_private_key_file: ~/.ssh/lab}
      children:
        nodes:                      # role: runs a Cassandra node
          vars: {casslab_profile: rpi3}
          hosts:
            pi1: {ansible_host: 10.0.0.11}
            pi2: {ansible_host: 10.0.0.12, casslab_data_interface: wlan0}
        clients:                    # role: runs casslab-load
          hosts:
            laptop: {ansible_host: 10.0.0.5}

Variables are inherited as Ansible does for these cases: `all.vars`, then the vars of each
group holding the host (outer before inner), then the host's own. Among them casslab reads
`ansible_host` (default: the host's name), `ansible_port`, `ansible_user`,
`ansible_ssh_private_key_file`, `ansible_ssh_common_args` (for its known-hosts file) and
its own `casslab_*` keys; any other `casslab_*` key is
refused by name, since a typo there would silently change a run.
"""

from __future__ import annotations

import ipaddress
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from casslab.core import specio
from casslab.core.errors import ProfileError, UsageError
from casslab.profiles.hardware import resolve_profile

ROLES = ("nodes", "clients")
CASSLAB_VARS = ("casslab_profile", "casslab_data_interface", "casslab_install_root",
                "casslab_java_home")
DEFAULT_INSTALL_ROOT = "/opt/casslab"
DEFAULT_INTERFACE = "eth0"
GROUP_KEYS = ("hosts", "vars", "children")


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
    return parse(text, str(path), profiles_file)


def parse(text: str, source: str, profiles_file: Path | None = None) -> Inventory:
    doc = specio.Doc(text, source, error=InventoryError, empty="the inventory is empty")
    v = specio.V(doc)
    root = v.mapping(doc.root, (), ("all",))
    if "all" not in root:
        raise doc.error((), "an inventory starts with `all:` (Ansible's YAML inventory)")
    found: dict[str, dict[str, Any]] = {}
    roles: dict[str, set[str]] = {}
    paths: dict[str, specio.Path_] = {}
    _walk(v, root["all"], ("all",), "all", {}, found, roles, paths)
    hosts = tuple(_host(v, name, found[name], tuple(r for r in ROLES if r in roles[name]),
                        paths[name], profiles_file) for name in found)
    inventory = Inventory(source=source, hosts=hosts)
    _check_whole(doc, inventory, paths)
    return inventory


def _walk(v: specio.V, group: Any, path: specio.Path_, name: str, inherited: dict[str, Any],
          found: dict[str, dict[str, Any]], roles: dict[str, set[str]],
          paths: dict[str, specio.Path_]) -> None:
    g = v.mapping(group, path, GROUP_KEYS)
    variables = {**inherited, **v.mapping(g.get("vars"), (*path, "vars"),
                                          _any_keys(g.get("vars")))}
    for host, own in v.mapping(g.get("hosts"), (*path, "hosts"),
                               _any_keys(g.get("hosts"))).items():
        hpath = (*path, "hosts", host)
        own_vars = v.mapping(own, hpath, _any_keys(own))
        # A host listed in several groups gets every group's vars (later ones win).
        found[host] = {**found.get(host, {}), **variables, **own_vars}
        roles.setdefault(host, set())
        paths.setdefault(host, hpath)
        if name in ROLES:
            roles[host].add(name)
    for child, body in v.mapping(g.get("children"), (*path, "children"),
                                 _any_keys(g.get("children"))).items():
        _walk(v, body, (*path, "children", child), child, variables, found, roles, paths)


def _any_keys(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, dict) else ()


def _host(v: specio.V, name: str, variables: dict[str, Any], roles: tuple[str, ...],
          path: specio.Path_, profiles_file: Path | None) -> Host:
    for key in variables:
        if key.startswith("casslab_") and key not in CASSLAB_VARS:
            raise v.doc.error(path, f"host {name}: unknown variable {key}"
                              f"{specio.closest(key, CASSLAB_VARS)} (valid: "
                              f"{', '.join(CASSLAB_VARS)})")
    address = str(variables.get("ansible_host", name))
    port = variables.get("ansible_port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise v.doc.error(path, f"host {name}: ansible_port {port!r} is not a port "
                          "(valid: 1-65535)")
    root = str(variables.get("casslab_install_root", DEFAULT_INSTALL_ROOT))
    if not PurePosixPath(root).is_absolute():
        raise v.doc.error(path, f"host {name}: casslab_install_root {root!r} must be an "
                          "absolute path")
    profile = str(variables.get("casslab_profile", "host"))
    try:
        resolve_profile(profile, profiles_file)
    except ProfileError as exc:
        raise v.doc.error(path, f"host {name}: casslab_profile: {exc}") from None
    key_file = variables.get("ansible_ssh_private_key_file")
    java = variables.get("casslab_java_home")
    common = variables.get("ansible_ssh_common_args")
    return Host(name=name, address=address, roles=roles,
                user=str(variables.get("ansible_user", "root")), port=port,
                key_file=Path(str(key_file)).expanduser() if key_file else None,
                profile=profile,
                data_interface=str(variables.get("casslab_data_interface", DEFAULT_INTERFACE)),
                install_root=root, java_home=str(java) if java else None,
                ssh_common_args=str(common) if common else None)


def _check_whole(doc: specio.Doc, inventory: Inventory,
                 paths: dict[str, specio.Path_]) -> None:
    if not inventory.nodes:
        raise doc.error((), "no host in group `nodes` (a lab needs at least one node; put "
                        "hosts under all.children.nodes.hosts)")
    by_address: dict[tuple[str, int], str] = {}
    for h in inventory.hosts:
        if not h.roles:
            continue  # listed for Ansible only: casslab leaves it alone
        _check_address(doc, h, paths[h.name])
        other = by_address.setdefault((_canonical(h.address), h.port), h.name)
        if other != h.name:
            raise doc.error(paths[h.name], f"hosts {other} and {h.name} have the same address "
                            f"{h.address}:{h.port} (each host needs its own)")


def _check_address(doc: specio.Doc, h: Host, path: specio.Path_) -> None:
    if not h.address or any(c.isspace() for c in h.address):
        raise doc.error(path, f"host {h.name}: ansible_host {h.address!r} is not an address "
                        "or host name")


def _canonical(address: str) -> str:
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address.lower()
