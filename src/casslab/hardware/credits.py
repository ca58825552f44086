"""Burstable CPU: the CPU credit model of AWS T2 instances (standard mode).

Figures from AWS's published tables (Amazon EC2 User Guide, "Key concepts and definitions
for burstable performance instances" and "Standard mode for burstable performance
instances", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/burstable-credits-baseline-concepts.html):

| type      | credits earned / hour | max earned credits | vCPUs | baseline per vCPU |
|-----------|-----------------------|--------------------|-------|-------------------|
| t2.micro  | 6                     | 144                | 1     | 10 %              |
| t2.small  | 12                    | 288                | 1     | 20 %              |
| t2.medium | 24                    | 576                | 2     | 20 % (40 % total) |

* One CPU credit is one vCPU at 100 % for one minute, so the baseline is the earning
  rate: 6 credits/h = 0.1 vCPU. (t2.medium's 40 % is of ONE vCPU, i.e. 20 % of each of
  its two: 24 credits/h = 0.4 vCPU.)
* The max earned balance is 24 hours of earnings.
* A T2 Standard instance gets 30 launch credits per vCPU at launch; launch credits are
  spent first and do not count towards the max.
* Credits are earned continuously and spent by CPU use; with a balance of 0 the instance
  is held to its baseline.

How a vCPU maps to this machine is the hardware profile's business (t2 profiles give one
vCPU one core here); this module works in vCPUs and model seconds only. A time scale
(model seconds per real second) lets a test run an hour of accounting in a minute.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from casslab.core.errors import UsageError

CREDIT_VCPU_S = 60.0  # one credit: one vCPU busy for one minute
LAUNCH_CREDITS_PER_VCPU = 30.0
# How fast credit accounting runs against real time (a test sets e.g. 100): 1 is the
# instance's own pace (below it the lab would earn and spend credits slower than the
# instance it models, which no test needs); above 10000 a one-minute credit would pass
# in 6 ms, less than the controller's tick.
ENV_TIME_SCALE = "CASSLAB_CREDIT_TIME_SCALE"
MIN_TIME_SCALE = 1.0
MAX_TIME_SCALE = 10_000.0


@dataclass(frozen=True)
class CreditSpec:
    """One instance type's credit figures (see the module doc for the source)."""

    instance: str
    vcpus: int
    baseline_pct_per_vcpu: float
    credits_per_hour: float
    max_earned: float

    @property
    def launch_credits(self) -> float:
        return LAUNCH_CREDITS_PER_VCPU * self.vcpus

    @property
    def baseline_vcpus(self) -> float:
        """The baseline in vCPUs of the whole instance (t2.medium: 0.4)."""
        return self.vcpus * self.baseline_pct_per_vcpu / 100.0


T2_CREDITS: dict[str, CreditSpec] = {s.instance: s for s in [
    CreditSpec("t2.micro", 1, 10.0, 6.0, 144.0),
    CreditSpec("t2.small", 1, 20.0, 12.0, 288.0),
    CreditSpec("t2.medium", 2, 20.0, 24.0, 576.0),
]}


def credit_spec(name: str) -> CreditSpec:
    """The credit figures of a burstable instance type; UsageError naming the valid ones."""
    if name not in T2_CREDITS:
        raise UsageError(f"burst: unknown instance type '{name}' (valid: "
                         f"{', '.join(T2_CREDITS)})")
    return T2_CREDITS[name]


@dataclass(frozen=True)
class CreditBalance:
    """Launch credits left and earned credits held (earned ones capped at the max)."""

    launch: float
    earned: float

    @property
    def total(self) -> float:
        return self.launch + self.earned


def initial_balance(spec: CreditSpec) -> CreditBalance:
    """A freshly launched instance: its launch credits, nothing earned yet."""
    return CreditBalance(spec.launch_credits, 0.0)


def step(spec: CreditSpec, balance: CreditBalance, used_vcpu_s: float,
         dt_s: float) -> CreditBalance:
    """The balance after `dt_s` model seconds in which the instance used `used_vcpu_s`
    vCPU-seconds. Launch credits pay first; earnings offset the rest of the spend, and
    only then is the earned balance capped (AWS accounts per millisecond, so credits
    earned and spent within one tick never meet the cap)."""
    if dt_s < 0 or used_vcpu_s < 0:
        raise ValueError(f"step: dt_s {dt_s} and used_vcpu_s {used_vcpu_s} must be >= 0")
    spent = used_vcpu_s / CREDIT_VCPU_S
    from_launch = min(balance.launch, spent)
    earned_in = spec.credits_per_hour * dt_s / 3600.0
    earned = balance.earned + earned_in - (spent - from_launch)
    return CreditBalance(balance.launch - from_launch, min(max(earned, 0.0), spec.max_earned))


def keeps_bursting(spec: CreditSpec, balance: CreditBalance, bursting: bool,
                   tick_s: float) -> bool:
    """Whether the instance may use all its vCPUs for the next tick (else: baseline).

    A bursting instance stops at a balance of 0. One held to its baseline bursts again
    only once its balance pays for a whole tick at full speed: a node at its baseline
    under full load earns exactly what it spends, and without this margin rounding would
    flip its quota every tick.
    """
    if bursting:
        return balance.total > 0.0
    return balance.total >= spec.vcpus * tick_s / CREDIT_VCPU_S


def quota_cores(spec: CreditSpec, full_cores: float, bursting: bool) -> float:
    """The CPU quota in cores of this machine: the profile's full quota while bursting,
    else the same share of it as the baseline is of the instance's vCPUs."""
    return full_cores if bursting else full_cores * spec.baseline_vcpus / spec.vcpus


def time_scale_from_env(env: dict[str, str] | None = None) -> float:
    """Model seconds per real second from $CASSLAB_CREDIT_TIME_SCALE (default 1).
    Raises UsageError (one line) for anything but a number in [MIN_TIME_SCALE,
    MAX_TIME_SCALE]."""
    raw = (os.environ if env is None else env).get(ENV_TIME_SCALE, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not MIN_TIME_SCALE <= value <= MAX_TIME_SCALE:
        raise UsageError(f"{ENV_TIME_SCALE}={raw}: must be a number from {MIN_TIME_SCALE:g} "
                         f"to {MAX_TIME_SCALE:g} (model seconds per real second)")
    return value


# ---- the balance file: written by the lab's credit controller, read by metrics --------

BALANCE_FILE = "credits.json"


@dataclass(frozen=True)
class NodeCredits:
    """One node's credit state as the controller last wrote it."""

    node: str
    instance: str
    credits: float
    bursting: bool
    quota_cores: float


def write_balance_file(path: Path, nodes: list[NodeCredits], t_s: float) -> None:
    """Write atomically (temp + rename) so a reader never sees half a file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"t_s": round(t_s, 3), "nodes": {
        n.node: {"instance": n.instance, "credits": round(n.credits, 4),
                 "bursting": n.bursting, "quota_cores": round(n.quota_cores, 4)}
        for n in nodes}}))
    os.replace(tmp, path)


def read_balance_file(path: Path) -> dict[str, NodeCredits]:
    """Node name -> its credit state; empty when the file is missing or unreadable
    (a lab without burstable nodes, or a controller that has not ticked yet)."""
    try:
        raw = json.loads(path.read_text())
        return {name: NodeCredits(name, str(v["instance"]), float(v["credits"]),
                                  bool(v["bursting"]), float(v["quota_cores"]))
                for name, v in raw["nodes"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
