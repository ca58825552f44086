"""Provision real hosts with casslab's Ansible playbook (provision.yaml beside this file).

casslab renders each node's cassandra.yaml on the controller (the same renderer as the
local lab, with the host's address and install root), packs Cassandra's jars once per
version, and runs `ansible-playbook` with the user's inventory: Java from the host's apt
where it is missing, jars, binaries and configuration pushed from here (hosts may have no
internet). A failure is one line naming the host and the step.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra.config import LOGBACK_XML, NodeLayout, render_cassandra_yaml
from casslab.cassandra.distribution import Distribution
from casslab.core.errors import PrerequisiteError
from casslab.testbed.hosts.inventory import Host, Inventory
from casslab.testbed.hosts.ssh import HostError

PLAYBOOK = Path(__file__).with_name("provision.yaml")
BINARIES = ("casslab-load", "casslab-netem")


@dataclass(frozen=True)
class RemoteNode:
    """Where a node lives on its host (paths on the host, not here)."""

    host: Host
    layout: NodeLayout

    @property
    def lib_dir(self) -> Path:
        return Path(self.host.install_root) / "cassandra" / "lib"


def remote_nodes(inventory: Inventory) -> list[RemoteNode]:
    """The inventory's nodes, numbered in file order: node1 is the seed."""
    return [RemoteNode(h, NodeLayout(index=i, address=h.address,
                                     directory=Path(h.install_root) / "node"))
            for i, h in enumerate(inventory.nodes, start=1)]


def jars_tarball(dist: Distribution, cache: Path) -> Path:
    """Cassandra's lib/ as one tarball, built once per version under `cache`."""
    out = cache / "hosts" / f"cassandra-{dist.version}-lib.tar.gz"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + f".{os.getpid()}.part")
    with tarfile.open(partial, "w:gz") as tar:
        for jar in sorted(dist.lib_dir.iterdir()):
            if jar.is_file():
                tar.add(jar, arcname=jar.name)
    partial.replace(out)
    return out


def stage_configs(inventory: Inventory, lab_name: str, overrides: dict[str, Any],
                  staging: Path) -> list[RemoteNode]:
    """Each node's conf/ (cassandra.yaml, logback.xml) under staging/<host>/conf/."""
    nodes = remote_nodes(inventory)
    seeds = [nodes[0].layout.address]
    for n in nodes:
        config = render_cassandra_yaml(lab_name=lab_name, node=n.layout, node_count=len(nodes),
                                       seeds=seeds, overrides=overrides)
        conf = staging / n.host.name / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "cassandra.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        (conf / "logback.xml").write_text(LOGBACK_XML.format(log_dir=n.layout.log_dir))
    return nodes


def ansible_playbook() -> str:
    beside = Path(sys.executable).with_name("ansible-playbook")
    found = str(beside) if beside.exists() else shutil.which("ansible-playbook")
    if found is None:
        raise PrerequisiteError("`ansible-playbook` not found: it comes with ansible-core, "
                                "pip install 'casslab[hosts]'")
    return found


def provision(inventory_path: Path, inventory: Inventory, dist: Distribution, bin_dir: Path,
              staging: Path, cache: Path, *, lab_name: str, overrides: dict[str, Any],
              ssh_args: str | None = None) -> list[RemoteNode]:
    """Render, pack and run the playbook on every host of the inventory."""
    for name in BINARIES:
        if not (bin_dir / name).exists():
            raise PrerequisiteError(f"{bin_dir / name} not found: build it with `make setup`")
    nodes = stage_configs(inventory, lab_name, overrides, staging)
    variables = {"casslab_jars": str(jars_tarball(dist, cache)),
                 "casslab_version": dist.version, "casslab_bin": str(bin_dir),
                 "casslab_staging": str(staging)}
    vars_file = staging / "vars.json"
    vars_file.write_text(json.dumps(variables))
    argv = [ansible_playbook(), "-i", str(inventory_path), str(PLAYBOOK),
            "-e", f"@{vars_file}"]
    if ssh_args:
        argv += ["--ssh-common-args", ssh_args]
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default",
           "ANSIBLE_CALLBACK_RESULT_FORMAT": "json", "ANSIBLE_CALLBACK_FORMAT_PRETTY": "False",
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
           "ANSIBLE_RETRY_FILES_ENABLED": "False",
           # Each module runs through the SSH session's stdin instead of a copied temp
           # file: fewer round trips per task (a 5-host provisioning 31 -> 24 s here).
           # It needs no `requiretty` for sudo, which casslab's root logins never use.
           "ANSIBLE_PIPELINING": os.environ.get("ANSIBLE_PIPELINING", "True"),
           # Discovery can pick a shim that does not run (pyenv's, here); Debian's python3
           # is where Debian puts it, and `ansible_python_interpreter` still overrides.
           "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3",
           "ANSIBLE_LOCAL_TEMP": str(staging / "ansible-tmp")}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise HostError(failure_line(proc.stdout, proc.stderr, proc.returncode))
    return nodes


_TASK = re.compile(r"^TASK \[(?P<name>.*)\] \**$")
# `fatal: [h]: FAILED! => {...}`, or per item of a loop `failed: [h] (item=x) => {...}`.
_FATAL = re.compile(r"^(?:fatal|failed): \[(?P<host>[^\]]+)\](?: \(item=[^)]*\))?"
                    r"(?:: (?P<kind>FAILED|UNREACHABLE)!)? => (?P<json>\{.*)$")


def failure_line(stdout: str, stderr: str, code: int) -> str:
    """The first failed or unreachable host of ansible-playbook's report, as one line:
    `pi2: Refuse a node without Java and without apt: no Java (...)` (+ how many more).

    Reads the default callback's lines (results as one-line JSON, see `provision`):
    `TASK [name] ***` then `fatal: [host]: FAILED! => {...}`; one failure per host.
    """
    task = "?"
    failures: dict[str, str] = {}
    for line in stdout.splitlines():
        if m := _TASK.match(line):
            task = m["name"]
        elif m := _FATAL.match(line):
            try:
                result = json.loads(m["json"])
            except json.JSONDecodeError:
                result = {"msg": m["json"]}
            msg = " ".join(str(result.get("msg") or result.get("stderr") or "failed").split())
            what = "unreachable" if m["kind"] == "UNREACHABLE" else task
            failures.setdefault(m["host"], f"{m['host']}: {what}: {msg}")
    if not failures:
        last = (stderr.strip().splitlines() or [f"ansible-playbook exit {code}"])[-1]
        return f"provisioning failed: {' '.join(last.split())}"
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return next(iter(failures.values())) + more
