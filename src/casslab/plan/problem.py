"""The planning problem shared by the MILP and the heuristic, and the plan they return.

For every tenant i and VM type j the problem precomputes n_ij, the fewest nodes that meet
all of seed 001's per-tenant requirements with VM type j: throughput (eq. 11, through the
piecewise-linear model), the dataset held in the heaps (eq. 12: n >= D*r/heap) and the
replication factor (n >= D). Using exactly n_ij nodes is not a restriction: power and cost
only grow with nodes, and removing a node from a feasible plan keeps host capacity,
D-distinct-host spread and one-replica-per-host feasible, so some optimal plan always uses
n_ij nodes of its chosen type (the unit tests check this against a brute force that tries
every node count).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from casslab.plan.model import Models, dataset_nodes
from casslab.plan.spec import Host, PlanSpec, Tenant, VmType

OPTIMAL, FEASIBLE, INFEASIBLE, NO_SOLUTION = "optimal", "feasible", "infeasible", "no solution"


@dataclass(frozen=True)
class Candidate:
    """Tenant i on VM type j with its fewest nodes n_ij, and the throughput they give."""

    tenant: int
    vm: int
    nodes: int
    ops_s: float


@dataclass
class Problem:
    spec: PlanSpec
    models: Models
    candidates: list[list[Candidate]]  # per tenant; empty = the tenant cannot be served
    reasons: list[list[str]]  # per tenant: why each excluded VM type is excluded

    @property
    def tenants(self) -> tuple[Tenant, ...]:
        return self.spec.tenants

    @property
    def hosts(self) -> tuple[Host, ...]:
        return self.spec.hosts

    @property
    def vms(self) -> tuple[VmType, ...]:
        return self.spec.vm_types


def fits(vm: VmType, host: Host) -> int:
    """How many VMs of type `vm` fit on an empty `host` (cores and memory)."""
    return int(min(math.floor(host.cores / vm.cores + 1e-9),
                   math.floor(host.memory_gb / vm.memory_gb + 1e-9)))


def build_problem(spec: PlanSpec, models: Models) -> Problem:
    """Candidates (VM type, fewest nodes) per tenant, and the reasons for excluded types."""
    candidates: list[list[Candidate]] = []
    reasons: list[list[str]] = []
    for i, t in enumerate(spec.tenants):
        cands, why = [], []
        for j, vm in enumerate(spec.vm_types):
            model = models.get((t.workload, vm.name))
            if model is None:
                why.append(f"{vm.name} has no throughput model for workload {t.workload}")
                continue
            per_host = [fits(vm, h) for h in spec.hosts]
            if spec.one_replica_per_host:
                per_host = [min(k, 1) for k in per_host]
            room = sum(per_host)
            if room == 0:
                why.append(f"{vm.name} ({vm.cores:g} cores, {vm.memory_gb:g} GB) fits on no host")
                continue
            hi = room if spec.max_nodes_per_tenant is None else min(room,
                                                                    spec.max_nodes_per_tenant)
            lo = max(t.rf, dataset_nodes(t.rf, t.dataset_gb, vm.heap_gb))
            if lo > hi:
                why.append(f"{vm.name} needs {lo} nodes for rf {t.rf} and "
                           f"{t.dataset_gb:g} GB of data in {vm.heap_gb:g} GB heaps, but at "
                           f"most {hi} fit{_limit_words(spec, room, hi)}")
                continue
            n = model.min_nodes(t.min_ops_s, lo, hi)
            if n is None:
                best, at = model.best(hi)
                why.append(f"{vm.name} reaches at most {best:.0f} ops/s (with {at} nodes; at "
                           f"most {hi} fit{_limit_words(spec, room, hi)}) < {t.min_ops_s:.0f}")
                continue
            cands.append(Candidate(i, j, n, model.ops_s(n)))
        candidates.append(_undominated(spec, cands))
        reasons.append(why)
    return Problem(spec, models, candidates, reasons)


def _undominated(spec: PlanSpec, cands: list[Candidate]) -> list[Candidate]:
    """Drop candidates another one dominates: no more nodes, each VM no larger in cores and
    memory (its nodes fit into a subset of the other's slots, spread over as many hosts),
    and, in cost mode, no dearer in total. Such a candidate is never needed for an optimum."""
    def key(c: Candidate) -> tuple[float, ...]:
        vm = spec.vm_types[c.vm]
        price = (vm.price_hour or 0.0) * c.nodes if spec.mode == "cost" else 0.0
        return (c.nodes, vm.cores, vm.memory_gb, price)

    keep = []
    for b in cands:
        kb = key(b)
        if not any(a is not b and all(x <= y for x, y in zip(key(a), kb, strict=True))
                   and (key(a) != kb or a.vm < b.vm) for a in cands):
            keep.append(b)
    return keep


def _limit_words(spec: PlanSpec, room: int, hi: int) -> str:
    if hi < room:
        return " by placement.max_nodes_per_tenant"
    return " on one host each" if spec.one_replica_per_host else " on the hosts"


def precheck(p: Problem) -> str | None:
    """A requirement that no plan can meet, in words, found without solving; else None."""
    spec = p.spec
    for i, t in enumerate(p.tenants):
        if not p.candidates[i]:
            return (f"tenant {t.name}: minimum throughput {t.min_ops_s:.0f} ops/s "
                    f"({t.workload}, rf {t.rf}, {t.dataset_gb:g} GB) cannot be met by any VM "
                    f"type: {'; '.join(p.reasons[i])}")
        if t.rf > len(spec.hosts):
            return (f"tenant {t.name}: replication factor {t.rf} needs replicas on {t.rf} "
                    f"distinct hosts, but there are only {len(spec.hosts)} hosts")
    return capacity_check(p, list(range(len(p.tenants))))


def capacity_check(p: Problem, tenants: list[int]) -> str | None:
    """Do these tenants' smallest VM choices exceed the hosts' total cores or memory?"""
    cores = sum(min(c.nodes * p.vms[c.vm].cores for c in p.candidates[i]) for i in tenants)
    mem = sum(min(c.nodes * p.vms[c.vm].memory_gb for c in p.candidates[i]) for i in tenants)
    have_c = sum(h.cores for h in p.hosts)
    have_m = sum(h.memory_gb for h in p.hosts)
    who = _names(p, tenants)
    if cores > have_c + 1e-9:
        return (f"host CPU capacity: {who} need at least {cores:g} cores for their minimum "
                f"throughput and data, but the {len(p.hosts)} hosts have {have_c:g} cores")
    if mem > have_m + 1e-9:
        return (f"host memory capacity: {who} need at least {mem:g} GB of VM memory, but the "
                f"{len(p.hosts)} hosts have {have_m:g} GB")
    return None


def _names(p: Problem, tenants: list[int]) -> str:
    names = [p.tenants[i].name for i in tenants]
    return f"tenant {names[0]}" if len(names) == 1 else f"tenants {', '.join(names)}"


def packing_words(p: Problem, tenants: list[int]) -> str:
    """Why a set of tenants that passes the totals still cannot be placed, in words."""
    rule = ("at most one replica per host" if p.spec.one_replica_per_host
            else "each tenant's replicas on at least rf distinct hosts")
    return (f"host CPU/memory capacity: {_names(p, tenants)} cannot be packed together onto "
            f"the {len(p.hosts)} hosts with {rule} (their VMs do not fit host by host)")


@dataclass
class Plan:
    """A plan (or the reason there is none) from the MILP or the heuristic."""

    method: str  # milp or heuristic
    mode: str  # power or cost
    status: str  # optimal, feasible, infeasible, no solution
    message: str = ""
    solve_time_s: float = 0.0
    gap: float | None = None  # relative MIP gap of a feasible MILP plan
    bound: float | None = None  # best proven lower bound of the objective
    choice: dict[int, Candidate] = field(default_factory=dict)  # tenant -> candidate
    placement: dict[int, dict[int, int]] = field(default_factory=dict)  # host -> tenant -> n

    @property
    def has_plan(self) -> bool:
        return self.status in (OPTIMAL, FEASIBLE)


def host_power_w(host: Host, cores_used: float) -> float:
    """Seed 001's eq. 8-9: k*Pmax + (1-k)*Pmax*U for a host in use, 0 W when off."""
    if cores_used <= 0:
        return 0.0
    return host.idle_fraction * host.pmax_w + (1 - host.idle_fraction) * host.pmax_w * (
        cores_used / host.cores)


def evaluate(p: Problem, plan: Plan) -> dict[str, Any]:
    """Power (W), cost ($/h), hosts in use, and per-host cores used of a plan."""
    cores = {h: sum(n * p.vms[plan.choice[i].vm].cores for i, n in by_t.items())
             for h, by_t in plan.placement.items()}
    power = sum(host_power_w(p.hosts[h], c) for h, c in cores.items())
    prices = [p.vms[c.vm].price_hour for c in plan.choice.values()]
    cost = (None if any(x is None for x in prices) else
            sum((p.vms[c.vm].price_hour or 0.0) * c.nodes for c in plan.choice.values()))
    return {"power_w": power, "cost_per_hour": cost,
            "hosts_used": sum(1 for c in cores.values() if c > 0), "cores": cores}


def objective(p: Problem, plan: Plan) -> float:
    ev = evaluate(p, plan)
    return float(ev["power_w"] if plan.mode == "power" else ev["cost_per_hour"] or 0.0)


def check_plan(p: Problem, plan: Plan) -> list[str]:
    """Every requirement a plan breaks, in words (empty for a valid plan)."""
    bad: list[str] = []
    for i, t in enumerate(p.tenants):
        c = plan.choice.get(i)
        if c is None:
            bad.append(f"tenant {t.name} has no VM type")
            continue
        placed = [plan.placement.get(h, {}).get(i, 0) for h in range(len(p.hosts))]
        if sum(placed) != c.nodes:
            bad.append(f"tenant {t.name}: {sum(placed)} nodes placed, {c.nodes} planned")
        if sum(1 for x in placed if x > 0) < t.rf:
            bad.append(f"tenant {t.name}: replicas on fewer than {t.rf} hosts")
        if p.spec.one_replica_per_host and max(placed) > 1:
            bad.append(f"tenant {t.name}: two replicas on one host")
        model = p.models[(t.workload, p.vms[c.vm].name)]
        if model.ops_s(c.nodes) < t.min_ops_s - 1e-6:
            bad.append(f"tenant {t.name}: {model.ops_s(c.nodes):.0f} < {t.min_ops_s:.0f} ops/s")
    for h, by_t in plan.placement.items():
        host = p.hosts[h]
        cores = sum(n * p.vms[plan.choice[i].vm].cores for i, n in by_t.items())
        mem = sum(n * p.vms[plan.choice[i].vm].memory_gb for i, n in by_t.items())
        if cores > host.cores + 1e-9 or mem > host.memory_gb + 1e-9:
            bad.append(f"host {host.name} over capacity ({cores:g} cores, {mem:g} GB)")
    return bad
