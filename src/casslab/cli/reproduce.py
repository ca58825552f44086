"""`casslab reproduce STUDY`: run a study's specs, then write its doc's tables and figures."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from casslab.cli.common import err, errors_to_exit, out


def reproduce(
    study: Annotated[str, typer.Argument(help="The study: 000, 001, 002, 003 or 004.")],
    scale: Annotated[str, typer.Option(
        "--scale", help="here (the specs as written), paper (the study's own sizes, their "
        "`scales:` block), another size some of its specs offer (only those specs run; "
        "002: paper-rounds, the study's size in rounds until decisive; 000: three-nodes, "
        "1, 2 and 3 nodes in rounds for the patterns over node counts, and three-nodes-"
        "long, the same with a 100-minute budget) or smoke (a few "
        "cells of one short trial).")] = "here",
    results: Annotated[Path, typer.Option(
        "--results", help="Folder of the campaigns' results folders (<study folder>-<spec>"
        "[-<scale>] each; an existing one resumes).")] = Path("results/reproduce"),
    docs: Annotated[Path, typer.Option(
        "--docs", help="Folder of the studies' docs: <study>.md gets the tables, img/ the "
                       "figures.")] = Path("docs/reproductions"),
    examples: Annotated[Path, typer.Option(
        "--examples", help="Folder of the studies' spec folders (<study>-*/).")]
    = Path("examples"),
    no_run: Annotated[bool, typer.Option(
        "--no-run", help="Run nothing: write the tables from the results already there.")]
    = False,
) -> None:
    """Run every spec of a study (examples/<study>-*/, resumable), then write the doc's
    generated blocks (verdicts, paper values, figures) from the results databases; the
    verdicts are the reports' own, one engine.

    Another scale writes its own blocks (`verdicts-paper`, ...) beside the here ones. A
    spec whose results folder is not here keeps the doc's rows and figures for it (the
    doc says so), so rerunning one spec changes only its rows.

    Examples: casslab reproduce 002 --scale smoke
              casslab reproduce 002 --scale paper-rounds --no-run
              casslab reproduce 002 --no-run --results results/reproduce
    """
    from casslab.report.reproduce import campaigns, write_doc

    with errors_to_exit():
        camps = campaigns(study, examples, results, scale)
    if not no_run:
        from casslab.cli.experiment import run

        for c in camps:
            t0 = time.monotonic()
            out.print(f"{study}: {c.spec} -> {c.results}", soft_wrap=True, highlight=False)
            try:
                run(c.spec, results=c.results, lab_name=None, allow_large=False,
                    scale=None if scale == "here" else scale)
            except typer.Exit as e:
                err.print(f"error: {c.spec}: the campaign ended with exit code {e.exit_code}; "
                          "the doc is left as it was (rerun to resume)", highlight=False)
                raise
            out.print(f"{c.spec}: done in {(time.monotonic() - t0) / 60:.1f} min",
                      soft_wrap=True, highlight=False)
    with errors_to_exit():
        doc, pngs = write_doc(study, camps, docs, scale)
    out.print(f"wrote {doc} and {len(pngs)} figures in {docs / 'img'}", soft_wrap=True,
              highlight=False)
