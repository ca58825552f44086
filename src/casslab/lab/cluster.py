"""A local lab: N real Cassandra nodes on this machine, each with its own address,
cgroup and directory, inside a network namespace owned by the lab.

`Lab` is the library API the CLI calls; every step that creates something is
recorded in the lab's state file before the next one starts, so `down` can
always clean up, even after casslab was killed.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from casslab.cassandra import cds
from casslab.cassandra import config as cconf
from casslab.cassandra.cql import CqlClient, gossip_table, gossip_views, status_code
from casslab.cassandra.distribution import DEFAULT_VERSION, Distribution, check_version, resolve
from casslab.core.errors import (
    CasslabError,
    CgroupError,
    CqlError,
    LabStateError,
    NodeStartError,
    UsageError,
)
from casslab.hardware import cgroups
from casslab.hardware.credits import BALANCE_FILE, read_balance_file, time_scale_from_env
from casslab.hardware.profiles import LIVE_FIELDS, HardwareProfile, describe
from casslab.lab import credits, node
from casslab.lab.nodeprofiles import cpu_warning, node_profiles
from casslab.lab.runtime import NodeRuntime, runtime_for
from casslab.lab.state import (
    DEFAULT_RUNTIME,
    DEFAULT_TIMEOUT_S,
    MAX_NODES,
    LabState,
    NodeState,
    lab_lock,
    list_labs,
    system_name,
    validate_name,
)
from casslab.system import netns
from casslab.system.process import (
    all_threads_stopped,
    is_same_process,
    kill_now,
    signal_process,
    terminate,
)

# Beyond the heap, a Cassandra JVM needs metaspace, thread stacks and direct buffers.
NODE_OVERHEAD_MIB = 256
# A node that started and did not answer CQL in this long on its own is stuck.

Progress = Callable[[str], None]


class LabExtension(Protocol):
    """Something a layer above the lab attaches to it (e.g. its network emulation).

    The lab knows nothing of what an extension does; it calls it at three points so
    that what the extension made lives and dies with the lab.
    """

    def check(self, lab: Lab, options: LabOptions) -> None:
        """Validate the options this extension reads, before anything starts."""

    def after_up(self, lab: Lab, state: LabState, options: LabOptions,
                 say: Progress) -> list[str]:
        """Run once every node is ready; return warnings to record in the state."""

    def before_teardown(self, lab: Lab, state: LabState) -> None:
        """Undo what after_up made; runs before the nodes stop and the namespace goes.
        Must work from files alone (casslab may have been killed)."""


@dataclass(frozen=True)
class LabOptions:
    """What `lab up` builds. Units in names; validated by `Lab.up`."""

    nodes: int = 3
    profile: str = "host"
    profiles_file: Path | None = None
    cassandra_version: str = DEFAULT_VERSION
    overrides: list[str] = field(default_factory=list)
    timeout_s: float = DEFAULT_TIMEOUT_S
    jvm_options: list[str] = field(default_factory=list)
    # False: nodes bind loopback aliases in the caller's namespace, so tools on this
    # host reach them directly (at the cost of per-lab network emulation).
    own_namespace: bool = True
    # Link conditions applied once the cluster is up: a link profile name (wifi, edge,
    # ...) or a link-spec YAML file (see `casslab net set --help`). Read by the
    # network extension (casslab.testbed), not by the lab itself.
    net: str | None = None
    net_profiles_file: Path | None = None
    # Overrides the profile's heap (MiB).
    heap_mib: int | None = None
    # What each node runs in: see casslab.lab.runtime (process, netns).
    runtime: str = DEFAULT_RUNTIME
    # Nodes with a profile of their own: {"node3": "rpi3"} (`--node-profile node3=rpi3`).
    node_profiles: dict[str, str] = field(default_factory=dict)
    # Profile fields set over every node's profile ({"memory_mib": 2048}; see
    # casslab.hardware.profiles.with_fields).
    profile_fields: dict[str, float | int] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeStatus:
    """One row of `lab status`. state: UN, DN, UJ/UL/... (gossip), or '?' when unknown."""

    name: str
    address: str
    state: str
    load_mib: float | None
    profile: str
    pid: int | None
    # The node's CPU credit balance (burstable profiles while the lab is up), else None.
    cpu_credits: float | None = None


def host_memory_mib() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)


# A node without a memory limit sizes its heap as if it had this much memory: labs and
# their load generators share one machine, and Cassandra's rule on the whole machine
# (6 GiB of heap on 24 GiB) would let three one-node labs exhaust it.
UNLIMITED_NODE_BASIS_MIB = 4096


def unlimited_node_memory_mib(host_mib: int, nodes: int) -> int:
    """The memory Cassandra's heap rule sees for a node of a profile without a limit:
    its share of this machine, at most UNLIMITED_NODE_BASIS_MIB (heap 1 GiB)."""
    return min(host_mib // max(nodes, 1), UNLIMITED_NODE_BASIS_MIB)


def validate_node_count(count: int, heap_mib: int, memory_mib: int) -> None:
    """Refuse N < 1, N > MAX_NODES, or more nodes than this machine's memory holds."""
    if count < 1:
        raise UsageError(f"--nodes {count}: a lab needs at least 1 node")
    if count > MAX_NODES:
        raise UsageError(f"--nodes {count}: at most {MAX_NODES} nodes per lab")
    need = count * (heap_mib + NODE_OVERHEAD_MIB)
    if need > memory_mib * 0.9:
        raise UsageError(
            f"--nodes {count}: {count} nodes x ({heap_mib} MiB heap + {NODE_OVERHEAD_MIB} MiB) "
            f"= {need} MiB exceeds 90 % of this machine's {memory_mib} MiB; use fewer nodes or a "
            "smaller profile"
        )


