"""`casslab report DIR`: the HTML report of a campaign."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from casslab.cli.common import errors_to_exit, out
from casslab.store.records import Results

if TYPE_CHECKING:
    from casslab.analysis.campaign import Analysis


def report(
    results: Annotated[Path, typer.Argument(metavar="DIR",
                                            help="Results directory of a campaign.")],
    out_file: Annotated[Path | None, typer.Option("--out", help="HTML file (default "
                                                  "DIR/report.html).")] = None,
) -> None:
    """Write a self-contained HTML report (statistics, tables, plots) and print a summary.

    Example: casslab report results/rpi
    """
    with errors_to_exit():
        Results.check(results)  # bad input fails before the imports below
    # scipy and matplotlib cost ~2 s to import: only this command pays it.
    from casslab.report.html import build_report

    with errors_to_exit():
        rep = build_report(results, out_file)
    for a in rep.analyses:
        print_cells(a)
    out.print(f"report: {rep.path} ({len(rep.figures)} figures)")


def print_cells(a: Analysis) -> None:
    table = Table(title=f"{a.title} per cell")
    for col in ("cell", "n", "median", "q1", "q3", "mean", "sd", "95 % CI (median)", "coverage"):
        table.add_column(col, justify="right" if col != "cell" else "left")
    for c in a.cells:
        d = c.stats
        table.add_row(c.label or c.key, str(d.n), f"{d.median:.4g}", f"{d.q1:.4g}", f"{d.q3:.4g}",
                      f"{d.mean:.4g}", f"{d.sd:.3g}", f"{d.ci_low:.4g} - {d.ci_high:.4g}",
                      f"{d.ci_coverage:.1%}" + (" !" if d.ci_warning else ""))
    out.print(table)
