"""The local testbed: a lab on this machine (casslab.lab: namespaces, cgroups,
containers) with its network emulation, behind the `Testbed` seam (casslab.testbed.base).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casslab import net
from casslab.cassandra.cql import NATIVE_PORT, CqlClient
from casslab.core.errors import LabStateError
from casslab.hardware.cgroups import cpu_usage_s
from casslab.hardware.credits import BALANCE_FILE
from casslab.lab import Lab, LabOptions, LabState
from casslab.lab.cluster import NodeStatus, Progress
from casslab.lab.health import DeadNode, dead_nodes
from casslab.lab.state import check_node_ref
from casslab.load import LoadResult, LoadSpec
from casslab.load.multi import local_places, run_clients, with_lab_label
from casslab.metrics.sampler import NodeTarget, Sampler
from casslab.net.spec import NetSpec, link_label, parse_link_option
from casslab.system.process import is_same_process
from casslab.testbed.base import Built, LinkRow, LinkTable, TrialSampler
from casslab.testbed.netlab import apply_net, net_target, open_lab, probe_endpoints

if TYPE_CHECKING:
    from casslab.net.linkcheck import LinkCheck


class LocalTestbed:
    """The lab on this machine (casslab.lab with its network emulation)."""

    def __init__(self, name: str, *, home: Path, cache: Path) -> None:
        self.lab: Lab = open_lab(name, home=home, cache=cache)
        self.name = name

    def exists(self) -> bool:
        return self.lab.exists()

    def fixed_nodes(self) -> int | None:
        return None

    def up(self, options: LabOptions, progress: Progress | None = None) -> Built:
        state = self.lab.up(options, progress=progress)
        return Built(f"up: {len(state.nodes)} nodes, Cassandra {state.cassandra_version}, "
                     f"profile {state.profiles_text()}, namespace {state.netns or '(none)'}",
                     tuple(state.warnings))

    def down(self, *, wipe: bool = True) -> str:
        # The lab's network extension stops the packet-delay daemon first.
        self.lab.down(wipe=wipe)
        return "down" + (" and wiped" if wipe else " (data kept)")

    def status(self) -> list[NodeStatus]:
        return self.lab.status()

    def log_file(self, ref: str) -> Path | None:
        check_node_ref(ref)
        return self.lab.log_path(ref)

    def log_text(self, ref: str, lines: int) -> str:
        path = self.log_file(ref)
        assert path is not None
        text = path.read_text(errors="replace").splitlines(keepends=True)
        return "".join(text[-lines:] if lines else [])

    def close(self) -> None:
        """Nothing held open: the lab's state is on disk."""

    def pause(self) -> None:
        self.lab.pause()

    def resume(self) -> None:
        self.lab.resume()

    def update_limits(self, fields: dict[str, float | int]) -> bool:
        return self.lab.update_limits(fields)

    def set_links(self, spec: net.NetSpec | None) -> None:
        state = self.lab.state()
        if spec is None:
            net.clear(Path(state.directory), net_target(state).netns)
            return
        apply_net(state, spec)

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

    # ---- `casslab net` ---------------------------------------------------------------

    def where(self) -> str:
        return f"lab {self.name}"

    def parse_link(self, option: str) -> tuple[str, dict[str, Any]]:
        return parse_link_option(option, None)

    def checked(self, request: NetSpec) -> NetSpec:
        request.check()
        return request

    def _state(self) -> LabState:
        state = self.lab.state()
        if not state.netns:
            raise LabStateError(f"lab '{self.name}' has no network namespace (made with "
                                "--no-netns): network emulation needs the lab's own namespace")
        return state

    def apply_links(self, request: NetSpec, *, replace: bool,
                    link_options: list[str]) -> LinkTable:
        state = self._state()
        for x in link_options:  # node names against the lab's size
            parse_link_option(x, len(state.nodes))
        applied = apply_net(state, request, replace=replace)
        return _link_table(self.name, applied)

    def show_links(self) -> LinkTable | None:
        applied = net.load(Path(self._state().directory))
        if applied is None:
            return None
        table = _link_table(self.name, applied)
        if not net.is_active(applied):
            table.warnings[:] = [
                "not enforced now (namespace or casslab-netem gone); apply again with "
                f"`casslab net set --name {self.name} --replace ...`"]
        return table

    def check_links(self, *, only: list[str] | None, pings: int, loss_packets: int,
                    bandwidth: bool, bandwidth_s: float) -> list[LinkCheck]:
        from casslab.net.linkcheck import check, check_options  # the prober: only here

        check_options(links=only, pings=pings, loss_packets=loss_packets,
                      bandwidth_s=bandwidth_s)
        state = self._state()
        applied = net.load(Path(state.directory))
        if applied is None:
            raise LabStateError(f"lab '{self.name}' has no network emulation; set some with "
                                f"`casslab net set --name {self.name} --profile wifi`")
        return check(applied, links=only, pings=pings, loss_packets=loss_packets,
                     bandwidth=bandwidth, bandwidth_s=bandwidth_s,
                     endpoints=probe_endpoints(state))

    def clear_links(self) -> None:
        state = self._state()
        net.clear(Path(state.directory), net_target(state).netns)


def _link_table(name: str, state: net.NetState) -> LinkTable:
    d = state.daemon
    title = (f"lab {name}: links (one-way), congestion control {state.cc}, seed {state.seed}, "
             f"casslab-netem {'pid ' + str(d.pid) if d and d.alive() else 'not running'}")
    rows = [LinkRow(link_label((src, dst)),
                    f"{state.addresses[src]} -> {state.addresses[dst]}", c)
            for (src, dst), c in state.table.items()]
    return LinkTable(title, rows, warnings=list(state.warnings))