class Lab:
    """One named lab under `home`; jars come from `cache`."""

    def __init__(self, name: str, *, home: Path, cache: Path,
                 extensions: tuple[LabExtension, ...] = ()) -> None:
        self.name = validate_name(name)
        self.extensions = extensions
        self.home = home
        self.cache = cache
        self.directory = home / "labs" / name
        self.system_name = system_name(name, home)

    # ---- state -------------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.directory / "lab.json").exists()

    def state(self) -> LabState:
        """The lab's saved state; LabStateError when there is no such lab."""
        if not self.exists():
            raise LabStateError(f"no lab named '{self.name}' (see `casslab lab list`)")
        return LabState.load(self.directory)

    def running_nodes(self, state: LabState | None = None) -> list[NodeState]:
        st = state or self.state()
        return [n for n in st.nodes if is_same_process(n.pid, n.start_ticks)]

    def is_running(self) -> bool:
        return self.exists() and bool(self.running_nodes())

    # ---- up ----------------------------------------------------------------------------

    def up(self, options: LabOptions, progress: Progress | None = None) -> LabState:
        """Start the lab and return when every node is UN and answers CQL.

        Raises UsageError for bad options, LabStateError when the lab is running,
        NodeStartError (with the failing node's log tail) when a node dies or is
        not ready within options.timeout_s; in every failure case nothing it
        started is left running.
        """
        say = progress or (lambda _msg: None)
        validate_node_count(options.nodes, 0, host_memory_mib())
        profiles = node_profiles(options.profile, options.node_profiles, options.nodes,
                                 profiles_file=options.profiles_file,
                                 fields=options.profile_fields)
        basis = unlimited_node_memory_mib(host_memory_mib(), options.nodes)
        heaps = [options.heap_mib or p.effective_heap_mib(basis) for p in profiles]
        validate_node_count(options.nodes, max(heaps), host_memory_mib())
        overrides = cconf.parse_overrides(options.overrides)
        if options.heap_mib is not None and options.heap_mib < 256:
            raise UsageError(f"--heap-mib {options.heap_mib}: Cassandra needs at least 256 MiB")
        if options.timeout_s <= 0:
            raise UsageError(f"--timeout {options.timeout_s}: must be > 0 seconds")
        check_version(options.cassandra_version)
        credit_time_scale = time_scale_from_env()
        runtime_for(options.runtime).check(own_namespace=options.own_namespace,
                                           can_use_namespaces=netns.can_use_namespaces())
        for ext in self.extensions:
            ext.check(self, options)
        with lab_lock(self.directory):
            if self.exists():
                old = LabState.load(self.directory)
                alive = self.running_nodes(old)
                if alive:
                    raise LabStateError(
                        f"lab '{self.name}' is running ({len(alive)} of {len(old.nodes)} nodes "
                        f"up); take it down first: casslab lab down --name {self.name}"
                    )
                self._teardown(old)
                self._check_data_matches(old, options.nodes)
            say(f"resolving Cassandra {options.cassandra_version}")
            dist = resolve(options.cassandra_version, self.cache)
            state = self._initial_state(options, profiles, heaps, overrides)
            warning = cpu_warning(profiles, os.cpu_count() or 1)
            if warning:
                state.warnings.append(warning)
            state.save()
            try:
                self._build(state, dist, profiles, options, say)
                self._start_credits(state, {n.name: p for n, p in zip(state.nodes, profiles,
                                                                      strict=True)},
                                    credit_time_scale, say)
                for ext in self.extensions:
                    state.warnings.extend(ext.after_up(self, state, options, say))
                    state.save()
            except BaseException as exc:
                # The start error (with the node's log tail) is what the user needs;
                # a clean-up failure is added to it, never put in its place.
                try:
                    self._teardown(state)
                except CasslabError as cleanup:
                    exc.add_note(f"clean-up after the failure also failed: {cleanup}")
                raise
            return state

    def _start_credits(self, state: LabState, profiles: dict[str, HardwareProfile],
                       time_scale: float, say: Progress) -> None:
        """Start the CPU credit controller when some node's profile is burstable."""
        nodes, warnings = credits.burst_nodes(state, profiles)
        state.warnings.extend(warnings)
        if not nodes:
            return
        say(f"starting the CPU credit controller for {', '.join(n.node for n in nodes)}")
        if time_scale != 1.0:
            state.warnings.append(f"CPU credits are accounted {time_scale:g}x faster than "
                                  "real time (CASSLAB_CREDIT_TIME_SCALE)")
        config = credits.ControllerConfig(time_scale, credits.TICK_S, tuple(nodes))
        pid, ticks = credits.start(self.directory, config)
        state.credit_controller_pid, state.credit_controller_ticks = pid, ticks
        state.save()

    def _check_data_matches(self, old: LabState, count: int) -> None:
        if len(old.nodes) != count and any(Path(n.directory, "data").exists() for n in old.nodes):
            raise LabStateError(
                f"lab '{self.name}' keeps data of {len(old.nodes)} nodes; use --nodes "
                f"{len(old.nodes)} or remove it: casslab lab down --name {self.name} --wipe"
            )

    def _initial_state(self, options: LabOptions, profiles: list[HardwareProfile],
                       heaps: list[int], overrides: dict[str, object]) -> LabState:
        is_root = os.geteuid() == 0
        use_netns = options.own_namespace and netns.can_use_namespaces()
        subnet = 1 if use_netns else self._free_subnet()
        runtime = runtime_for(options.runtime)
        addresses = runtime.addresses(subnet, options.nodes)
        lab_netns = netns.namespace_name(self.system_name) if use_netns else None
        state = LabState(
            name=self.name,
            directory=str(self.directory),
            cassandra_version=options.cassandra_version,
            profile=options.profile,
            netns=lab_netns,
            cgroup_version=None,
            subnet=subnet,
            seeds=[addresses[0]],
            overrides=overrides,
            nodes=[NodeState(i, a, str(self.directory / f"node{i}"), heap_mib=heaps[i - 1],
                             netns=runtime.node_netns(lab_netns, i),
                             profile=(None if profiles[i - 1].name == options.profile
                                      else profiles[i - 1].name))
                   for i, a in enumerate(addresses, start=1)],
            runtime=runtime.name,
            profile_fields=dict(options.profile_fields),
            profiles_file=None if options.profiles_file is None else str(options.profiles_file),
        )
        if not is_root:
            state.warnings.append(
                "not running as root: nodes use loopback aliases 127.0."
                f"{subnet}.N in this network namespace, and no cgroup limits are applied"
            )
        elif not use_netns:
            state.warnings.append(f"no namespace: nodes use loopback aliases 127.0.{subnet}.N "
                                  "in this network namespace")
        return state

    def _free_subnet(self) -> int:
        used = {s.subnet for s in list_labs(self.home) if s.name != self.name and s.netns is None}
        # Debian maps 127.0.1.1 to the hostname: host-namespace labs start at 127.0.10.x.
        return next(i for i in range(10, 255) if i not in used)

    def _build(self, state: LabState, dist: Distribution, profiles: list[HardwareProfile],
               options: LabOptions, say: Progress) -> None:
        runtime = _runtime(state)
        runtime.prepare(state, dist, self.cache, say)
        if state.netns:
            say(f"creating network namespace {state.netns} (runtime {state.runtime})")
        runtime.create_network(state)
        layout = None
        if os.geteuid() == 0:
            layout = cgroups.detect_layout()
            state.cgroup_version = layout.version
        device = cgroups.block_device_of(self.directory) if layout else None
        if layout and device is None and any(p.disk_read_mb_s or p.disk_write_mb_s
                                             for p in profiles):
            state.warnings.append(f"{self.directory} is not on a block device: disk bandwidth "
                                  "limits are not applied")
        for n, profile in zip(state.nodes, profiles, strict=True):
            layout_n = cconf.NodeLayout(n.index, n.address, Path(n.directory))
            cfg = cconf.render_cassandra_yaml(lab_name=self.name, node=layout_n,
                                              node_count=len(state.nodes), seeds=state.seeds,
                                              overrides=state.overrides)
            cconf.write_node_files(layout_n, cfg)
            if layout and not runtime.limit(state, n, layout.version,
                                            cgroups.limit_files(profile, layout.version, device)):
                cg = cgroups.create_node_cgroup(layout, self.system_name, n.name, profile,
                                                device)
                n.cgroup_dirs = list(cg.dirs)
                state.save()
        # Only nodes sharing the lab's namespace send through its OUTPUT chain.
        if (state.netns and layout and layout.v2_mount is not None
                and state.runtime == DEFAULT_RUNTIME):
            netns.install_identity_marks(state.netns, [
                (n.index, cgroups.identity_path(self.system_name, n.name)) for n in state.nodes])
        deadline = time.monotonic() + options.timeout_s
        seed, others = state.nodes[0], state.nodes[1:]
        if PARALLEL_START:
            self._start_together(state, dist, options.jvm_options, deadline, say)
        else:
            say(f"starting seed {seed.name} ({seed.address})")
            mark = self._start(state, seed, dist, options.jvm_options)
            self._wait_cql(seed, mark, deadline)
            if others:
                say(f"starting {', '.join(n.name for n in others)}")
                marks = [self._start(state, n, dist, options.jvm_options) for n in others]
                for n, mark in zip(others, marks, strict=True):
                    self._wait_cql(n, mark, deadline)
        say("waiting until every node sees every other as UN")
        self._wait_all_normal(state, deadline)

    def _start_together(self, state: LabState, dist: Distribution, jvm_options: list[str],
                        deadline: float, say: Progress) -> None:
        """Start every node at once, the seed first: start-up is mostly CPU, so JVMs
        overlap their waits, and a node's first gossip round waits up to the ring delay
        for the seed. One that still found no seed listening has exited by the time the
        seed answers CQL; it is started again, once."""
        seed, others = state.nodes[0], state.nodes[1:]
        say(f"starting {', '.join(n.name for n in state.nodes)} (seed {seed.name} first)")
        marks = [self._start(state, n, dist, jvm_options) for n in state.nodes]
        self._wait_cql(seed, marks[0], deadline)
        for n, mark in zip(others, marks[1:], strict=True):
            try:
                self._wait_cql(n, mark, deadline)
            except NodeStartError:
                if is_same_process(n.pid, n.start_ticks):
                    raise  # alive but not ready in time: not the early-start case
                say(f"starting {n.name} again: it started before the seed listened")
                self._wait_cql(n, self._start(state, n, dist, jvm_options), deadline)

    def _start(self, state: LabState, n: NodeState, dist: Distribution,
               jvm_options: list[str]) -> int:
        """Spawn the node and record its pid; returns the system.log mark to wait from."""
        layout = cconf.NodeLayout(n.index, n.address, Path(n.directory))
        # The seed writes the class-data-sharing archive when none exists yet (not from
        # a container: the jar directory is read-only there).
        share = cds.jvm_options(dist, may_dump=n.index == 1 and state.runtime != "lxc")
        cmd = cconf.jvm_command(dist, layout, n.heap_mib, [*share, *jvm_options])
        procs = cgroups.NodeCgroup(state.cgroup_version or 0, tuple(n.cgroup_dirs)).procs_files
        mark = node.log_mark(layout.system_log)
        n.pid, n.start_ticks = _runtime(state).spawn(state, n, cmd, procs, layout.stdout_log)
        state.save()
        return mark

    def _wait_cql(self, n: NodeState, mark: int, deadline: float) -> None:
        layout = cconf.NodeLayout(n.index, n.address, Path(n.directory))
        node.wait_for_log(name=n.name, log=layout.system_log, stdout_log=layout.stdout_log,
                          pattern=node.CQL_READY, mark=mark, pid=n.pid,
                          ticks=n.start_ticks, deadline=deadline)

    def _wait_all_normal(self, state: LabState, deadline: float,
                         expect_down: frozenset[str] = frozenset()) -> None:
        want = {n.address for n in state.nodes} - expect_down
        last = ""
        while True:
            try:
                views = self._gossip_views(state, want)
                bad = {f"{viewer} sees {addr} as {status or 'absent'}"
                       for viewer, seen in views.items() for addr in want
                       if not (status := seen.get(addr, "")).startswith("NORMAL")}
                if not bad:
                    return
                last = "; ".join(sorted(bad)[:3])
            except CqlError as exc:
                last = str(exc)
            for n in state.nodes:
                if n.address in want and not is_same_process(n.pid, n.start_ticks):
                    tail = node.log_tail(Path(n.directory) / "logs" / "system.log")
                    raise NodeStartError(f"{n.name} exited while joining; last log lines:\n{tail}")
            if time.monotonic() > deadline:
                raise NodeStartError(f"cluster did not settle in time: {last}")
            time.sleep(1.0)

    def _gossip_views(self, state: LabState, addresses: set[str]) -> dict[str, dict[str, str]]:
        """For each node: the gossip STATUS it holds for every endpoint."""
        with CqlClient(sorted(addresses), netns=state.netns) as cql:
            return gossip_views(cql, sorted(addresses))

    # ---- down --------------------------------------------------------------------------

    def down(self, *, wipe: bool = False, grace_s: float = 30.0) -> None:
        """Stop every node, remove namespace and cgroups; delete data when `wipe`.

        With `wipe` the nodes are killed at once (SIGKILL): on SIGTERM Cassandra drains
        and flushes its memtables to disk (4-5 s a node here), work the wipe throws away.
        Works from the state file alone, so it also cleans up after a killed casslab.
        """
        self.state()  # no such lab: say so before a lock file is made for it
        with lab_lock(self.directory):
            state = self.state()
            self._teardown(state, grace_s=0.0 if wipe else grace_s)
        if wipe:
            shutil.rmtree(self.directory)
        else:
            state.save()

    def _teardown(self, state: LabState, grace_s: float = 30.0) -> None:
        errors: list[str] = []
        for ext in self.extensions:
            try:
                ext.before_teardown(self, state)
            except CasslabError as exc:
                errors.append(str(exc))
        # Before the nodes go: the controller exits by itself without their cgroups, but
        # would log every quota it could not set on the way.
        credits.stop(state.credit_controller_pid, state.credit_controller_ticks)
        state.credit_controller_pid, state.credit_controller_ticks = 0, None
        self._stop_all(state, grace_s)
        for n in state.nodes:
            if n.cgroup_dirs:
                try:
                    cgroups.remove_cgroup(cgroups.NodeCgroup(state.cgroup_version or 0,
                                                             tuple(n.cgroup_dirs)))
                    n.cgroup_dirs = []
                except CgroupError as exc:
                    errors.append(str(exc))
        try:
            _runtime(state).delete_network(state)
        except CasslabError as exc:
            errors.append(str(exc))
        state.save()
        if errors:
            raise CgroupError("; ".join(errors))

    def _stop_all(self, state: LabState, grace_s: float) -> None:
        # SIGTERM all first so the nodes drain in parallel, then wait for each; no grace:
        # SIGKILL, nothing to drain for.
        first = signal.SIGTERM if grace_s > 0 else signal.SIGKILL
        for n in state.nodes:
            signal_process(n.pid, n.start_ticks, first)
            if grace_s > 0:  # a paused node (Lab.pause) gets its SIGTERM once it runs
                signal_process(n.pid, n.start_ticks, signal.SIGCONT)
        for n in state.nodes:
            _stop_process(n, grace_s)

    # ---- pause and resume --------------------------------------------------------------

    def pause(self, *, timeout_s: float = 10.0) -> int:
        """Stop every running node's JVM (SIGSTOP; a node's pid is its JVM in every
        runtime) and wait until each is stopped (a sleeping thread takes the signal when
        it wakes): it uses no CPU while another lab runs, and keeps its JIT code, caches
        and heap for when it is resumed. Returns how many nodes were paused."""
        pids = self._signal_nodes(signal.SIGSTOP)
        deadline = time.monotonic() + timeout_s
        while not all(all_threads_stopped(pid) for pid in pids):
            if time.monotonic() > deadline:
                raise LabStateError(f"lab '{self.name}': a node did not stop within "
                                    f"{timeout_s:g} s of SIGSTOP")
            time.sleep(0.05)
        return len(pids)

    def resume(self, *, timeout_s: float = 60.0) -> int:
        """Let the paused nodes run again (SIGCONT) and wait until CQL answers on every
        one of them. A cluster paused whole does not mark its peers down when it comes
        back: Cassandra's failure detector skips a pause of its own process."""
        count = len(self._signal_nodes(signal.SIGCONT))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with self.cql() as cql:
                    for n in self.running_nodes():
                        cql.execute("SELECT release_version FROM system.local",
                                    host=n.address, timeout_s=10.0)
                return count
            except CasslabError as exc:
                if time.monotonic() > deadline:
                    raise LabStateError(f"lab '{self.name}': CQL did not answer within "
                                        f"{timeout_s:g} s of resuming: {exc}") from exc
                time.sleep(1.0)

    def _signal_nodes(self, sig: signal.Signals) -> list[int]:
        """Send `sig` to every node still running; the pids it reached."""
        self.state()  # no such lab: say so before a lock file is made for it
        with lab_lock(self.directory):
            state = self.state()
            return [n.pid for n in state.nodes if signal_process(n.pid, n.start_ticks, sig)]

    # ---- single nodes ------------------------------------------------------------------

    def stop_node(self, ref: str, *, kill: bool = False) -> NodeState:
        """Stop one node (SIGTERM, or SIGKILL when `kill`) for fault experiments."""
        self.state()  # no such lab: say so before a lock file is made for it
        with lab_lock(self.directory):
            state = self.state()
            n = state.node(ref)
            _stop_process(n, 0.0 if kill else 30.0)
            state.save()
            return n

    def start_node(self, ref: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> NodeState:
        """Start a stopped node again and wait until the cluster sees it UN."""
        self.state()  # no such lab: say so before a lock file is made for it
        with lab_lock(self.directory):
            state = self.state()
            n = state.node(ref)
            if is_same_process(n.pid, n.start_ticks):
                raise LabStateError(f"{n.name} of lab '{self.name}' is already running")
            if state.netns and not netns.exists(state.netns):
                raise LabStateError(f"lab '{self.name}' is down; bring it up with `lab up`")
            dist = resolve(state.cassandra_version, self.cache)
            deadline = time.monotonic() + timeout_s
            mark = self._start(state, n, dist, [])
            try:
                self._wait_cql(n, mark, deadline)
                down = {m.address for m in state.nodes if not is_same_process(m.pid,
                                                                               m.start_ticks)}
                self._wait_all_normal(state, deadline, expect_down=frozenset(down))
            except NodeStartError:
                _stop_process(n, 5.0)
                state.save()
                raise
            return n

    # ---- live limits -------------------------------------------------------------------

    def update_limits(self, fields: dict[str, float | int]) -> bool:
        """Set CPU and disk profile fields (LIVE_FIELDS) over every node's profile on the
        running nodes' cgroups, without a restart; they replace the live fields set before.

        Returns False, changing nothing, when this lab cannot: its runtime keeps the
        cgroups itself (lxc) or a node's cgroup lacks the controller (a `host` node);
        the caller then rebuilds the lab. Raises UsageError for a field that needs a
        restart (memory_mib, heap_mib), CgroupError when a file cannot be written.
        """
        bad = [k for k in fields if k not in LIVE_FIELDS]
        if bad:
            raise UsageError(f"profile field {bad[0]} cannot change on a running node (live: "
                             f"{', '.join(LIVE_FIELDS)}); rebuild the lab")
        self.state()  # no such lab: say so before a lock file is made for it
        with lab_lock(self.directory):
            state = self.state()
            kept = {k: v for k, v in state.profile_fields.items() if k not in LIVE_FIELDS}
            new_fields = {**kept, **fields}
            if state.cgroup_version is not None:
                profiles = node_profiles(
                    state.profile, {n.name: n.profile for n in state.nodes if n.profile},
                    len(state.nodes), fields=new_fields,
                    profiles_file=Path(state.profiles_file) if state.profiles_file else None)
                layout = cgroups.detect_layout()
                device = cgroups.block_device_of(self.directory)
                writes = [cgroups.live_writes(layout, self.system_name, n.name, p, device)
                          for n, p in zip(state.nodes, profiles, strict=True)]
                if any(w is None for w in writes):
                    return False
                for w in writes:
                    cgroups.write_files(w or [])
            # Without cgroups (not root) no limit was applied at `up` either (its warning
            # says so): the fields are only recorded.
            state.profile_fields = new_fields
            state.save()
            return True

    # ---- queries -----------------------------------------------------------------------

    def status(self) -> list[NodeStatus]:
        """One row per node: gossip state as the live nodes see it, load, pid."""
        state = self.state()
        alive = {n.address for n in self.running_nodes(state)}
        gossip: dict[str, tuple[str, float | None]] = {}
        if alive:
            try:
                with CqlClient(sorted(alive), netns=state.netns) as cql:
                    gossip = gossip_table(cql)
            except CqlError:
                gossip = {}
        balances = (read_balance_file(self.directory / BALANCE_FILE) if is_same_process(
            state.credit_controller_pid, state.credit_controller_ticks) else {})
        out = []
        for n in state.nodes:
            status, load = gossip.get(n.address, ("", None))
            credit = balances.get(n.name)
            out.append(NodeStatus(n.name, n.address, status_code(n.address in alive, status),
                                  load,
                                  describe(state.profile_of(n), state.profile_fields),
                                  n.pid if n.address in alive else None,
                                  credit.credits if credit else None))
        return out

    def cql(self) -> CqlClient:
        """A CQL client connected to the lab's running nodes (use as context manager)."""
        state = self.state()
        alive = [n.address for n in self.running_nodes(state)]
        if not alive:
            raise LabStateError(f"lab '{self.name}' has no running node")
        return CqlClient(alive, netns=state.netns)

    def exec_prefix(self) -> list[str]:
        """Prefix to run a command inside the lab's namespace."""
        state = self.state()
        if state.netns and not netns.exists(state.netns):
            raise LabStateError(f"lab '{self.name}' is down (no namespace {state.netns})")
        return netns.exec_prefix(state.netns)

    def log_path(self, ref: str) -> Path:
        n = self.state().node(ref)
        return Path(n.directory) / "logs" / "system.log"


# Start a new lab's nodes all at once (Lab._start_together) rather than the seed alone
# first: the same CPU work, overlapped.
PARALLEL_START = True


def _runtime(state: LabState) -> NodeRuntime:
    """The runtime a lab was built with (a state file names it; see LabState.runtime)."""
    return runtime_for(state.runtime)


def _stop_process(n: NodeState, grace_s: float) -> None:
    """Stop a node's process (SIGTERM then SIGKILL after `grace_s`; at once with no
    grace) and wait until its exit is recorded: a wipe right after must not race the
    reaper writing the exit file into the node's logs."""
    pid, ticks = n.pid, n.start_ticks
    if grace_s > 0:
        terminate(pid, ticks, grace_s=grace_s)
    else:
        kill_now(pid, ticks)
    node.wait_recorded(pid, ticks)
    n.pid, n.start_ticks = 0, None
