"""A lab on real hosts: the `Testbed` (casslab.testbed.base) over SSH (issue 20).

The inventory (casslab.testbed.hosts.inventory) names the hosts: group `nodes` runs Cassandra,
group `clients` runs casslab-load. `up` provisions every host with casslab's playbook,
starts every node at once over SSH and waits as the local lab does (CQL up, then every
node sees every other NORMAL); `down` stops them and wipes their data. The load clients
run on the client hosts over `ssh`, dealt round-robin, with a user profile pushed there
first (on this machine when the inventory has no client).

asyncssh is asynchronous and the runner is not: one event loop in a thread of its own
holds one connection per host for the lab's whole life (a Fleet), and every call here
waits for its coroutine there.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shlex
import shutil
import threading
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import casslab
from casslab import net
from casslab.cassandra.config import parse_overrides
from casslab.cassandra.cql import NATIVE_PORT, CqlClient, gossip_table, status_code
from casslab.cassandra.distribution import Distribution, resolve
from casslab.core.errors import CasslabError, CqlError, LabStateError, UsageError
from casslab.hardware.profiles import resolve_profile
from casslab.lab import LabOptions
from casslab.lab.cluster import NodeStatus, Progress
from casslab.lab.state import DEFAULT_RUNTIME
from casslab.load import LoadResult, LoadSpec
from casslab.load.multi import ClientPlace, check_count, local_places, run_clients
from casslab.metrics.samples import TrialMetrics
from casslab.net.spec import NetSpec, parse_link_option
from casslab.testbed.base import Built, LinkRow, LinkTable, TrialSampler
from casslab.testbed.hosts import cluster, links, provision, sshrun, trialmetrics
from casslab.testbed.hosts import inventory as inv
from casslab.testbed.hosts.inventory import Host, Inventory
from casslab.testbed.hosts.linkrules import checked_for_hosts, translate_link_option
from casslab.testbed.hosts.provision import RemoteNode
from casslab.testbed.hosts.record import RECORD, HostsRecord, hosts_dir, write_record
from casslab.testbed.hosts.ssh import Fleet

if TYPE_CHECKING:
    from casslab.net.linkcheck import LinkCheck

T = TypeVar("T")
# Cassandra's heap rule on a host whose memory casslab could not read.
FALLBACK_MEMORY_MIB = 2048


def default_bin_dir() -> Path:
    """Where casslab-load and casslab-netem were built (pushed to every host)."""
    return Path(casslab.__file__).resolve().parents[2] / "target" / "release"


def ssh_argv(host: Host) -> list[str]:
    """An OpenSSH command line to `host`, as the inventory says to reach it; the remote
    command follows as ONE word (ssh hands it to the remote shell)."""
    argv = ["ssh", "-o", "BatchMode=yes", "-p", str(host.port)]
    if host.key_file:
        argv += ["-i", str(host.key_file)]
    argv += shlex.split(host.ssh_common_args or "")
    return [*argv, f"{host.user}@{host.address}"]


def stress_profile(workload: str) -> Path | None:
    """The controller's cassandra-stress user profile a workload names (None for a
    built-in workload); UsageError when the file is missing."""
    if not workload.endswith((".yaml", ".yml")):
        return None
    path = Path(workload).resolve()
    if not path.is_file():
        raise UsageError(f"workload profile {workload} does not exist")
    return path


def remote_stress_profile(host: Host, profile: Path) -> str:
    """Where a client host keeps its copy of a user profile: named by content, so two
    profiles of one name in different folders never overwrite each other."""
    digest = hashlib.sha256(profile.read_bytes()).hexdigest()[:12]
    return str(Path(host.install_root) / "run" / "profiles" / f"{digest}-{profile.name}")


class _Loop:
    """An asyncio loop in its own thread, for synchronous callers."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="casslab-hosts",
                                       daemon=True)
        self.thread.start()

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class HostsTestbed:
    """A lab on the hosts of an inventory (see the module docstring)."""

    def __init__(self, name: str, inventory_path: Path, *, home: Path, cache: Path,
                 bin_dir: Path | None = None, profiles_file: Path | None = None,
                 known_hosts: Path | None = None) -> None:
        """known_hosts: the hosts' keys (default: the inventory's, else ~/.ssh's)."""
        self.name = name
        self.inventory_given = inventory_path  # as the user wrote it, for messages
        self.inventory_path = inventory_path.resolve()
        self.inventory: Inventory = inv.load(self.inventory_path, profiles_file)
        self.home = home
        self.cache = cache
        self.bin_dir = bin_dir or default_bin_dir()
        self.directory = hosts_dir(home) / name
        self.nodes: list[RemoteNode] = provision.remote_nodes(self.inventory)
        self.profiles_file = profiles_file
        self.known_hosts = known_hosts
        self._loop: _Loop | None = None
        self._fleet: Fleet | None = None
        self._started: list[cluster.Started] | None = None

    # ---- the SSH side -----------------------------------------------------------------

    def _hosts(self) -> list[Host]:
        return [h for h in self.inventory.hosts if h.roles]

    def _call(self, make: Callable[[Fleet], Coroutine[Any, Any, T]]) -> T:
        """Run make(fleet) on the lab's loop, connecting first if needed."""
        if self._loop is None:
            self._loop = _Loop()
        if self._fleet is None:
            known = self.known_hosts or next(
                (h.known_hosts for h in self._hosts() if h.known_hosts), None)
            fleet = Fleet(self._hosts(), known_hosts=known)
            self._loop.call(fleet.__aenter__())
            self._fleet = fleet
        fleet = self._fleet
        return self._loop.call(make(fleet))

    def close(self) -> None:
        """Close the connections (the lab keeps running)."""
        if self._fleet is not None and self._loop is not None:
            fleet, self._fleet = self._fleet, None
            self._loop.call(fleet.close())
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def pause(self) -> None:
        raise UsageError(f"lab {self.name}: the hosts' nodes cannot be paused (design.labs: "
                         "keep is for local labs; valid here: rebuild)")

    def resume(self) -> None:
        raise UsageError(f"lab {self.name}: the hosts' nodes cannot be paused or resumed")

    # ---- Testbed ----------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.directory / RECORD).exists()

    def fixed_nodes(self) -> int | None:
        return len(self.nodes)

    def up(self, options: LabOptions, progress: Progress | None = None) -> Built:
        if self.exists():  # as a local lab refuses to start over its running nodes
            raise LabStateError(f"lab '{self.name}' is up on hosts "
                                f"({', '.join(n.host.name for n in self.nodes)}): take it "
                                f"down first (casslab lab down --name {self.name})")
        self._check(options)
        if progress is not None:
            progress(f"provisioning {len(self.inventory.hosts)} hosts and starting "
                     f"{len(self.nodes)} nodes")
        dist = resolve(options.cassandra_version, self.cache)
        staging = self.directory / "staging"
        staging.mkdir(parents=True, exist_ok=True)
        self._record(dist)  # before anything starts: `lab down` must find what did
        try:
            provision.provision(self.inventory_path, self.inventory, dist, self.bin_dir,
                                staging, self.cache, lab_name=self.name,
                                overrides=parse_overrides(options.overrides))
            heap = options.heap_mib or self._heap_mib()
        except BaseException:
            # No node started yet: nothing runs anywhere, so nothing to record.
            self.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        try:
            started = self._call(lambda f: cluster.start(
                f, self.nodes, dist, heap, lab=self.name, profiles_file=self.profiles_file))
            self._started = started
            self._call(lambda f: cluster.wait_cql(f, started, options.timeout_s))
            cluster.wait_all_normal(self.nodes, options.timeout_s)
        except BaseException:
            # Leave nothing running on the other hosts; the record stays if that fails.
            with contextlib.suppress(CasslabError):
                self.down()
            raise
        return Built(f"up on hosts: {len(self.nodes)} nodes "
                     f"({', '.join(n.host.name for n in self.nodes)}), Cassandra {dist.version}")

    def _check(self, options: LabOptions) -> None:
        count = len(self.nodes)
        if options.nodes != count:
            raise UsageError(f"nodes {options.nodes}: the inventory {self.inventory_path} has "
                             f"{count} in group `nodes` (on hosts the inventory sets the "
                             "nodes)")
        if options.profile != "host" or options.profile_fields or options.node_profiles:
            raise UsageError(f"profile {options.profile}: on hosts each node's profile is the "
                             "inventory's casslab_profile (valid here: host, no profile "
                             "factors)")
        if options.runtime != DEFAULT_RUNTIME:
            raise UsageError(f"runtime {options.runtime}: on hosts the nodes run as processes "
                             f"(valid: {DEFAULT_RUNTIME})")
        if options.net is not None:
            raise UsageError("net: link conditions on hosts come from the campaign's network "
                             "settings")

    def _heap_mib(self) -> int:
        """The smallest heap any node's profile gives it on its host's memory."""
        async def memory(fleet: Fleet) -> list[int]:
            outs = await asyncio.gather(*(fleet.run_on(
                n.host, "awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo",
                check=False) for n in self.nodes))
            return [int(o.stdout.strip() or FALLBACK_MEMORY_MIB) for o in outs]

        mems = self._call(memory)
        return min(resolve_profile(n.host.profile, self.profiles_file).effective_heap_mib(mem)
                   for n, mem in zip(self.nodes, mems, strict=True))

    def _record(self, dist: Distribution) -> None:
        write_record(self.home, HostsRecord(
            self.name, str(self.inventory_path), dist.version, [n.host.name for n in self.nodes],
            str(self.profiles_file.resolve()) if self.profiles_file else None))

    def down(self, *, wipe: bool = True) -> str:
        """Stop every node, wipe its data and logs (the install root's jars stay for the
        next run), forget the lab. Always wiped (`wipe` is not read): the next `up`
        provisions afresh."""
        names = ", ".join(n.host.name for n in self.nodes)
        try:
            try:
                self._call(lambda f: links.clear_hosts(f, self.inventory))
            finally:
                # Killed at once: on TERM each node drains and flushes its memtables,
                # work the wipe below throws away (as a local lab's `down --wipe`).
                self._call(lambda f: cluster.stop(f, self.nodes, grace_s=0.0))
                self._started = None
            self._call(self._wipe)
        finally:
            self.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        return f"down on its hosts ({names}) and wiped"

    async def _wipe(self, fleet: Fleet) -> None:
        async def one(n: RemoteNode) -> None:
            d = Path(n.layout.directory)
            dirs = " ".join(shlex.quote(str(d / s)) for s in (
                "data", "commitlog", "saved_caches", "hints", "cdc_raw", "logs"))
            await fleet.run_on(n.host, f"rm -rf {dirs}")

        await asyncio.gather(*(one(n) for n in self.nodes))

    def status(self) -> list[NodeStatus]:
        """`lab status` rows: whether each node's JVM runs on its host (over SSH), and
        its gossip state and load as the running nodes see them."""
        async def running(fleet: Fleet) -> list[int | None]:
            async def one(n: RemoteNode) -> int | None:
                pid_file = shlex.quote(str(Path(n.layout.directory) / cluster.PID_FILE))
                out = await fleet.run_on(n.host, f"pid=$(cat {pid_file} 2>/dev/null) && "
                                         f"{cluster.is_node_test('$pid', n)} && echo $pid",
                                         check=False)
                return int(out.stdout) if out.stdout.strip().isdigit() else None

            return list(await asyncio.gather(*(one(n) for n in self.nodes)))

        pids = self._call(running)
        alive = [n.layout.address for n, pid in zip(self.nodes, pids, strict=True) if pid]
        gossip: dict[str, tuple[str, float | None]] = {}
        if alive:
            with contextlib.suppress(CqlError), CqlClient(alive, netns=None) as cql:
                gossip = gossip_table(cql)
        out = []
        for n, pid in zip(self.nodes, pids, strict=True):
            status, load = gossip.get(n.layout.address, ("", None))
            out.append(NodeStatus(f"{n.layout.name} ({n.host.name})", n.layout.address,
                                  status_code(pid is not None, status), load, n.host.profile,
                                  pid))
        return out

    def update_limits(self, fields: dict[str, float | int]) -> bool:
        return not fields

    def set_links(self, spec: net.NetSpec | None) -> None:
        """The campaign's link table between the hosts (node1..N in inventory order, the
        client hosts as `client`), shaped on each host's data interface over SSH."""
        if spec is None:
            self._call(lambda f: links.clear_hosts(f, self.inventory))
            return
        self._call(lambda f: links.apply_hosts(f, self.inventory, spec))

    def cql(self) -> CqlClient:
        return CqlClient(list(self.addresses()), netns=None)

    def addresses(self) -> tuple[str, ...]:
        return tuple(n.layout.address for n in self.nodes)

    def netns(self) -> str | None:
        return None

    def contact_points(self) -> list[str]:
        return [f"{a}:{NATIVE_PORT}" for a in self.addresses()]

    def client_hosts(self) -> list[Host]:
        """Where the load runs: the inventory's clients (none: this machine)."""
        return list(self.inventory.clients)

    def load(self, spec: LoadSpec, *, guard: list[str], clients: int = 1,
             work_dir: Path | None = None) -> LoadResult:
        """`clients` casslab-load processes on the client hosts, dealt round-robin (on
        this machine when the inventory has no client), started together, their logs
        fetched over SFTP and merged (casslab.load.multi)."""
        hosts = self.client_hosts()
        work = work_dir or self.directory / "load-clients"
        places = (self._places(hosts, clients, guard, spec.workload) if hosts
                  else local_places(clients, guard, work))
        return run_clients(spec, hosts=self.contact_points(), places=places, work_dir=work)

    def _places(self, hosts: list[Host], clients: int, guard: list[str],
                workload: str) -> list[ClientPlace]:
        check_count(clients, "workload.clients")
        used = [hosts[i % len(hosts)] for i in range(clients)]
        distinct = list({h.name: h for h in used}.values())
        profile = stress_profile(workload)

        async def prepare(fleet: Fleet) -> None:
            await asyncio.gather(*(fleet.run_on(h, "mkdir -p " + shlex.quote(
                str(Path(h.install_root) / "run"))) for h in distinct))
            if profile is not None:  # each host's copy has its own install root
                await asyncio.gather(*(fleet.push(profile, remote_stress_profile(h, profile),
                                                  hosts=[h]) for h in distinct))

        self._call(prepare)
        return [ClientPlace(f"client{i + 1}", (*sshrun.prefix(ssh_argv(h)), *guard),
                            str(Path(h.install_root) / "bin" / "casslab-load"),
                            str(Path(h.install_root) / "run"), self._fetcher(h),
                            {str(profile): remote_stress_profile(h, profile)} if profile else {})
                for i, h in enumerate(used)]

    def _fetcher(self, host: Host) -> Callable[[str, Path], None]:
        def fetch(remote: str, local: Path) -> None:
            self._call(lambda f: f.fetch(host, remote, local))

        return fetch

    def sampler(self, interval_s: float,
                cql: Callable[[], AbstractContextManager[Any]] | None) -> TrialSampler:
        return _HostsSampler(self, interval_s, cql)

    def cpu_seconds(self) -> float | None:
        """The nodes run on other machines: nothing of theirs to subtract here."""
        return None

    def started(self) -> list[cluster.Started]:
        """The running nodes' pids: from this run's start, else from their pid files."""
        if self._started is None:
            async def read(fleet: Fleet) -> list[cluster.Started]:
                async def one(n: RemoteNode) -> cluster.Started | None:
                    pid_file = shlex.quote(str(Path(n.layout.directory) / cluster.PID_FILE))
                    out = await fleet.run_on(n.host, f"cat {pid_file} 2>/dev/null",
                                             check=False)
                    text = out.stdout.strip()
                    return cluster.Started(n, int(text)) if text.isdigit() else None

                found = await asyncio.gather(*(one(n) for n in self.nodes))
                return [s for s in found if s is not None]

            self._started = self._call(read)
        return self._started

    def log_file(self, ref: str) -> Path | None:
        """The log is on the node's host (read with log_text)."""
        return None

    def log_text(self, ref: str, lines: int | None) -> str:
        """A node's system.log (its last `lines`, all with None); ref: node1 or a host."""
        node = next((n for n in self.nodes if ref in (n.layout.name, n.host.name,
                                                     n.layout.name.removeprefix("node"))),
                    None)
        if node is None:
            valid = ", ".join(f"{n.layout.name} ({n.host.name})" for n in self.nodes)
            raise UsageError(f"node {ref!r} is not in lab '{self.name}' (valid: {valid})")
        return self._call(lambda f: cluster.node_log(f, node, lines))

    # ---- `casslab net` ---------------------------------------------------------------

    def where(self) -> str:
        return f"hosts of {self.inventory_given}"

    def parse_link(self, option: str) -> tuple[str, dict[str, Any]]:
        # Links may name hosts (pi1-pi2): the name stays as given until `checked`.
        return (option.partition(":")[0].strip(),
                parse_link_option(translate_link_option(option, self.inventory), None)[1])

    def checked(self, request: NetSpec) -> NetSpec:
        request = checked_for_hosts(request, self.inventory)  # a --spec may name hosts too
        request.check()
        return request

    def apply_links(self, request: NetSpec, *, replace: bool,
                    link_options: list[str]) -> LinkTable:
        """Always from clean links (`replace` is not read): each host's rules are
        replaced as a whole."""
        state = self._call(lambda f: links.apply_hosts(f, self.inventory, request))
        return self._table(state)

    def _table(self, state: links.HostsNetState) -> LinkTable:
        modes = ", ".join(f"{h.host}: {h.mode} on {h.device}" for h in state.hosts.values())
        return LinkTable(f"{self.where()}: link conditions",
                         [LinkRow(k.label, f"{k.src.address} -> {k.dst.address}", k.conditions)
                          for k in state.links],
                         notes=[f"enforced by {modes}"], warnings=list(state.warnings))

    def show_links(self) -> LinkTable | None:
        state = self._call(lambda f: links.load_hosts(f, self.inventory))
        return None if state is None else self._table(state)

    def check_links(self, *, only: list[str] | None, pings: int, loss_packets: int,
                    bandwidth: bool, bandwidth_s: float) -> list[LinkCheck]:
        """Round trip and loss per direction, `pings` per link; one-way delay and
        bandwidth are not measured between hosts."""
        if only:
            raise UsageError("--link: not with --inventory (every link between the hosts "
                             "is checked)")
        state = self._call(lambda f: links.load_hosts(f, self.inventory))
        if state is None:
            raise LabStateError(f"no link conditions on the {self.where()}")
        return self._call(lambda f: links.check_hosts(f, state, pings=pings))

    def clear_links(self) -> None:
        self._call(lambda f: links.clear_hosts(f, self.inventory))


class _HostsSampler:
    """The hosts' remote samplers (casslab.testbed.hosts.trialmetrics) as a TrialSampler: they
    run on the lab's event loop while the trial's load runs in the caller's thread."""

    def __init__(self, lab: HostsTestbed, interval_s: float,
                 cql: Callable[[], AbstractContextManager[Any]] | None) -> None:
        self.lab = lab
        self.interval_s = interval_s
        self.cql = cql
        self._sampling: trialmetrics.HostSampling | None = None

    def start(self) -> None:
        started = self.lab.started()
        self._sampling = self.lab._call(
            lambda f: trialmetrics.start(f, started, self.interval_s, cql=self.cql))

    def stop(self) -> TrialMetrics:
        if self._sampling is None:
            return TrialMetrics()
        sampling, self._sampling = self._sampling, None
        return self.lab._call(lambda _f: sampling.stop())
