"""A lab's state on disk: enough to find and clean up everything it started.

Written after every change (atomically: temp file + rename), so `lab down` works
after casslab itself was killed with SIGKILL at any point.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from casslab.core.errors import LabStateError, UsageError

# Defaults the CLI shows in `--help`: kept here, beside the state reader, so that
# `casslab lab list` and `lab --help` need not import the whole lab (cluster, runtimes).
DEFAULT_TIMEOUT_S = 180.0
# Nodes per lab (a spec's lab.nodes, rf and node-count factors share the bound).
MAX_NODES = 32
RUNTIME_NAMES = ("process", "netns", "lxc")
DEFAULT_RUNTIME = "process"

NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
STATE_FILE = "lab.json"


def validate_name(name: str) -> str:
    """Lab names become namespace and cgroup names: keep them short and plain."""
    if not NAME_RE.match(name):
        raise UsageError(
            f"lab name '{name}' is invalid: use 1-20 lowercase letters, digits or '-', "
            "starting with a letter"
        )
    return name


def system_name(name: str, home: Path) -> str:
    """The lab's name on this machine (namespace, cgroups): `name-<home tag>`.

    Namespaces and cgroups are machine-wide while lab state lives under a home,
    so two homes (a user's and a test run's) may each have a lab `demo`; the tag
    keeps one's `down` from touching the other's processes.
    """
    tag = hashlib.sha1(str(home.resolve()).encode()).hexdigest()[:6]
    return f"{name}-{tag}"


@dataclass
class NodeState:
    """One node: its address, directory, process and cgroup."""

    index: int
    address: str
    directory: str
    pid: int = 0
    start_ticks: int | None = None
    cgroup_dirs: list[str] = field(default_factory=list)
    heap_mib: int = 0
    # The node's own network namespace (runtime netns); None: it runs in the lab's.
    netns: str | None = None
    # The node's hardware profile when it differs from the lab's (`--node-profile`);
    # None: the lab's (and every node of a state file older than per-node profiles).
    profile: str | None = None

    @property
    def name(self) -> str:
        return f"node{self.index}"


# A node number or name (from 1), or an IPv4 / IPv6 address (it has a dot or a colon).
_NODE_REF = re.compile(r"^(node)?[1-9][0-9]*$|^[0-9a-fA-F]*[.:][0-9a-fA-F.:]*$")


def check_node_ref(ref: str) -> None:
    """Refuse what cannot name a node of any lab, before the lab is looked up."""
    if not _NODE_REF.match(ref.strip()):
        raise UsageError(f"node '{ref}' is not a node (valid: a number from 1, node1, "
                         "node2, ..., or a node's address)")


@dataclass
class LabState:
    """Everything `lab down` needs, and what `lab status` shows."""

    name: str
    directory: str
    cassandra_version: str
    profile: str
    netns: str | None
    cgroup_version: int | None
    subnet: int
    seeds: list[str]
    overrides: dict[str, Any]
    nodes: list[NodeState] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # What the nodes run in (casslab.lab.runtime); state files older than runtimes
    # were all "process".
    runtime: str = "process"
    # Profile fields set over every node's profile (campaign factors `profile.<field>`).
    profile_fields: dict[str, float | int] = field(default_factory=dict)
    # The user profiles file the profiles came from (None: built-in profiles only).
    profiles_file: str | None = None
    # The CPU credit controller of burstable nodes (casslab.lab.credits); 0: none.
    credit_controller_pid: int = 0
    credit_controller_ticks: int | None = None

    def profile_of(self, node: NodeState) -> str:
        """The name of the profile `node` runs with."""
        return node.profile or self.profile

    def profiles_text(self) -> str:
        """`rpi2`, or `rpi2 (node6: rpi3)` for a lab of mixed profiles."""
        own = [f"{n.name}: {n.profile}" for n in self.nodes if n.profile]
        return self.profile + (f" ({', '.join(own)})" if own else "")

    def node(self, ref: str | int) -> NodeState:
        """Find a node by number (2), name (node2) or address; UsageError if none."""
        text = str(ref)
        for n in self.nodes:
            if text in (str(n.index), n.name, n.address):
                return n
        valid = ", ".join(n.name for n in self.nodes)
        raise UsageError(f"lab '{self.name}' has no node '{ref}' (valid: {valid})")

    def save(self) -> None:
        path = Path(self.directory) / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        os.replace(tmp, path)

    @classmethod
    def load(cls, lab_dir: Path) -> LabState:
        path = lab_dir / STATE_FILE
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            raise LabStateError(f"no lab state at {path}") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise LabStateError(f"lab state {path} is unreadable: {exc}") from exc
        nodes = [NodeState(**n) for n in raw.pop("nodes")]
        return cls(nodes=nodes, **raw)


@contextmanager
def lab_lock(lab_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the lab while it is changed (up/down/start/stop).

    Raises LabStateError at once when another casslab holds it. A lab directory this
    call made is removed again when nothing but the lock was written to it (a `lab up`
    that failed before saving state leaves no trace).
    """
    created = not lab_dir.exists()
    try:
        lab_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        # The lab root is the user's setting; say which one to change.
        raise UsageError(f"cannot create {lab_dir} ({exc.strerror}): set CASSLAB_HOME to a "
                         "writable directory") from None
    fd = os.open(lab_dir / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
    locked = False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            locked = True
        except BlockingIOError:
            raise LabStateError(
                f"lab '{lab_dir.name}' is being changed by another casslab process"
            ) from None
        yield
    finally:
        # Still holding the lock: nobody else can be inside this lab's critical section.
        if created and locked and [p.name for p in lab_dir.iterdir()] == [".lock"]:
            (lab_dir / ".lock").unlink()
            lab_dir.rmdir()
        os.close(fd)


def list_labs(home: Path) -> list[LabState]:
    """Every lab with a state file under `home`."""
    labs_dir = home / "labs"
    out = []
    for d in sorted(labs_dir.iterdir()) if labs_dir.exists() else []:
        try:
            out.append(LabState.load(d))
        except LabStateError:
            continue
    return out
