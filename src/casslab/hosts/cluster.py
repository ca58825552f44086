"""Cassandra nodes on real hosts, started, awaited and stopped over SSH (see ssh.Fleet).

Every node starts at once (the tokens are preassigned, as in the local lab), is awaited
until it logs that CQL is up, and the cluster is ready when every node sees every other
NORMAL in its own gossip view, read over CQL from here. Each node's process is detached
from the SSH session (`setsid`), its pid kept in its install root, and stopping checks
that the pid is still that node's JVM before signalling it.

Where hosts run systemd, a transient unit would carry the profile's limits; this first
version runs the JVM directly, without limits, on every host (see docs/scale-out.md).
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
from casslab.core.errors import CqlError, NodeStartError
from casslab.hosts.provision import RemoteNode
from casslab.hosts.ssh import Fleet

CQL_READY = "Starting listening for CQL clients"
PID_FILE = "cassandra.pid"


@dataclass(frozen=True)
class Started:
    node: RemoteNode
    pid: int


def _java(node: RemoteNode) -> str:
    home = node.host.java_home
    return f"{home}/bin/java" if home else "java"


def start_command(node: RemoteNode, local: Distribution, heap_mib: int) -> str:
    """The shell line that starts `node` detached and prints its pid.

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
    return (f"mkdir -p {dirs} && cd {shlex.quote(str(d))} && "
            f"(setsid nohup {shlex.join(argv)} > logs/stdout.log 2>&1 < /dev/null & "
            f"echo $! > {PID_FILE}; echo $!)")


async def start(fleet: Fleet, nodes: list[RemoteNode], local: Distribution,
                heap_mib: int) -> list[Started]:
    """Start every node at once; their pids."""
    async def one(n: RemoteNode) -> Started:
        out = await fleet.run_on(n.host, start_command(n, local, heap_mib))
        return Started(n, int(out.stdout.split()[-1]))

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
        probe = (f"if grep -q {shlex.quote(CQL_READY)} {log} 2>/dev/null; then echo up; "
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
    """Stop every node whose pid file names its own JVM: TERM, then KILL after `grace_s`.
    Nodes already gone are left alone."""
    async def one(n: RemoteNode) -> None:
        pid_file = shlex.quote(str(Path(n.layout.directory) / PID_FILE))
        mine = is_node_test("$pid", n)
        script = (f"pid=$(cat {pid_file} 2>/dev/null) || exit 0; {mine} || exit 0; "
                  f"kill -TERM $pid; for i in $(seq {int(grace_s * 10)}); do "
                  f"{mine} || exit 0; sleep 0.1; done; kill -KILL $pid")
        await fleet.run_on(n.host, script, timeout_s=grace_s + 30)

    await asyncio.gather(*(one(n) for n in nodes))
