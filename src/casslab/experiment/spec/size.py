"""What a campaign costs before it is planned, and the bounds above which a spec is
refused unless allowed (`--allow-large`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from casslab.core.specio import Doc
from casslab.experiment.spec.model import CampaignSpec, StopRule

# A campaign above either bound is refused unless allowed (`--allow-large`): planning it
# materialises every trial, and its wall time is beyond any run this lab is meant for.
MAX_TRIALS = 20_000
MAX_WALL_S = 30 * 86_400.0


@dataclass(frozen=True)
class CampaignSize:
    """What a campaign costs before it is planned: trials and an upper bound of wall time
    (each trial's duration_s, or its timeout_s guard when it stops by ops)."""

    cells: int
    trials: int
    wall_s: float


def estimate_size(spec: CampaignSpec) -> CampaignSize:
    """Count cells and trials without planning them (plain arithmetic, no lists)."""
    cells = math.prod(len(f.levels) for f in spec.factors)
    d = spec.design  # warm-ups come again after each design.reset (experiment/design.py)
    trials = cells * (d.trials_max * (d.warmup_trials + 1) if d.reset != "none"
                      else d.trials_max + d.warmup_trials)
    trials += d.lab_warmup_trials * math.prod(len(f.levels) for f in spec.factors
                                              if f.kind == "lab")
    trials += d.warmup_rounds * cells
    wall = trials * _trial_bound_s(spec.stop)
    if spec.search is not None:
        steps = cells * spec.search.max_steps * spec.search.trials
        trials += steps
        wall += steps * _trial_bound_s(spec.search.stop)
    return CampaignSize(cells, trials, wall)


def _trial_bound_s(stop: StopRule) -> float:
    return stop.duration_s if stop.duration_s is not None else stop.timeout_s


def check_size(doc: Doc, spec: CampaignSpec) -> None:
    size = estimate_size(spec)
    if size.trials > MAX_TRIALS or size.wall_s > MAX_WALL_S:
        where = ("factors",) if spec.factors else ("design",)
        raise doc.error(where, f"the campaign is too large: {size.cells} cells, "
                        f"{size.trials} trials, up to {size.wall_s / 86_400:.1f} days (limits: "
                        f"{MAX_TRIALS} trials, {MAX_WALL_S / 86_400:g} days); use fewer "
                        "levels or trials, or pass --allow-large")
