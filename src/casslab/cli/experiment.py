"""`casslab experiment`: validate, plan, run (resumable) and export campaigns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from casslab.cli.common import err, errors_to_exit, out
from casslab.core.paths import default_cache, default_home

# The campaign modules (runner, spec, design, store) are imported inside the commands:
# `casslab --help` and the lab commands need none of them (start-up time).
if TYPE_CHECKING:
    from casslab.experiment.design import PlannedTrial
    from casslab.experiment.runner import Event, Outcome
    from casslab.experiment.sequential import ShouldStop
    from casslab.experiment.spec import CampaignSpec
    from casslab.experiment.steadywindow import SteadyCut
    from casslab.tune.factor import TunerBeside

app = typer.Typer(help="Campaigns of trials from a YAML spec: validate, plan, run, export.",
                  no_args_is_help=True)

AllowLarge = Annotated[bool, typer.Option(
    "--allow-large", help="Accept a campaign above 20000 trials or 30 days of (upper-bound) "
    "wall time; without it such a spec is refused before it is planned.")]
Pilot = Annotated[Path | None, typer.Option(
    "--pilot", help="A results directory (e.g. from casslab calibrate) whose within-cell "
    "spread is the noise for each finding's smallest detectable effect (default: "
    "design.noise_cv).")]
Scale = Annotated[str | None, typer.Option(
    "--scale", help="Run the spec at one of its named sizes (its `scales:` block, e.g. "
    "paper) or `smoke` (a few cells of one short trial); default: as written.")]


def _tuner(spec: CampaignSpec) -> TunerBeside | None:
    """The tuner of factor `tuner`, its levels' rules read (a bad rules file is a one-line
    error now, not at the first tuner trial); None without tuner levels."""
    from casslab.experiment.beside import tuner_levels

    if not tuner_levels(spec):
        return None
    from casslab.tune.factor import TunerBeside

    beside = TunerBeside()
    beside.check(spec)
    return beside


@app.command()
def validate(spec: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
             allow_large: AllowLarge = False, scale: Scale = None,
             pilot: Pilot = None) -> None:
    """Check a spec, and each of its sizes unless --scale names one; errors name the
    field, its line and what is valid.

    Example: casslab experiment validate examples/000-rpi-iot/links.yaml
    """
    from casslab.experiment.design import plan as make_plan
    from casslab.experiment.spec import load_spec, scale_names

    with errors_to_exit():
        sizes: list[str | None] = [scale] if scale else [None, *scale_names(spec)]
        for size in sizes:
            s = load_spec(spec, allow_large=allow_large or size is not None, scale=size)
            _tuner(s)
            trials = make_plan(s)
            cells = len({t.cell.index for t in trials})
            per = "cell and block" if s.design.reset == "none" else "kept trial"
            what = f"{spec}" + (f" --scale {size}" if size else "")
            r = s.reference
            ref = (f"; reference: {_n(len(r.values), 'value')}, "
                   f"{_n(len(r.findings), 'finding')}" + (
                       f" ({len(r.absent)} more not compared: levels this size drops)"
                       if r.absent else "") if not r.empty or r.absent else "")
            # The pilot is read first: a bad one is the only line printed.
            lines, more = _detectable(s, pilot) if size is None or size == scale else ([], [])
            # One line per size, never folded (paths make it long; scripts grep it).
            lab_warm = (f", {s.design.lab_warmup_trials} per lab after it is built"
                        if s.design.lab_warmup_trials else "")
            lab_warm += (f", {_n(s.design.warmup_rounds, 'warm-up round')} before round 1"
                         if s.design.warmup_rounds else "")
            out.print(f"{what}: valid; {cells} cells, {len(trials)} trials "
                      f"({s.design.warmup_trials} warm-up per {per}{lab_warm}){ref}",
                      soft_wrap=True)
            warnings = _power_warnings(s, trials)
            if size == "smoke" and warnings:
                # A smoke run checks the pipeline; one trial per cell decides nothing.
                warnings = [f"{_n(len(warnings), 'finding')} cannot be decided at this size "
                            "(smoke runs check the pipeline, not the findings)"]
            if s.design.until == "verdicts" and s.reference.findings:
                out.print(f"  {_rounds_line(s)}", highlight=False, soft_wrap=True)
            if size is None or size == scale:
                for line in lines:
                    out.print(f"  {line}", highlight=False, soft_wrap=True)
                warnings += more
            for warning in warnings:
                err.print(f"[yellow]warning:[/] {what}: {warning}", highlight=False,
                          soft_wrap=True)


def _rounds_line(spec: CampaignSpec) -> str:
    """When an `until: verdicts` design's intervals can first decide, and where they
    are narrowest: both follow from trials.max, so a larger max costs early rounds."""
    from casslab.analysis.sequential import schedule

    d, m = spec.design, len(spec.reference.findings)
    sch = schedule(d.trials_max, spec.reference.alpha / m)
    return (f"rounds: {d.trials} to {d.trials_max} until every finding is decisive; each "
            f"finding's anytime-valid interval ({(1 - sch.alpha) * 100:.2f} %: "
            f"{(1 - spec.reference.alpha) * 100:g} % over {_n(m, 'finding')}) can be finite from "
            f"round {sch.first_finite} and is narrowest at round {d.trials_max} "
            f"(c = {sch.c:.3g}, tuned to trials.max)")


def _detectable(spec: CampaignSpec, pilot: Path | None) -> tuple[list[str], list[str]]:
    """Per finding, the smallest detectable effect (casslab.cli.power)."""
    from casslab.cli.power import finding_lines

    return finding_lines(spec, pilot)


def _power_warnings(spec: CampaignSpec, trials: list[PlannedTrial]) -> list[str]:
    """Findings this plan cannot decide (see casslab.analysis.findings.power_warnings)."""
    from casslab.analysis.findings import power_warnings

    kept: dict[int, tuple[dict[str, Any], int]] = {}
    for t in trials:
        params, n = kept.get(t.cell.index, (dict(t.cell.params), 0))
        kept[t.cell.index] = (params, n + (not t.warmup))
    return power_warnings(spec.reference, list(kept.values()))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@app.command()
def plan(spec: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
         allow_large: AllowLarge = False, scale: Scale = None, pilot: Pilot = None) -> None:
    """Print the run order: block, cell, trial number, warm-up, the reset before the
    trial and why; then blocks, warm-ups, kept trials and resets by kind.

    Example: casslab experiment plan examples/004-containers/1-mixed.yaml
    """
    from casslab.experiment.design import plan as make_plan
    from casslab.experiment.design import reset_kind, summarize_plan
    from casslab.experiment.spec import load_spec

    with errors_to_exit():
        s = load_spec(spec, allow_large=allow_large, scale=scale)
        _tuner(s)
        trials = make_plan(s)
    table = Table(title=f"{len(trials)} trials in run order")
    rounds = s.design.interleaved
    for col in ("seq", *(("round",) if rounds else ()), "block", "cell", "trial", "warm-up",
                "reset before", "why"):
        table.add_column(col, overflow="fold")  # a cut cell key would hide its last levels
    for t in trials:
        table.add_row(str(t.seq), *((str(t.round),) if rounds else ()), str(t.block),
                      t.cell.key, str(t.trial_no), "yes" if t.warmup else "",
                      "" if t.reset == "none" else reset_kind(t), t.why)
    lines, warnings = _detectable(s, pilot)
    out.print(table)
    out.print(summarize_plan(trials).line(), highlight=False)
    for line in lines:
        out.print(line, highlight=False, soft_wrap=True)
    for warning in warnings:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)


@app.command()
def run(
    spec: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
    results: Annotated[Path | None, typer.Option(help="Results directory (default "
                                                 "results/<name>); an existing one resumes.")]
    = None,
    lab_name: Annotated[str | None, typer.Option("--lab", help="Name of the lab the campaign "
                                                 "builds (default exp-<digest>).")] = None,
    allow_large: AllowLarge = False,
    scale: Scale = None,
) -> None:
    """Run a campaign; trials are committed as they end, a rerun resumes, Ctrl-C stops
    cleanly (lab down, finished trials kept).

    Examples: casslab experiment run examples/000-rpi-iot/links.yaml --results results/rpi
              casslab experiment run examples/000-rpi-iot/links.yaml --scale smoke
    """
    from casslab.experiment.runner import CampaignInterrupted, CampaignRunner
    from casslab.experiment.spec import load_spec

    with errors_to_exit():
        s = load_spec(spec, allow_large=allow_large, scale=scale)
        beside = _tuner(s)
        target = results or Path("results") / (s.name + (f"-{scale}" if scale else ""))
        columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("trials"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn()]
        # Transient, and only on a terminal: an error before the first trial is then the
        # only line on stderr (piped, a finished display leaves a line behind).
        with Progress(*columns, console=err, transient=True,
                      disable=not err.is_terminal) as progress:
            task = progress.add_task("starting", total=None)

            def on_event(e: Event) -> None:
                if e.kind == "plan":
                    progress.update(task, total=e.total, completed=e.done)
                    progress.console.print(e.message)
                elif e.kind in ("trial-end", "message", "round"):
                    progress.update(task, completed=e.done)
                    progress.console.print(e.message, highlight=False, markup=False)
                elif e.kind == "trial-start":
                    progress.update(task, description=e.message)
                else:
                    progress.update(task, description=e.message)
                    if e.kind == "search" and "peak" in e.message.split(":")[0]:
                        progress.console.print(e.message, highlight=False, markup=False)

            try:
                outcome = CampaignRunner(s, target, home=default_home(), cache=default_cache(),
                                         lab_name=lab_name, on_event=on_event,
                                         beside=beside, should_stop=_stop_rule(s, target),
                                         steady=_steady(s)).run()
            except CampaignInterrupted as exc:
                progress.stop()
                err.print(f"[bold red]interrupted:[/] {exc}", highlight=False)
                raise typer.Exit(130) from None
    out.print(f"{outcome.done} trials run, {outcome.skipped} already done, {outcome.failed} "
              f"failed, in {outcome.elapsed_s:.0f} s; results: {outcome.results}", soft_wrap=True)
    if s.design.guard is not None:
        out.print(f"design.guard: {outcome.guard_reruns} runs thrown away and run again for "
                  f"outside CPU over {s.design.guard.max_outside_cpu_pct:g} %; "
                  f"{outcome.disturbed} kept trials still over it (flagged)", soft_wrap=True,
                  highlight=False)
    if outcome.stop_line:
        out.print(outcome.stop_line, soft_wrap=True, highlight=False)
        for line in _final_lines(s, outcome):
            out.print(f"  {line}", soft_wrap=True, highlight=False, markup=False)
    out.print(f"report: casslab report {outcome.results}", soft_wrap=True)
    if outcome.failed:
        raise typer.Exit(1)


def _steady(spec: CampaignSpec) -> SteadyCut | None:
    """workload.warmup: until-steady's classifier (MSER-5, casslab.analysis.steady) on
    a trial's throughput and p50 series, else None."""
    if spec.workload.warmup is None:
        return None
    from casslab.analysis.steady import steady_start

    def cut(series: Sequence[Sequence[float]]) -> tuple[int, str]:
        found = steady_start(series)
        return found.start, found.klass

    return cut


