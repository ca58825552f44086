"""Seed 001's optimisation problem (eq. 10-21) as a MILP, solved by HiGHS (scipy.optimize.milp).

Variables, with n_ij the fewest nodes of VM type j that meet tenant i's throughput, data
and replication requirements (see casslab.plan.problem for why that is exact):

    y_ij  binary     tenant i uses VM type j                      (eq. 13-14)
    x_ijh integer    nodes of tenant i, type j on host h           (the seed's x)
    s_ih  in [0, 1]  tenant i has a node on host h                 (eq. 17-19)
    r_h   binary     host h is on                                  (eq. 20-21)

    sum_j y_ij = 1;   sum_h x_ijh = n_ij * y_ij      (eq. 11, 12, 14: one type, enough nodes)
    x_ijh <= u_ijh * y_ij                             (eq. 13, u = what fits, or 1 per host)
    s_ih <= sum_j x_ijh;  s_ih <= r_h;  sum_h s_ih >= D_i     (eq. 17-19; s may be
        continuous: x is integer, so s_ih > 0 forces a node onto h)
    sum_ij c_j x_ijh <= C_h r_h;  sum_ij m_j x_ijh <= M_h r_h   (eq. 15-16, 20)

    power: min sum_h k_h Pmax_h r_h + (1 - k_h) Pmax_h / C_h * sum_ij c_j x_ijh   (eq. 10)
    cost:  min sum_ij price_j n_ij y_ij, then (second solve) the least power at that cost

Symmetry breaking: interchangeable hosts (same cores, memory, Pmax, k) are used in order
and loaded in non-increasing cores, which removes the H! relabellings of a plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp  # type: ignore[import-untyped]
from scipy.sparse import coo_matrix  # type: ignore[import-untyped]

from casslab.plan.problem import (
    FEASIBLE,
    INFEASIBLE,
    NO_SOLUTION,
    OPTIMAL,
    Candidate,
    Plan,
    Problem,
    capacity_check,
    fits,
    packing_words,
    precheck,
)

DEFAULT_GAP = 1e-4  # HiGHS' own default relative MIP gap
KIND_COUNTS = True


@dataclass
class _Model:
    c: list[float]
    lo: list[float]
    hi: list[float]
    integer: list[int]
    rows: list[int]
    cols: list[int]
    vals: list[float]
    row_lo: list[float]
    row_hi: list[float]

    def var(self, cost: float, lo: float, hi: float, integer: bool) -> int:
        self.c.append(cost)
        self.lo.append(lo)
        self.hi.append(hi)
        self.integer.append(1 if integer else 0)
        return len(self.c) - 1

    def row(self, terms: list[tuple[int, float]], lo: float, hi: float) -> None:
        r = len(self.row_lo)
        for col, val in terms:
            self.rows.append(r)
            self.cols.append(col)
            self.vals.append(val)
        self.row_lo.append(lo)
        self.row_hi.append(hi)


@dataclass
class _Solved:
    status: str
    time_s: float
    objective: float | None = None
    gap: float | None = None
    bound: float | None = None
    choice: dict[int, Candidate] | None = None
    placement: dict[int, dict[int, int]] | None = None


def _solve(p: Problem, tenants: list[int], mode: str, time_limit_s: float, gap: float,
           cost_cap: float | None = None) -> _Solved:
    """Build and solve the MILP for a subset of tenants. Power objective unless
    mode == 'cost' and cost_cap is None; cost_cap bounds the cost (second stage)."""
    m = _Model([], [], [], [], [], [], [], [], [])
    H = len(p.hosts)
    INF = np.inf
    one = p.spec.one_replica_per_host
    power_obj = mode == "power" or cost_cap is not None
    r = [m.var(h.idle_fraction * h.pmax_w if power_obj else 0.0, 0, 1, True) for h in p.hosts]
    ys: dict[int, list[tuple[Candidate, int]]] = {}
    xs: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (tenant, host) -> [(cand, var)]
    host_cores: list[list[tuple[int, float]]] = [[] for _ in range(H)]
    host_mem: list[list[tuple[int, float]]] = [[] for _ in range(H)]
    cost_terms: list[tuple[int, float]] = []
    need_c: list[tuple[int, float]] = []  # cores and memory the chosen types need in all
    need_m: list[tuple[int, float]] = []
    for i in tenants:
        t = p.tenants[i]
        ys[i] = []
        for k, cand in enumerate(p.candidates[i]):
            vm = p.vms[cand.vm]
            price = (vm.price_hour or 0.0) * cand.nodes
            y = m.var(price if not power_obj else 0.0, 0, 1, True)
            ys[i].append((cand, y))
            cost_terms.append((y, price))
            need_c.append((y, -vm.cores * cand.nodes))
            need_m.append((y, -vm.memory_gb * cand.nodes))
            col = [(y, -float(cand.nodes))]
            for h, host in enumerate(p.hosts):
                ub = min(fits(vm, host), cand.nodes - t.rf + 1, 1 if one else cand.nodes)
                if ub <= 0:
                    continue
                pc = (1 - host.idle_fraction) * host.pmax_w * vm.cores / host.cores
                x = m.var(pc if power_obj else 0.0, 0, ub, True)
                col.append((x, 1.0))
                m.row([(x, 1.0), (y, -float(ub))], -INF, 0.0)
                xs.setdefault((i, h), []).append((k, x))
                host_cores[h].append((x, vm.cores))
                host_mem[h].append((x, vm.memory_gb))
            m.row(col, 0.0, 0.0)
        m.row([(y, 1.0) for _, y in ys[i]], 1.0, 1.0)
        if t.rf > 1 and not one:
            spread = []
            for h in range(H):
                if (i, h) not in xs:
                    continue
                s = m.var(0.0, 0, 1, False)
                spread.append((s, 1.0))
                m.row([(s, 1.0), *[(x, -1.0) for _, x in xs[(i, h)]]], -INF, 0.0)
                m.row([(s, 1.0), (r[h], -1.0)], -INF, 0.0)
            m.row(spread, float(t.rf), INF)
    for h, host in enumerate(p.hosts):
        m.row([*host_cores[h], (r[h], -host.cores)], -INF, 0.0)
        m.row([*host_mem[h], (r[h], -host.memory_gb)], -INF, 0.0)
    # The hosts on must cover the total demand: implied by the per-host rows, but explicit
    # it is a knapsack cover HiGHS can cut on, which closes most of the bound gap.
    m.row([*[(r[h], host.cores) for h, host in enumerate(p.hosts)], *need_c], 0.0, INF)
    m.row([*[(r[h], host.memory_gb) for h, host in enumerate(p.hosts)], *need_m], 0.0, INF)
    if KIND_COUNTS:
        # Hosts on per kind as one integer: HiGHS branches on "how many big hosts" instead
        # of host by host (with the ordering below, the first N of a kind are the ones on).
        kinds: dict[tuple[float, float, float, float], list[int]] = {}
        for h, host in enumerate(p.hosts):
            kinds.setdefault(host.kind(), []).append(h)
        for members in kinds.values():
            if len(members) > 1:
                nk = m.var(0.0, 0, len(members), True)
                m.row([(nk, 1.0), *[(r[h], -1.0) for h in members]], 0.0, 0.0)
    for h in range(H - 1):  # symmetry breaking among interchangeable neighbours
        if p.hosts[h].kind() == p.hosts[h + 1].kind():
            m.row([(r[h], 1.0), (r[h + 1], -1.0)], 0.0, INF)
            m.row([*host_cores[h], *[(x, -c) for x, c in host_cores[h + 1]]], 0.0, INF)
    if cost_cap is not None:
        m.row(cost_terms, -INF, cost_cap * (1 + 1e-9) + 1e-9)

    A = coo_matrix((m.vals, (m.rows, m.cols)), shape=(len(m.row_lo), len(m.c))).tocsr()
    started = time.monotonic()
    res = milp(np.array(m.c), integrality=np.array(m.integer),
               bounds=Bounds(np.array(m.lo, dtype=float), np.array(m.hi, dtype=float)),
               constraints=LinearConstraint(A, np.array(m.row_lo), np.array(m.row_hi)),
               options={"time_limit": max(time_limit_s, 0.01), "mip_rel_gap": gap,
                        "disp": False})
    took = time.monotonic() - started
    if res.status == 2:
        return _Solved(INFEASIBLE, took)
    if res.x is None:
        return _Solved(NO_SOLUTION, took)
    x_val = np.round(res.x).astype(int)
    choice = {i: max(ys[i], key=lambda cy: float(res.x[cy[1]]))[0] for i in tenants}
    placement: dict[int, dict[int, int]] = {}
    for (i, h), items in xs.items():
        n = sum(int(x_val[x]) for k, x in items if p.candidates[i][k] == choice[i])
        if n:
            placement.setdefault(h, {})[i] = n
    mip_gap = float(getattr(res, "mip_gap", 0.0) or 0.0)
    bound = getattr(res, "mip_dual_bound", None)
    status = OPTIMAL if res.status == 0 else FEASIBLE
    return _Solved(status, took, float(res.fun), mip_gap,
                   float(bound) if bound is not None else None, choice, placement)


def solve_milp(p: Problem, *, time_limit_s: float = 60.0, gap: float = DEFAULT_GAP,
               explain: bool = True) -> Plan:
    """The optimal plan (power or cost, per p.spec.mode) within `time_limit_s` seconds.

    Status optimal (within `gap`), feasible (time limit hit; `gap` says how far from the
    bound), infeasible (message names the requirement that cannot be met) or no solution
    (time limit hit before any plan was found).
    """
    mode = p.spec.mode
    started = time.monotonic()
    why = precheck(p)
    if why:
        return Plan("milp", mode, INFEASIBLE, why, time.monotonic() - started)
    everyone = list(range(len(p.tenants)))
    sol = _solve(p, everyone, mode, time_limit_s, gap)
    if sol.status == INFEASIBLE:
        msg = _explain(p, everyone, time_limit_s - (time.monotonic() - started), gap) \
            if explain else packing_words(p, everyone)
        return Plan("milp", mode, INFEASIBLE, msg, time.monotonic() - started)
    if sol.status == NO_SOLUTION:
        return Plan("milp", mode, NO_SOLUTION, f"no plan found within the time limit of "
                    f"{time_limit_s:g} s", time.monotonic() - started)
    status, sgap, bound = sol.status, sol.gap, sol.bound
    choice, placement = sol.choice or {}, sol.placement or {}
    note = ""
    if mode == "cost" and sol.objective is not None:
        left = time_limit_s - (time.monotonic() - started)
        second = _solve(p, everyone, mode, max(left, 1.0), gap, cost_cap=sol.objective)
        if second.choice is not None and second.placement is not None:
            choice, placement = second.choice, second.placement
            if second.status != OPTIMAL:
                note = "placement: least power at this cost not proven (time limit)"
        else:
            note = "placement: not optimised for power (time limit)"
    plan = Plan("milp", mode, status, note, time.monotonic() - started, sgap, bound,
                choice, placement)
    if status == FEASIBLE:
        plan.message = (f"time limit {time_limit_s:g} s reached; relative gap "
                        f"{(sgap or 0) * 100:.2f} % to the best bound"
                        + (f"; {note}" if note else ""))
    return plan


def _explain(p: Problem, tenants: list[int], time_left_s: float, gap: float) -> str:
    """Deletion filter: drop tenants while the rest stays infeasible, then say why the
    remaining (minimal) set cannot be placed."""
    core = list(tenants)
    deadline = time.monotonic() + max(time_left_s, 5.0)
    for i in list(core):
        if len(core) == 1 or time.monotonic() > deadline:
            break
        rest = [k for k in core if k != i]
        if _solve(p, rest, "power", max(deadline - time.monotonic(), 0.5),
                  gap).status == INFEASIBLE:
            core = rest
    return capacity_check(p, core) or packing_words(p, core)
