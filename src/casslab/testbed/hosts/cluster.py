"""Cassandra nodes on real hosts, started, awaited and stopped over SSH (see ssh.Fleet).

Every node starts at once (the tokens are preassigned, as in the local lab), is awaited
until it logs that CQL is up, and the cluster is ready when every node sees every other
NORMAL in its own gossip view, read over CQL from here. Each node's process is detached
from the SSH session (`setsid`), its pid kept in its install root, and stopping checks
that the pid is still that node's JVM before signalling it.

Each node runs under its host's hardware profile (`casslab_profile`): a systemd
transient unit where systemd runs, casslab's own cgroup where it does not (hosts.limits);
the way used is kept in the node's directory and in `Started.limits`, and undone by stop.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from casslab.cassandra.config import jvm_command
from casslab.cassandra.cql import CqlClient, gossip_views
from casslab.cassandra.distribution import Distribution
from casslab.core.errors import CgroupError, CqlError, NodeStartError, UsageError
from casslab.hardware.profiles import resolve_profile
from casslab.testbed.hosts import limits
from casslab.testbed.hosts.limits import NO_LIMITS, LimitPlan
from casslab.testbed.hosts.provision import RemoteNode
from casslab.testbed.hosts.ssh import Fleet

CQL_READY = "Starting listening for CQL clients"
PID_FILE = "cassandra.pid"


@dataclass(frozen=True)
class Started:
    node: RemoteNode
    pid: int
    # How the profile's limits are applied; its mode is limits.NONE, SYSTEMD, CGROUP_V1 or V2.
    limits: LimitPlan = NO_LIMITS
    # system.log's size before this start: readiness counts only lines after it (a log
    # kept from an earlier run of the node says CQL is up long before this JVM is).
    log_mark: int = 0


def _java(node: RemoteNode) -> str:
    home = node.host.java_home
    return f"{home}/bin/java" if home else "java"


def start_command(node: RemoteNode, local: Distribution, heap_mib: int,
                  plan: LimitPlan = NO_LIMITS) -> str:
    """The shell line that starts `node` detached, under `plan`, and prints its pid.

    The jar names come from the controller's copy of the same version (`local`), which
    the playbook unpacked on the host.
    """
    remote = Distribution(version=local.version, lib_dir=node.lib_dir, java=_java(node))
    extra = []
    if local.jamm_jar is not None:
        extra.append(f"-javaagent:{node.lib_dir / local.jamm_jar.name}")
    argv = jvm_command(remote, node.layout, heap_mib, extra)
    # jvm_command adds the agent when the jar is visible from here (a shared disk);
    # keep exactly one.
    argv = [a for i, a in enumerate(argv) if not (a.startswith("-javaagent:") and a in argv[:i])]
    d = node.layout.directory
    dirs = " ".join(shlex.quote(str(d / s)) for s in ("logs", "data", "commitlog",
                                                      "saved_caches", "hints", "cdc_raw"))
    return f"mkdir -p {dirs} && " + limits.wrap_start(plan, argv, str(d), "logs/stdout.log",
                                                       PID_FILE)


async def limit(fleet: Fleet, node: RemoteNode, lab: str | None,
                profiles_file: Path | None = None) -> LimitPlan:
    """The limits step: probe the host, make the node's cgroup (or plan its unit) for
    its profile, and keep the plan in the node's directory. UsageError when the profile
    has limits but no lab name was given (cgroups and units are named by lab)."""
    profile = resolve_profile(node.host.profile, profiles_file)
    if not profile.has_limits:
        return NO_LIMITS
    if lab is None:
        raise UsageError(f"host {node.host.name}: profile '{profile.name}' has limits: "
                         "start needs the lab name to name its cgroup or unit")
    data_dir = str(node.layout.directory / "data")
    probe = limits.parse_probe((await fleet.run_on(
        node.host, limits.probe_command(data_dir))).stdout)
    try:
        plan = limits.plan_limits(probe, lab, node.layout.name, profile, data_dir)
    except CgroupError as exc:
        raise CgroupError(f"host {node.host.name}: {exc}") from None
    record = str(node.layout.directory / limits.LIMITS_FILE)
    await fleet.run_on(node.host, limits.setup_command(plan, record))
    return plan


async def start(fleet: Fleet, nodes: list[RemoteNode], local: Distribution,
                heap_mib: int, *, lab: str | None = None,
                profiles_file: Path | None = None) -> list[Started]:
    """Start every node at once under its host's profile; their pids and limits.

    `lab` names the nodes' cgroups or units (needed when a profile has limits);
    `profiles_file`: user profiles the inventory's names may refer to.
    """
    async def one(n: RemoteNode) -> Started:
        plan = await limit(fleet, n, lab, profiles_file)
        log = shlex.quote(str(n.layout.system_log))
        size = (await fleet.run_on(n.host, f"stat -c %s {log} 2>/dev/null || echo 0")).stdout
        out = await fleet.run_on(n.host, start_command(n, local, heap_mib, plan))
        return Started(n, int(out.stdout.split()[-1]), plan, int(size.split()[-1]))

    return list(await asyncio.gather(*(one(n) for n in nodes)))


def is_node_test(pid: str, node: RemoteNode) -> str:
    """A shell test: process `pid` (a number or `$pid`) is this node's JVM still."""
    return f"grep -q -- -Dcasslab.node={node.layout.name} /proc/{pid}/cmdline 2>/dev/null"


