"""The testbed seam: what a lab offers its callers, whatever the nodes run on.

Two backends implement `Testbed`: `casslab.testbed.local.LocalTestbed` (this machine:
namespaces, cgroups, containers) and `casslab.testbed.hosts.lab.HostsTestbed` (real hosts
of an Ansible inventory, over SSH). `casslab.testbed.choose.open_testbed` picks one, the
one place that asks "local lab or hosts?"; the campaign runner, `casslab lab` and
`casslab net` call only these methods, so a spec or a command runs unchanged on either.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from casslab.cassandra.cql import CqlClient
from casslab.lab import LabOptions
from casslab.lab.cluster import NodeStatus, Progress
from casslab.lab.health import DeadNode
from casslab.load import LoadResult, LoadSpec
from casslab.metrics.samples import TrialMetrics
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import NetSpec

if TYPE_CHECKING:
    from casslab.net.linkcheck import LinkCheck  # the prober loads with `net check` only


class TrialSampler(Protocol):
    """Samples the nodes from start() to stop()."""

    def start(self) -> None: ...

    def stop(self) -> TrialMetrics: ...


@dataclass(frozen=True)
class Built:
    """What `up` reports: the line after `lab NAME` (`up: 3 nodes, ...`) and warnings."""

    summary: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinkRow:
    """One directed link as `net set` and `net show` print it."""

    label: str
    addresses: str  # "10.0.0.1 -> 10.0.0.2"
    conditions: LinkConditions


@dataclass(frozen=True)
class LinkTable:
    """The link conditions in force on a testbed: a titled table, lines under it, and
    warnings (e.g. rules that are configured but not enforced now)."""

    title: str
    rows: list[LinkRow]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Testbed(Protocol):
    """A lab: built, loaded, conditioned, measured and torn down (see module docstring)."""

    name: str

    # ---- life ------------------------------------------------------------------------

    def exists(self) -> bool:
        """Anything of this lab is up or recorded (down() has something to do)."""

    def fixed_nodes(self) -> int | None:
        """The node count the backend fixes (hosts: the inventory's), None when the
        options choose it."""

    def up(self, options: LabOptions, progress: Progress | None = None) -> Built:
        """Build the lab and wait until every node sees every other NORMAL; on failure
        nothing it started is left running."""

    def down(self, *, wipe: bool = True) -> str:
        """Clear link conditions, stop every node, wipe the data (hosts: always); says
        what was done (`down and wiped`)."""

    def status(self) -> list[NodeStatus]:
        """`lab status` rows: each node's address, gossip state, load, profile, pid."""

    def log_file(self, ref: str) -> Path | None:
        """Node `ref`'s system.log on this machine (None: it is elsewhere, see log_text)."""

    def log_text(self, ref: str, lines: int) -> str:
        """The last `lines` of node `ref`'s system.log."""

    def close(self) -> None:
        """Let go of connections (the lab keeps running)."""

    def pause(self) -> None:
        """Stop the nodes' processes where they are (design.labs: keep): no CPU used,
        their warm state kept. UsageError where the backend cannot (hosts)."""

    def resume(self) -> None:
        """Undo pause and wait until CQL answers on every node."""

    # ---- a campaign's trials ---------------------------------------------------------

    def update_limits(self, fields: dict[str, float | int]) -> bool:
        """Change profile limits live; False when a rebuild is needed."""

    def set_links(self, spec: NetSpec | None) -> None:
        """Make the link conditions exactly `spec` (None: none)."""

    def cql(self) -> CqlClient:
        """A CQL client on the running nodes (a context manager)."""

    def addresses(self) -> tuple[str, ...]:
        """The running nodes' addresses (no port)."""

    def netns(self) -> str | None:
        """Where a CQL client reaches the nodes from (None: this namespace)."""

    def load(self, spec: LoadSpec, *, guard: list[str], clients: int = 1,
             work_dir: Path | None = None) -> LoadResult:
        """Run casslab-load against the nodes from where the lab's clients are: `clients`
        processes (casslab.load.multi; their logs fetched to `work_dir` and merged);
        `guard` prefixes each command (e.g. `timeout`)."""

    def sampler(self, interval_s: float,
                cql: Callable[[], AbstractContextManager[Any]] | None) -> TrialSampler:
        """A sampler of the running nodes' resource use."""

    def cpu_seconds(self) -> float | None:
        """CPU seconds the lab's nodes used so far, on this machine (their cgroups);
        None when that cannot be read here (nodes on other hosts, a cgroup gone)."""

    # ---- `casslab net` ---------------------------------------------------------------

    def where(self) -> str:
        """How messages name the testbed: `lab edge`, `hosts of hosts.yaml`."""

    def parse_link(self, option: str) -> tuple[str, dict[str, Any]]:
        """One `--link LINK:field=value,...` as a NetSpec link entry (its names as
        given: checked against the testbed by `checked`)."""

    def checked(self, request: NetSpec) -> NetSpec:
        """`request` checked as this testbed reads it (hosts: names of hosts allowed),
        before anything of the testbed is looked up."""

    def apply_links(self, request: NetSpec, *, replace: bool,
                    link_options: list[str]) -> LinkTable:
        """Apply `request` (from clean links when `replace`; hosts: always); the
        `--link` options as typed are checked against the testbed's endpoints."""

    def show_links(self) -> LinkTable | None:
        """The link conditions configured now (None: none)."""

    def check_links(self, *, only: list[str] | None, pings: int, loss_packets: int,
                    bandwidth: bool, bandwidth_s: float) -> list[LinkCheck]:
        """Measure the links (`only` these, None: all) where their packets start, beside
        their configuration."""

    def clear_links(self) -> None:
        """Remove every link condition (rules, queues, the packet-delay daemon)."""


@runtime_checkable
class NodeRecovery(Protocol):
    """What a lab offers the campaign's recovery from a dead node (casslab.experiment.
    recovery); a lab without it is not checked."""

    def dead_nodes(self) -> list[DeadNode]:
        """The nodes whose process died, each with its cause (casslab.lab.health)."""

    def restart_node(self, name: str, timeout_s: float) -> None:
        """Start the dead node `name` again and wait, at most timeout_s, until the
        cluster sees it UN; NodeStartError when it does not come up."""
