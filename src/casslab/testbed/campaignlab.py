"""What the campaign runner needs of a lab, whatever the nodes run on.

Two backends implement it: `LocalCampaignLab` (the lab on this machine: namespaces,
cgroups, containers) and `casslab.testbed.hostslab.HostsLab` (real hosts over SSH). The
runner calls only these methods, so a spec runs unchanged on either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from casslab import net
from casslab.cassandra.cql import NATIVE_PORT, CqlClient
from casslab.core.errors import LabStateError
from casslab.lab import Lab, LabOptions
from casslab.lab.health import DeadNode, dead_nodes
from casslab.load import LoadResult, LoadSpec
from casslab.load.multi import local_places, run_clients, with_lab_label
from casslab.metrics.sampler import NodeTarget, Sampler
from casslab.metrics.samples import TrialMetrics
from casslab.profiles.cgroups import cpu_usage_s
from casslab.profiles.credits import BALANCE_FILE
from casslab.system.process import is_same_process
from casslab.testbed.netlab import apply_net, net_target, open_lab


class TrialSampler(Protocol):
    """Samples the nodes from start() to stop()."""

    def start(self) -> None: ...

    def stop(self) -> TrialMetrics: ...


class CampaignLab(Protocol):
    """The lab a campaign builds, loads, conditions, measures and tears down."""

    name: str

    def exists(self) -> bool:
        """Anything of this lab is up or recorded (down() has something to do)."""

    def up(self, options: LabOptions) -> None:
        """Build the lab and wait until every node sees every other NORMAL."""

    def down(self) -> None:
        """Clear link conditions, stop every node, wipe the data."""

    def update_limits(self, fields: dict[str, float | int]) -> bool:
        """Change profile limits live; False when a rebuild is needed."""

    def set_links(self, mapping: Mapping[str, Any] | None) -> None:
        """Make the link conditions exactly `mapping` (a NetSpec mapping; None: none)."""

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


@runtime_checkable
class NodeRecovery(Protocol):
    """What a lab offers the campaign's recovery from a dead node (casslab.experiment.
    recovery); a lab without it is not checked."""

    def dead_nodes(self) -> list[DeadNode]:
        """The nodes whose process died, each with its cause (casslab.lab.health)."""

    def restart_node(self, name: str, timeout_s: float) -> None:
        """Start the dead node `name` again and wait, at most timeout_s, until the
        cluster sees it UN; NodeStartError when it does not come up."""


class LocalCampaignLab:
    """The lab on this machine (casslab.lab with its network emulation)."""

    def __init__(self, name: str, *, home: Path, cache: Path) -> None:
        self.lab: Lab = open_lab(name, home=home, cache=cache)
        self.name = name

    def exists(self) -> bool:
        return self.lab.exists()

    def up(self, options: LabOptions) -> None:
        self.lab.up(options)

    def down(self) -> None:
        # The lab's network extension stops the packet-delay daemon first.
        self.lab.down(wipe=True)

    def update_limits(self, fields: dict[str, float | int]) -> bool:
        return self.lab.update_limits(fields)

    def set_links(self, mapping: Mapping[str, Any] | None) -> None:
        state = self.lab.state()
        if mapping is None:
            net.clear(Path(state.directory), net_target(state).netns)
            return
        apply_net(state, net.NetSpec.from_mapping(dict(mapping), "network"))

    def cql(self) -> CqlClient:
        return self.lab.cql()

    def addresses(self) -> tuple[str, ...]:
        return tuple(n.address for n in self.lab.state().nodes
                     if is_same_process(n.pid, n.start_ticks))

    def netns(self) -> str | None:
        return self.lab.state().netns

    def contact_points(self) -> list[str]:
        """The running nodes' CQL endpoints; LabStateError naming each dead node and its
        cause when none runs (casslab-load would only say its --hosts is empty)."""
        points = [f"{a}:{NATIVE_PORT}" for a in self.addresses()]
        if not points:
            why = ([f"{d.name} {d.cause}" for d in self.dead_nodes()]
                   or [f"{n.name} was stopped (casslab lab stop-node)"
                       for n in self.lab.state().nodes if n.pid == 0])
            raise LabStateError(f"lab '{self.name}' has no running node to connect to: "
                                + "; ".join(why))
        return points

    def dead_nodes(self) -> list[DeadNode]:
        return dead_nodes(self.lab.state()) if self.lab.exists() else []

    def restart_node(self, name: str, timeout_s: float) -> None:
        self.lab.start_node(name, timeout_s=timeout_s)

    def load(self, spec: LoadSpec, *, guard: list[str], clients: int = 1,
             work_dir: Path | None = None) -> LoadResult:
        work = work_dir or Path(self.lab.directory) / "load-clients"
        places = local_places(clients, [*self.lab.exec_prefix(), *guard], work)
        return run_clients(with_lab_label(spec, self.name), hosts=self.contact_points(),
                           places=places, work_dir=work)

    def sampler(self, interval_s: float,
                cql: Callable[[], AbstractContextManager[Any]] | None) -> TrialSampler:
        state = self.lab.state()
        credits = Path(state.directory) / BALANCE_FILE
        targets = [NodeTarget(n.name, n.pid, n.address, Path(n.directory) / "data", credits)
                   for n in state.nodes if is_same_process(n.pid, n.start_ticks)]
        return Sampler(targets, interval_s=interval_s, cql=cql)

    def cpu_seconds(self) -> float | None:
        total = 0.0
        for n in self.lab.state().nodes:
            used = cpu_usage_s(n.cgroup_dirs)
            if used is None:
                return None
            total += used
        return total