async def wait_cql(fleet: Fleet, started: list[Started], timeout_s: float) -> None:
    """Until every node logs that CQL is up; NodeStartError with the host and its log's
    last lines when a node exits or the time runs out."""
    deadline = time.monotonic() + timeout_s

    async def one(s: Started) -> None:
        log = shlex.quote(str(s.node.layout.system_log))
        probe = (f"if tail -c +{s.log_mark + 1} {log} 2>/dev/null | "
                 f"grep -q {shlex.quote(CQL_READY)}; then echo up; "
                 f"elif {is_node_test(str(s.pid), s.node)}; then echo starting; else echo gone; fi")
        while True:
            state = (await fleet.run_on(s.node.host, probe)).stdout.strip()
            if state == "up":
                return
            if state == "gone" or time.monotonic() > deadline:
                # A JVM that never ran (no java, bad option) leaves only stdout.log.
                out = shlex.quote(str(s.node.layout.stdout_log))
                tail = (await fleet.run_on(s.node.host, f"tail -n 8 {log} {out}",
                                           check=False)).stdout.strip()
                what = "exited during start" if state == "gone" else "did not open CQL in time"
                raise NodeStartError(f"{s.node.layout.name} on {s.node.host.name} "
                                     f"({s.node.host.address}) {what}; last log lines:\n"
                                     f"{tail or '(no log)'}")
            await asyncio.sleep(1.0)

    await asyncio.gather(*(one(s) for s in started))


def wait_all_normal(nodes: list[RemoteNode], timeout_s: float) -> None:
    """Until every node sees every other NORMAL in its gossip view (read over CQL)."""
    addresses = sorted(n.layout.address for n in nodes)
    deadline = time.monotonic() + timeout_s
    last = ""
    while True:
        try:
            with CqlClient(addresses, netns=None) as cql:
                views = gossip_views(cql, addresses)
            bad = sorted(f"{viewer} sees {addr} as {seen.get(addr) or 'absent'}"
                         for viewer, seen in views.items() for addr in addresses
                         if not seen.get(addr, "").startswith("NORMAL"))
            if not bad:
                return
            last = "; ".join(bad[:3])
        except CqlError as exc:
            last = str(exc)
        if time.monotonic() > deadline:
            raise NodeStartError(f"the hosts' cluster did not settle in time: {last}")
        time.sleep(1.0)


async def stop(fleet: Fleet, nodes: list[RemoteNode], grace_s: float = 30.0) -> None:
    """Stop every node whose pid file names its own JVM: TERM, then KILL after `grace_s`
    (0: KILL at once, then wait until it is gone). Nodes already gone are left alone."""
    async def one(n: RemoteNode) -> None:
        pid_file = shlex.quote(str(Path(n.layout.directory) / PID_FILE))
        mine = is_node_test("$pid", n)
        first = "TERM" if grace_s > 0 else "KILL"
        # A KILLed JVM is gone within a moment; 10 s bounds the wait for its exit.
        wait_s = grace_s if grace_s > 0 else 10.0
        script = (f"pid=$(cat {pid_file} 2>/dev/null) || exit 0; {mine} || exit 0; "
                  f"kill -{first} $pid; for i in $(seq {int(wait_s * 10)}); do "
                  f"{mine} || exit 0; sleep 0.1; done; kill -KILL $pid")
        await fleet.run_on(n.host, script, timeout_s=wait_s + 30)
        await unlimit(fleet, n)

    await asyncio.gather(*(one(n) for n in nodes))


async def unlimit(fleet: Fleet, node: RemoteNode) -> None:
    """Undo what the limits step made for `node` (its record in the node's directory);
    nothing when there is no record. HostError when a cgroup cannot be removed."""
    record = shlex.quote(str(node.layout.directory / limits.LIMITS_FILE))
    text = (await fleet.run_on(node.host, f"cat {record} 2>/dev/null || true")).stdout
    if not text.strip():
        return
    plan = LimitPlan.from_json(text)
    await fleet.run_on(node.host, limits.cleanup_command(plan), timeout_s=60.0)
    await fleet.run_on(node.host, f"rm -f {record}")


async def node_log(fleet: Fleet, node: RemoteNode, lines: int | None = 200) -> str:
    """The last `lines` lines of the node's system.log on its host (all of it when None).
    HostError naming the host and the file when there is no log."""
    log = shlex.quote(str(node.layout.system_log))
    what = f"tail -n {int(lines)} {log}" if lines is not None else f"cat {log}"
    return (await fleet.run_on(node.host, what)).stdout


async def save_log(fleet: Fleet, node: RemoteNode, local: Path) -> Path:
    """The node's whole system.log copied to `local` (SFTP); HostError as node_log."""
    await fleet.fetch(node.host, str(node.layout.system_log), local)
    return local
