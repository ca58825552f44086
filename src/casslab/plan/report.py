"""Run the planner on a spec and describe its plans as plain data (tables and JSON).

`make_plan` is the library entry point (a spec file in, plans out); `casslab plan` parses
the spec first, so that a bad one fails before the solver's imports, then calls
`plan_spec`, and only renders what `plan_tables` and `report_json` return.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casslab import __version__
from casslab.plan.heuristic import solve_heuristic
from casslab.plan.milp import DEFAULT_GAP, solve_milp
from casslab.plan.model import build_models, models_json
from casslab.plan.problem import Plan, Problem, build_problem, evaluate, host_power_w
from casslab.plan.spec import PlanSpec, load_plan_spec


@dataclass
class PlanReport:
    spec: PlanSpec
    problem: Problem
    milp: Plan | None
    heuristic: Plan


def make_plan(spec_path: Path, *, mode: str | None = None, heuristic_only: bool = False,
              time_limit_s: float = 60.0, gap: float = DEFAULT_GAP) -> PlanReport:
    """Load a spec, build the throughput models, and plan with the MILP and the heuristic.

    Raises PlanSpecError (bad spec) or ModelError (no usable throughput data). An
    infeasible requirement is not an error: the plans say which one in `message`.
    """
    spec = load_plan_spec(spec_path)
    if mode is not None:
        spec = spec.with_mode(mode)
    return plan_spec(spec, heuristic_only=heuristic_only, time_limit_s=time_limit_s, gap=gap)


def plan_spec(spec: PlanSpec, *, heuristic_only: bool = False, time_limit_s: float = 60.0,
              gap: float = DEFAULT_GAP) -> PlanReport:
    """Plan a validated spec (see make_plan)."""
    problem = build_problem(spec, build_models(spec))
    milp = None if heuristic_only else solve_milp(problem, time_limit_s=time_limit_s, gap=gap)
    return PlanReport(spec, problem, milp, solve_heuristic(problem))


def plan_json(p: Problem, plan: Plan) -> dict[str, Any]:
    """One plan as JSON-able data: status, totals, per tenant and per host."""
    out: dict[str, Any] = {"method": plan.method, "mode": plan.mode, "status": plan.status,
                           "message": plan.message, "solve_time_s": round(plan.solve_time_s, 4)}
    if plan.method == "milp":
        out["gap"] = plan.gap
        out["bound"] = plan.bound
    if not plan.has_plan:
        return out
    ev = evaluate(p, plan)
    out.update(power_w=round(ev["power_w"], 3), cost_per_hour=ev["cost_per_hour"],
               hosts_used=ev["hosts_used"])
    out["tenants"] = [{"name": t.name, "workload": t.workload, "min_ops_s": t.min_ops_s,
                       "rf": t.rf, "dataset_gb": t.dataset_gb,
                       "vm_type": p.vms[plan.choice[i].vm].name,
                       "nodes": plan.choice[i].nodes,
                       "model_ops_s": round(plan.choice[i].ops_s, 1),
                       "hosts": sum(1 for by_t in plan.placement.values() if by_t.get(i))}
                      for i, t in enumerate(p.tenants)]
    out["placement"] = [{"host": h.name,
                         "nodes": {p.tenants[i].name: n for i, n in
                                   sorted(plan.placement.get(k, {}).items())},
                         "cores_used": ev["cores"].get(k, 0.0),
                         "utilisation": round(ev["cores"].get(k, 0.0) / h.cores, 4),
                         "power_w": round(_host_power(p, k, ev), 3)}
                        for k, h in enumerate(p.hosts)]
    return out


def _host_power(p: Problem, h: int, ev: dict[str, Any]) -> float:
    return host_power_w(p.hosts[h], ev["cores"].get(h, 0.0))


def report_json(rep: PlanReport) -> dict[str, Any]:
    """The whole run as JSON-able data (what `casslab plan --json` prints)."""
    s = rep.spec
    return {"casslab_version": __version__, "spec": s.name, "source": s.source,
            "mode": s.mode, "one_replica_per_host": s.one_replica_per_host,
            "hosts": len(s.hosts), "tenants": len(s.tenants),
            "vm_types": [v.name for v in s.vm_types],
            "models": models_json(rep.problem.models),
            "milp": plan_json(rep.problem, rep.milp) if rep.milp else None,
            "heuristic": plan_json(rep.problem, rep.heuristic)}


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]


def plan_tables(p: Problem, plan: Plan) -> list[Table]:
    """A plan as the seed's tables: VM type and count per tenant (tables 26/29/32/35) and
    nodes per tenant on each host in use (tables 27/30/33/36; hosts off are left out)."""
    if not plan.has_plan:
        return []
    ev = evaluate(p, plan)
    names = [t.name for t in p.tenants]
    per_tenant = Table(f"{plan.method}: VM type and nodes per tenant",
                       ["tenant", "workload", "min ops/s", "rf", "VM type", "nodes",
                        "model ops/s", "hosts"], [])
    for i, t in enumerate(p.tenants):
        c = plan.choice[i]
        per_tenant.rows.append([t.name, t.workload, f"{t.min_ops_s:.0f}", str(t.rf),
                                p.vms[c.vm].name, str(c.nodes), f"{c.ops_s:.0f}",
                                str(sum(1 for b in plan.placement.values() if b.get(i)))])
    hosts = Table(f"{plan.method}: nodes per host ({ev['hosts_used']} of {len(p.hosts)} "
                  "hosts on)", ["host", *names, "cores", "U", "power (W)"], [])
    for h, host in enumerate(p.hosts):
        by_t = plan.placement.get(h, {})
        if not by_t:
            continue
        cores = ev["cores"][h]
        hosts.rows.append([host.name, *[str(by_t.get(i, 0)) for i in range(len(names))],
                           f"{cores:g}/{host.cores:g}", f"{cores / host.cores:.2f}",
                           f"{_host_power(p, h, ev):.1f}"])
    return [per_tenant, hosts]


def summary_line(p: Problem, plan: Plan) -> str:
    """One line: method, status, totals, solve time."""
    head = f"{plan.method}: {plan.status}"
    if not plan.has_plan:
        return f"{head}: {plan.message} ({plan.solve_time_s:.2f} s)"
    ev = evaluate(p, plan)
    cost = ev["cost_per_hour"]
    bits = [f"power {ev['power_w']:.1f} W", f"{ev['hosts_used']} hosts on"]
    if cost is not None:
        bits.append(f"cost {cost:.4f} $/h")
    if plan.method == "milp" and plan.gap is not None and plan.status != "optimal":
        bits.append(f"gap {plan.gap * 100:.2f} %")
    line = f"{head} ({plan.mode}): {', '.join(bits)}; solved in {plan.solve_time_s:.2f} s"
    return f"{line}; {plan.message}" if plan.message else line
