"""The CPU credit controller: a small background process beside a lab whose nodes have
a burstable profile (t2.*), keeping each node's CPU credit balance (the model of
casslab.hardware.credits) and setting its cgroup CPU quota from it every tick.

The lab starts it once every node is ready (`lab up`): AWS's launch credits exist to
pay for an instance's boot, and a time-scaled test would otherwise spend them all on
the JVM's start. Its pid is in the lab state, so `lab down` stops it even after
casslab was killed; it also exits by itself once its nodes' cgroups are gone.

Files in the lab directory: `credits-config.json` (what to control, written at start),
`credits.json` (the balances, rewritten every tick: see profiles.credits.BALANCE_FILE)
and `credits.log` (JSON lines: start, every quota change, errors).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType

from casslab.core.errors import CgroupError, LabStateError
from casslab.hardware import cgroups
from casslab.hardware.credits import (
    BALANCE_FILE,
    CreditBalance,
    CreditSpec,
    NodeCredits,
    credit_spec,
    initial_balance,
    keeps_bursting,
    quota_cores,
    step,
    write_balance_file,
)
from casslab.hardware.profiles import HardwareProfile
from casslab.lab.state import LabState
from casslab.system.process import is_same_process, start_time_ticks, terminate

CONFIG_FILE = "credits-config.json"
LOG_FILE = "credits.log"
TICK_S = 1.0
READY_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class BurstNode:
    """A node whose CPU quota follows its credits; full_cores is its profile's quota."""

    node: str
    instance: str
    full_cores: float
    cgroup_dirs: tuple[str, ...]


@dataclass(frozen=True)
class ControllerConfig:
    """What the controller process controls. time_scale: model seconds per real second."""

    time_scale: float
    tick_s: float
    nodes: tuple[BurstNode, ...]

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, path: Path) -> ControllerConfig:
        raw = json.loads(path.read_text())
        nodes = tuple(BurstNode(n["node"], n["instance"], float(n["full_cores"]),
                                tuple(n["cgroup_dirs"])) for n in raw["nodes"])
        return cls(float(raw["time_scale"]), float(raw["tick_s"]), nodes)


def burst_nodes(state: LabState,
                profiles: Mapping[str, HardwareProfile]) -> tuple[list[BurstNode], list[str]]:
    """The lab's nodes whose profile (by node name) is burstable, and warnings for the
    burstable ones that cannot be controlled (no CPU quota, or no cgroup of the lab's:
    not root, or a runtime that limits its nodes itself)."""
    nodes: list[BurstNode] = []
    warnings: list[str] = []
    for n in state.nodes:
        profile = profiles.get(n.name)
        if profile is None or profile.burst is None:
            continue
        if profile.cpu_cores is None or not n.cgroup_dirs:
            why = "has no CPU quota" if profile.cpu_cores is None else "has no cgroup here"
            warnings.append(f"{n.name} (profile {profile.name}) {why}: its CPU credits are "
                            "not modelled, its CPU stays fixed")
            continue
        nodes.append(BurstNode(n.name, profile.burst, profile.cpu_cores,
                               tuple(n.cgroup_dirs)))
    return nodes, warnings


@dataclass
class _Account:
    node: BurstNode
    spec: CreditSpec
    balance: CreditBalance
    bursting: bool = True
    last_usage_s: float | None = None

    @property
    def quota_cores(self) -> float:
        return quota_cores(self.spec, self.node.full_cores, self.bursting)


