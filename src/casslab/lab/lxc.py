"""Runtime `lxc`: every node a real LXC application container (seed 004).

- Root filesystem: Debian (minbase) built once with mmdebstrap, cached under
  `<cache>/lxc/rootfs-<suite>`; each container mounts it as the lower layer of an
  overlay whose upper layer is in the node's directory, so containers share it read-only.
- JDK, /etc/java-*, the Cassandra jars: bind-mounted read-only at their host paths, the
  node's directory read-write at its host path, so the JVM command is the same as for
  the other runtimes.
- Network: like `netns`, a veth on the lab's bridge (in the lab's router namespace); its
  container end is made by casslab in the lab's namespace and handed to LXC
  (`lxc.net.0.type = phys`), because LXC's own veth set-up looks the
  bridge up in /sys, which shows the host's devices, not the lab namespace's.
- Limits: the hardware profile's cgroup files as `lxc.cgroup.*` (v1) or `lxc.cgroup2.*`
  (v2) keys; LXC makes the container's cgroups (`lxc.payload.<container>`).
- Every lxc-* command runs in the lab's network namespace: the monitor's socket is an
  abstract unix socket, visible only there.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from casslab.cassandra.distribution import Distribution
from casslab.core.errors import (
    CasslabError,
    CommandError,
    NetnsError,
    NodeStartError,
    UsageError,
)
from casslab.lab import bridge
from casslab.lab.node import log_tail
from casslab.lab.state import LabState, NodeState
from casslab.system import lxcbase, netns
from casslab.system.lxcbase import remove_container_cgroups
from casslab.system.process import run, start_time_ticks

# iproute2 and procps: a shell in the container can look at its network and processes.
ROOTFS_PACKAGES = ("iproute2", "procps")
PID_TIMEOUT_S = 20.0

Say = Callable[[str], None]


def ensure_rootfs(cache: Path, say: Say) -> Path:
    """The cached root filesystem of node containers, built once (lxcbase.ensure_rootfs)."""
    return lxcbase.ensure_rootfs(cache, say, ROOTFS_PACKAGES)


def container_name(state: LabState, n: NodeState) -> str:
    """Machine-wide unique (LXC's cgroups are named after it): lab system name + node."""
    system = (state.netns or state.name).removeprefix("casslab-")
    return f"{system}-n{n.index}"


def lxc_path(state: LabState) -> Path:
    return Path(state.directory) / "lxc"


def cgroup_keys(version: int, files: dict[str, dict[str, str]]) -> list[str]:
    """`lxc.cgroup*` config lines for the limit files of `cgroups.limit_files`."""
    key = "lxc.cgroup" if version == 1 else "lxc.cgroup2"
    return [f"{key}.{name} = {value}" for per in files.values()
            for name, value in sorted(per.items())]


def bind_sources(dist: Distribution) -> list[tuple[Path, bool]]:
    """(host path, writable) of what the JVM needs from the host, read-only."""
    java_home = Path(dist.java).resolve().parent.parent
    return [*lxcbase.jdk_binds(java_home), (dist.lib_dir.resolve(), False)]


def render_config(*, name: str, rootfs: Path, upper: Path, binds: list[tuple[Path, bool]],
                  node_dir: Path, address: str, veth_peer: str, limits: list[str],
                  init_script: Path, log: Path) -> str:
    """The container's LXC config (pure)."""
    lines = [
        f"lxc.uts.name = {name}",
        f"lxc.rootfs.path = overlay:{rootfs}:{upper}",
        "lxc.mount.auto = proc:mixed sys:ro cgroup:mixed",
        "lxc.mount.entry = tmpfs tmp tmpfs defaults 0 0",
    ]
    lines += lxcbase.mount_entries([*binds, (node_dir, True)])
    lines += [
        "lxc.net.0.type = phys",
        f"lxc.net.0.link = {veth_peer}",
        f"lxc.net.0.name = {bridge.NODE_IF}",
        "lxc.net.0.flags = up",
        f"lxc.net.0.ipv4.address = {address}/24",
        *limits,
        f"lxc.init.cmd = /bin/sh {init_script}",
        "lxc.console.path = none",
        f"lxc.log.file = {log}",
        "lxc.log.level = WARN",
    ]
    return "\n".join(lines) + "\n"


def _in_lab(state: LabState, cmd: list[str]) -> list[str]:
    return [*netns.enter_prefix(str(state.netns)), *cmd]


@dataclass(frozen=True)
class LxcRuntime:
    """Nodes in LXC application containers on the lab's bridge."""

    name: str = "lxc"

    def check(self, *, own_namespace: bool, can_use_namespaces: bool) -> None:
        if not (own_namespace and can_use_namespaces):
            raise UsageError("--runtime lxc: needs root and the lab's own namespace; run as "
                             "root without --no-netns, or use --runtime process")

    def addresses(self, subnet: int, count: int) -> list[str]:
        return bridge.addresses(subnet, count)

    def node_netns(self, lab_netns: str | None, index: int) -> str | None:
        # LXC makes (and removes) the container's namespace itself.
        return None

    def prepare(self, state: LabState, dist: Distribution, cache: Path, say: Say) -> None:
        rootfs = ensure_rootfs(cache, say)
        lxc_path(state).mkdir(parents=True, exist_ok=True)
        binds = bind_sources(dist)
        for n in state.nodes:
            d = lxc_path(state) / container_name(state, n)
            d.mkdir(parents=True, exist_ok=True)
            (d / "base.conf").write_text(render_config(
                name=container_name(state, n), rootfs=rootfs, upper=d / "upper", binds=binds,
                node_dir=Path(n.directory), address=n.address, veth_peer=f"ceth{n.index}",
                limits=[], init_script=Path(n.directory) / "lxc-init.sh",
                log=Path(n.directory) / "logs" / "lxc.log"))

    def create_network(self, state: LabState) -> None:
        router = bridge.create(state)
        assert state.netns is not None  # bridge.create refuses a state without one
        for n in state.nodes:
            netns.add_veth_pair(router, bridge.BRIDGE, f"veth{n.index}", f"ceth{n.index}",
                                state.netns)

    def limit(self, state: LabState, node: NodeState, version: int,
              files: dict[str, dict[str, str]]) -> bool:
        d = lxc_path(state) / container_name(state, node)
        (d / "limits.conf").write_text("\n".join(cgroup_keys(version, files)) + "\n")
        return True

    def spawn(self, state: LabState, node: NodeState, command: list[str],
              cgroup_procs: list[str], stdout_log: Path) -> tuple[int, int | None]:
        name = container_name(state, node)
        d = lxc_path(state) / name
        # lxc.init.cmd is split on blanks without quoting: the JVM command goes in a
        # script on the node's (bind-mounted) directory; `exec` keeps the container's
        # init the JVM itself, so its host pid is the node's pid.
        # The JVM by its real path: /usr/bin/java's alternatives links are not in the
        # container, the JDK it points to is (bind-mounted).
        command = [str(Path(command[0]).resolve()), *command[1:]]
        script = Path(node.directory) / "lxc-init.sh"
        script.write_text(f"exec {shlex.join(command)} >>{shlex.quote(str(stdout_log))} "
                          "2>&1\n")
        limits = d / "limits.conf"
        (d / "config").write_text((d / "base.conf").read_text()
                                  + (limits.read_text() if limits.exists() else ""))
        Path(node.directory, "logs").mkdir(parents=True, exist_ok=True)
        try:
            run(_in_lab(state, ["lxc-start", "-n", name, "-P", str(lxc_path(state)), "-d"]))
        except CommandError as exc:
            raise NodeStartError(f"{node.name}: container {name} did not start: {exc}; see "
                                 f"{Path(node.directory) / 'logs' / 'lxc.log'}") from exc
        pid = self._init_pid(state, name, stdout_log)
        return pid, start_time_ticks(pid)

    def _init_pid(self, state: LabState, name: str, stdout_log: Path) -> int:
        deadline = time.monotonic() + PID_TIMEOUT_S
        while time.monotonic() < deadline:
            out = run(_in_lab(state, ["lxc-info", "-n", name, "-P", str(lxc_path(state)),
                                      "-p", "-H"]), check=False).strip()
            if out.isdigit():
                return int(out)
            time.sleep(0.1)
        raise NodeStartError(f"container {name} has no running init after {PID_TIMEOUT_S:g} s; "
                             f"last log lines:\n{log_tail(stdout_log, 5)}")

    def delete_network(self, state: LabState) -> None:
        errors: list[str] = []
        if state.netns and netns.exists(state.netns):
            for n in state.nodes:
                subprocess.run(_in_lab(state, ["lxc-stop", "-n", container_name(state, n),
                                               "-P", str(lxc_path(state)), "-k"]),
                               capture_output=True, check=False, timeout=60)
        # The lab's namespace first (it kills a monitor left in it), then the router's.
        for ns in (state.netns, bridge.router_netns(state.netns) if state.netns else None):
            try:
                if ns:
                    netns.delete(ns)
            except CasslabError as exc:
                errors.append(str(exc))
        for n in state.nodes:
            errors += remove_container_cgroups(container_name(state, n))
        if errors:
            raise NetnsError("; ".join(errors))