def _final_lines(spec: CampaignSpec, outcome: Outcome) -> tuple[str, ...]:
    """The verdicts an until-verdicts campaign ended with: when it ran out of rounds or
    budget, judged as such (each inconclusive one with what would decide it), else the
    stopping rule's last answer."""
    from casslab.cli.stopping import spent_lines

    spent = spent_lines(spec, outcome.results, outcome.stopped_by, outcome.last_round,
                        outcome.round_s)
    return spent or (outcome.decision.lines if outcome.decision else ())


def _stop_rule(spec: CampaignSpec, results: Path) -> ShouldStop | None:
    """design.until: verdicts' stopping rule (casslab.cli.stopping), else None."""
    if spec.design.until != "verdicts":
        return None
    from casslab.cli.stopping import until_verdicts

    return until_verdicts(spec, results)


@app.command()
def export(
    results: Annotated[Path, typer.Argument(help="Results directory of a campaign.")],
    fmt: Annotated[str, typer.Option("--format", help="csv or parquet.")] = "csv",
    out_dir: Annotated[Path | None, typer.Option("--out", help="Where to write (default "
                                                 "DIR/export).")] = None,
) -> None:
    """Export every table of the results database as CSV or Parquet.

    Example: casslab experiment export results/rpi --format parquet
    """
    from casslab.store.db import export as export_tables

    with errors_to_exit():
        paths = export_tables(results, fmt, out_dir)
    for p in paths:
        out.print(str(p))
