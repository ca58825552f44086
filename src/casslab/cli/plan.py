"""`casslab plan SPEC`: VM types, node counts and placement at least power (or cost)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from casslab.cli.common import err, errors_to_exit, out

# Not 2: a spec with no feasible plan is an answer, not a usage error.
NO_PLAN_EXIT = 3

def plan(
    spec: Annotated[Path, typer.Argument(help="Planner spec (YAML), see docs/planner.md.")],
    mode: Annotated[str | None, typer.Option(help="power or cost (default: the spec's "
                                             "mode, else power).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    heuristic_only: Annotated[bool, typer.Option("--heuristic-only",
                                                 help="Skip the MILP.")] = False,
    time_limit: Annotated[str, typer.Option(help="MILP time limit, e.g. 60s, 2m.")] = "60s",
) -> None:
    """Plan VM types, node counts and host placement of Cassandra tenants.

    Least power (or cost) with seed 001's energy-aware MILP on HiGHS, and best-fit
    decreasing for comparison; exit code 3 when no plan exists (2 is a usage error).

    Example: casslab plan examples/plan-seed001.yaml --mode cost
    """
    from casslab.plan.spec import load_plan_spec, parse_duration_s

    with errors_to_exit():
        limit_s = parse_duration_s(time_limit)
        parsed = load_plan_spec(spec)
        if mode is not None:
            parsed = parsed.with_mode(mode)
    # The MILP's scipy/HiGHS imports cost ~0.4 s (more on a busy machine): only a valid
    # spec pays them.
    from casslab.plan.report import plan_spec, plan_tables, report_json, summary_line

    with errors_to_exit():
        if as_json:
            rep = plan_spec(parsed, heuristic_only=heuristic_only, time_limit_s=limit_s)
        else:
            with err.status(f"planning {spec}"):
                rep = plan_spec(parsed, heuristic_only=heuristic_only, time_limit_s=limit_s)
    primary = rep.milp or rep.heuristic
    if as_json:
        print(json.dumps(report_json(rep), indent=2))
        if not primary.has_plan:
            raise typer.Exit(NO_PLAN_EXIT)
        return
    plans = [p for p in (rep.milp, rep.heuristic) if p is not None]
    for p in plans:
        for t in plan_tables(rep.problem, p):
            table = Table(title=t.title)
            for k, col in enumerate(t.columns):
                table.add_column(col, justify="left" if k == 0 or col in (
                    "workload", "VM type") else "right")
            for row in t.rows:
                table.add_row(*row)
            out.print(table)
    for p in plans:
        out.print(summary_line(rep.problem, p), highlight=False)
    if not primary.has_plan:
        raise typer.Exit(NO_PLAN_EXIT)
