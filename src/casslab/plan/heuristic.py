"""Best-fit decreasing: the greedy placement the MILP is compared with.

Each tenant takes its cheapest VM type (fewest cores x nodes for power, lowest price for
cost; ties to fewer nodes). Tenants are placed largest first (cores needed). A tenant's
first D nodes go to D distinct hosts (all of them with one replica per host), every node
to the host in use that it fits tightest (least cores left after it), opening the host
with the lowest idle power per core only when no host in use fits. A tenant that does not
fit with its cheapest type is retried with the next one.
"""

from __future__ import annotations

import time

from casslab.plan.problem import (
    FEASIBLE,
    INFEASIBLE,
    Candidate,
    Plan,
    Problem,
    packing_words,
    precheck,
)


def _preference(p: Problem, c: Candidate) -> tuple[float, float, int]:
    vm = p.vms[c.vm]
    if p.spec.mode == "cost":
        return ((vm.price_hour or 0.0) * c.nodes, vm.cores * c.nodes, c.nodes)
    return (vm.cores * c.nodes, vm.memory_gb * c.nodes, c.nodes)


def solve_heuristic(p: Problem) -> Plan:
    """A plan by best-fit decreasing (status feasible), or infeasible with the reason."""
    started = time.monotonic()
    mode = p.spec.mode
    why = precheck(p)
    if why:
        return Plan("heuristic", mode, INFEASIBLE, why, time.monotonic() - started)
    H = len(p.hosts)
    free_c = [h.cores for h in p.hosts]
    free_m = [h.memory_gb for h in p.hosts]
    used = [False] * H
    open_order = sorted(range(H), key=lambda h: (p.hosts[h].idle_fraction * p.hosts[h].pmax_w
                                                 / p.hosts[h].cores, h))
    prefs = {i: sorted(p.candidates[i], key=lambda c: _preference(p, c))
             for i in range(len(p.tenants))}
    order = sorted(prefs, key=lambda i: (-_preference(p, prefs[i][0])[0], i))
    choice: dict[int, Candidate] = {}
    placement: dict[int, dict[int, int]] = {}
    for i in order:
        t = p.tenants[i]
        for cand in prefs[i]:
            vm = p.vms[cand.vm]
            mine: dict[int, int] = {}
            ok = True
            for k in range(cand.nodes):
                distinct = k < t.rf or p.spec.one_replica_per_host
                fit = [h for h in range(H) if free_c[h] >= vm.cores - 1e-9
                       and free_m[h] >= vm.memory_gb - 1e-9 and not (distinct and h in mine)]
                in_use = [h for h in fit if used[h]]
                if in_use:
                    h = min(in_use, key=lambda h: (free_c[h] - vm.cores, h))
                elif fit:
                    h = min(fit, key=open_order.index)
                else:
                    ok = False
                    break
                used[h] = True
                free_c[h] -= vm.cores
                free_m[h] -= vm.memory_gb
                mine[h] = mine.get(h, 0) + 1
            if ok:
                choice[i] = cand
                for h, n in mine.items():
                    placement.setdefault(h, {})[i] = n
                break
            for h, n in mine.items():  # undo, try the next VM type
                free_c[h] += n * vm.cores
                free_m[h] += n * vm.memory_gb
                used[h] = any(placement.get(h, {}).values())
        else:
            placed = list(choice)
            return Plan("heuristic", mode, INFEASIBLE,
                        f"best-fit decreasing could not place tenant {t.name}: "
                        + packing_words(p, [*placed, i]), time.monotonic() - started)
    return Plan("heuristic", mode, FEASIBLE, "", time.monotonic() - started, None, None,
                choice, placement)
