"""`casslab compare A B`: two results directories (or two cells of one) side by side."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from casslab.cli.common import errors_to_exit, out
from casslab.store.records import Results

# scipy and statsmodels come with the analysis: imported by the command only (start-up
# time of every other command).
if TYPE_CHECKING:
    from casslab.analysis.compare import Comparison


def compare_cmd(
    a: Annotated[Path, typer.Argument(help="Results directory A (the baseline).")],
    b: Annotated[Path, typer.Argument(help="Results directory B (may be A again with "
                                      "--cell-a/--cell-b).")],
    cell_a: Annotated[str | None, typer.Option(help="Only this cell of A, e.g. "
                                               "'nodes=1,workload=ycsb-a'.")] = None,
    cell_b: Annotated[str | None, typer.Option(help="Only this cell of B.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Compare every response of two sets of trials: medians, change, Welch t test,
    Hedges' g; differences flagged only where the Holm-corrected p <= 0.01.

    Example: casslab compare results/rpi results/rpi \
--cell-a nodes=1,network=ethernet-100,workload=ycsb-a \
--cell-b nodes=2,network=ethernet-100,workload=ycsb-a
    """
    with errors_to_exit():
        for directory in (a, b):  # bad input fails before the imports below (~2 s)
            Results.check(directory, campaign=False)
    from casslab.analysis.compare import ALPHA, compare, load_side

    with errors_to_exit():
        res = compare(load_side(a, cell_a), load_side(b, cell_b), alpha=ALPHA)
    if as_json:
        print(json.dumps(res.to_json(), indent=2))
        return
    print_comparison(res)


def _g(v: float) -> str:
    return "-" if math.isnan(v) else f"{v:.4g}"


def print_comparison(res: Comparison) -> None:
    table = Table(title=f"A: {res.a}   B: {res.b}")
    for col in ("response", "n A", "n B", "median A", "median B", "change", "Welch t",
                "p (Holm)", "Hedges g", "differs"):
        table.add_column(col, justify="left" if col == "response" else "right")
    for r in res.rows:
        change = "-" if math.isnan(r.change_pct) else f"{r.change_pct:+.1f} %"
        p = "-" if math.isnan(r.p_holm) else ("< 0.001" if r.p_holm < 0.001
                                               else f"{r.p_holm:.3f}")
        table.add_row(f"{r.title} ({r.unit})", str(r.n_a), str(r.n_b), _g(r.median_a),
                      _g(r.median_b), change, _g(r.welch_t), p, _g(r.hedges_g),
                      "YES" if r.flagged else "no")
    out.print(table)
    flagged = [r.title for r in res.rows if r.flagged]
    out.print(f"{len(flagged)} of {len(res.rows)} responses differ (Holm-corrected p <= "
              f"{res.alpha:g})" + (f": {', '.join(flagged)}" if flagged else ""))
