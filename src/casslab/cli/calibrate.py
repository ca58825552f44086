"""`casslab calibrate SPEC`: one cell of a spec as an A/A design, and the lab's noise
floor from it (casslab.experiment.calibration, casslab.analysis.noisefloor)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from casslab.cli.common import err, errors_to_exit, out
from casslab.core.paths import default_cache, default_home

ROUNDS_SHOWN = (5, 10, 20)


@dataclass(frozen=True)
class NoiseRow:
    """One response's noise in an A/A campaign."""

    response: str
    trials: int
    within_cv_pct: float  # median over trials of the per-interval throughput's CV
    between_cv_pct: float  # sigma of one trial (from the per-round A/B log-ratios), in %
    drift: str  # casslab.analysis.drift's line
    detectable_pct: dict[int, float]  # rounds -> smallest detectable effect, until verdicts
    detectable_fixed_pct: dict[int, float]  # rounds -> the same with a fixed round count


def noise_rows(results: Path, responses: tuple[str, ...]) -> list[NoiseRow]:
    """The noise of each response in an A/A results directory."""
    from casslab.analysis.drift import drift
    from casslab.analysis.noisefloor import cv_of, paired_sigma, within_trial_cv
    from casslab.analysis.power import detectable_pct
    from casslab.analysis.responses import trial_values
    from casslab.experiment.factors.registry import COPY_FACTOR
    from casslab.store.records import Results

    store, res = Results.open(results)
    with store:
        kept = [t for t in res.kept_trials() if t.round is not None]
        per_second = res.per_second_throughput()
        rows = []
        for name in responses:
            values = trial_values(res, name, [t.trial_id for t in kept])
            by_round: dict[int, dict[str, float]] = {}
            for t in kept:
                by_round.setdefault(t.round or 0, {})[str(t.cell_params.get(COPY_FACTOR))] = \
                    values[t.trial_id]
            ratios = [math.log(r["B"] / r["A"]) for r in by_round.values()
                      if r.get("A", 0) > 0 and r.get("B", 0) > 0]
            sigma = paired_sigma(ratios)
            within = [within_trial_cv(per_second.get(t.trial_id, [])) for t in kept]
            within = [w for w in within if math.isfinite(w)]
            d = drift([float(t.seq) for t in kept], [t.cell for t in kept],
                      [values[t.trial_id] for t in kept])
            rows.append(NoiseRow(
                name, len(kept), 100 * statistics.median(within) if within else math.nan,
                100 * math.expm1(sigma) if math.isfinite(sigma) else math.nan, d.line(),
                {n: detectable_pct(cv_of(sigma), n, "sequential") for n in ROUNDS_SHOWN},
                {n: detectable_pct(cv_of(sigma), n, "interleaved") for n in ROUNDS_SHOWN}))
    return rows


def _pct(v: float) -> str:
    return "-" if not math.isfinite(v) else f"{v:.1f} %"


def calibrate(
    spec: Annotated[Path, typer.Argument(help="Experiment spec whose lab, workload and stop "
                                         "rule are calibrated (its factors are held at one "
                                         "level each).")],
    rounds: Annotated[int, typer.Option(min=2, max=1000, help="A/A rounds (each: one trial "
                                        "of copy A, one of copy B, ABBA order).")] = 10,
    cell: Annotated[str | None, typer.Option(help="The levels to hold, e.g. "
                                             "'nodes=3,network=wifi' (default: each "
                                             "factor's first).")] = None,
    results: Annotated[Path | None, typer.Option(help="Results directory (default "
                                                 "results/<name>-calibrate); an existing "
                                                 "one resumes.")] = None,
    lab_name: Annotated[str | None, typer.Option("--lab", help="Name of the lab it builds "
                                                 "(default exp-<digest>).")] = None,
) -> None:
    """Measure the lab's noise floor: one cell of a spec as an A/A design (interleaved
    copies); the results work as --pilot.

    SPEC's factors are held at one level each (--cell), copies A and B run in ABBA
    rounds; then per response the within-trial CV (per-second throughput), the
    between-trial CV (from the A/B differences within rounds), the drift across trials
    and the smallest effect a campaign could detect at 5, 10 and 20 rounds. The results
    directory works as `experiment validate/plan --pilot DIR`.

    Example: casslab calibrate examples/calibrate-1node.yaml --rounds 3
    """
    from casslab.experiment.calibration import aa_spec, parse_cell
    from casslab.experiment.runner import CampaignInterrupted, CampaignRunner, Event
    from casslab.experiment.spec import load_spec, parse_spec

    with errors_to_exit():
        base = load_spec(spec)
        text = aa_spec(base.text, rounds, parse_cell(cell) if cell else None)
        s = parse_spec(text, source=f"{spec} (A/A)", base_dir=spec.parent)
        target = results or Path("results") / s.name

        def on_event(e: Event) -> None:
            if e.kind in ("plan", "trial-end", "lab", "message"):
                err.print(e.message, highlight=False, markup=False, soft_wrap=True)

        try:
            outcome = CampaignRunner(s, target, home=default_home(), cache=default_cache(),
                                     lab_name=lab_name, on_event=on_event).run()
        except CampaignInterrupted as exc:
            err.print(f"[bold red]interrupted:[/] {exc}", highlight=False)
            raise typer.Exit(130) from None
        rows = noise_rows(target, s.responses)
    held = ", ".join(f"{f.name}={f.levels[0]}" for f in s.factors if f.kind != "copy")
    table = Table(title=f"noise floor of {spec} ({held or 'its one cell'}), {rounds} A/A "
                  "rounds")
    for col in ("response", "trials", "within-trial CV of ops/s", "between-trial CV",
                *(f"detectable, {n} rounds" for n in ROUNDS_SHOWN)):
        table.add_column(col, justify="left" if col == "response" else "right")
    for r in rows:
        table.add_row(r.response, str(r.trials), _pct(r.within_cv_pct), _pct(r.between_cv_pct),
                      *(f"+-{_pct(r.detectable_pct[n])} (+-{_pct(r.detectable_fixed_pct[n])})"
                        for n in ROUNDS_SHOWN))
    out.print(table)
    out.print("detectable: the smallest effect one A/B finding detects with 90 % power "
              "(casslab.analysis.power) by the anytime-valid 95 % interval (until: verdicts); "
              "in brackets with a fixed round count (paired t, 95 %)", highlight=False)
    for r in rows:
        out.print(f"{r.response}: {r.drift}", highlight=False, soft_wrap=True)
    (target / "calibration.json").write_text(json.dumps([asdict(r) for r in rows], indent=2))
    out.print(f"{outcome.done} trials run, {outcome.failed} failed; pilot for experiment "
              f"validate/plan: --pilot {target}", soft_wrap=True, highlight=False)
    if outcome.failed:
        raise typer.Exit(1)