class Controller:
    """The accounting of every controlled node, one `tick` at a time. No I/O: the caller
    reads the cgroups' CPU usage and applies the quotas `tick` returns."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        self.accounts = {n.node: _Account(n, spec, initial_balance(spec))
                         for n in config.nodes for spec in [credit_spec(n.instance)]}

    def tick(self, dt_real_s: float, usage_s: Mapping[str, float | None]) -> dict[str, float]:
        """Account `dt_real_s` seconds in which each node's cgroup reached `usage_s` CPU
        seconds in all (None: unreadable, the tick is skipped for it). Returns the nodes
        whose quota changes, with the new quota in cores of this machine."""
        scale = self.config.time_scale
        changed: dict[str, float] = {}
        for name, acc in self.accounts.items():
            now = usage_s.get(name)
            if now is None:
                continue
            if acc.last_usage_s is not None:
                # One vCPU is full_cores / vcpus cores here (the profile's scaling).
                used_vcpu_s = max(now - acc.last_usage_s, 0.0) * acc.spec.vcpus / \
                    acc.node.full_cores
                acc.balance = step(acc.spec, acc.balance, used_vcpu_s * scale,
                                   dt_real_s * scale)
                bursting = keeps_bursting(acc.spec, acc.balance, acc.bursting,
                                          self.config.tick_s * scale)
                if bursting != acc.bursting:
                    acc.bursting = bursting
                    changed[name] = acc.quota_cores
            acc.last_usage_s = now
        return changed

    def rows(self) -> list[NodeCredits]:
        return [NodeCredits(name, a.spec.instance, a.balance.total, a.bursting, a.quota_cores)
                for name, a in self.accounts.items()]


# ---- the process --------------------------------------------------------------------


def start(lab_dir: Path, config: ControllerConfig) -> tuple[int, int | None]:
    """Start the controller for `lab_dir` and wait until it wrote its first balances;
    returns its (pid, start ticks). Raises LabStateError with its log's tail when it
    exits or is not ready in time."""
    config.save(lab_dir / CONFIG_FILE)
    balance = lab_dir / BALANCE_FILE
    balance.unlink(missing_ok=True)
    log = lab_dir / LOG_FILE
    with log.open("ab") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "casslab.lab.credit_daemon",
                                 str(lab_dir)], stdin=subprocess.DEVNULL, stdout=fh,
                                stderr=fh, start_new_session=True)
    ticks = start_time_ticks(proc.pid)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not balance.exists():
        code = proc.poll()
        if code is not None or time.monotonic() > deadline:
            terminate(proc.pid, ticks, grace_s=1.0)
            why = f"exited with code {code}" if code is not None else \
                f"wrote no {BALANCE_FILE} in {READY_TIMEOUT_S:.0f} s"
            raise LabStateError(f"CPU credit controller {why}; log {log}:\n{_tail(log)}")
        time.sleep(0.05)
    return proc.pid, ticks


def stop(pid: int, ticks: int | None) -> None:
    """SIGTERM the controller (it leaves the quotas as they are), SIGKILL after 3 s."""
    if pid and is_same_process(pid, ticks):
        terminate(pid, ticks, grace_s=3.0)


def run(lab_dir: Path) -> int:
    """The controller's loop, until SIGTERM or until its nodes' cgroups are gone."""
    config = ControllerConfig.load(lab_dir / CONFIG_FILE)
    ctl = Controller(config)
    stopped = threading.Event()

    def on_signal(_sig: int, _frame: FrameType | None) -> None:
        stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    dirs = {n.node: n.cgroup_dirs for n in config.nodes}
    for n in config.nodes:  # every node starts with its launch credits: full quota
        _apply(n.node, dirs[n.node], n.full_cores)
    t0 = last = time.monotonic()
    ctl.tick(0.0, {name: cgroups.cpu_usage_s(d) for name, d in dirs.items()})
    _log({"event": "start", "time_scale": config.time_scale, "nodes": list(dirs)})
    while True:
        write_balance_file(lab_dir / BALANCE_FILE, ctl.rows(), time.monotonic() - t0)
        if stopped.wait(config.tick_s):
            break
        usage = {name: cgroups.cpu_usage_s(d) for name, d in dirs.items()}
        if all(u is None for u in usage.values()):
            _log({"event": "exit", "why": "the nodes' cgroups are gone"})
            break
        now = time.monotonic()
        for name, cores in ctl.tick(now - last, usage).items():
            _apply(name, dirs[name], cores)
            _log({"event": "quota", "node": name, "cores": cores,
                  "credits": round(ctl.accounts[name].balance.total, 4),
                  "t_s": round(now - t0, 3)})
        last = now
    return 0


def _apply(name: str, dirs: tuple[str, ...], cores: float) -> None:
    try:
        cgroups.set_cpu_quota(dirs, cores)
    except CgroupError as exc:  # a node being torn down: log it, keep the others going
        _log({"event": "error", "node": name, "error": str(exc)})


def _log(event: dict[str, object]) -> None:
    print(json.dumps(event), flush=True)


def _tail(log: Path, lines: int = 10) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"
