"""Power before (and after) running: the smallest effect a design can detect, and
findings it can never decide. Pure: numbers in, numbers and warnings out.

Detectable effect: the smallest true effect (log-ratio, read in %) whose interval
excludes 0 with probability POWER (90 %: "can detect" means reliably; an A/A pair then
lies within +- that effect 80 % of the time at any one look), given the noise of one
observation on the
log scale (a trial's CV ~ its log sd for CVs of a few %):
- pooled (Welch t on logs, n1 and n2 trials):  (t_{1-a/2} + t_{power}) sd sqrt(1/n1 + 1/n2),
  df n1 + n2 - 2; rank (Hodges-Lehmann / Mann-Whitney) the same divided by
  sqrt(3 / pi) (the test's asymptotic relative efficiency, 0.955, under normality);
- paired (interleaved rounds, fixed n):  (t_{1-a/2} + t_{power}) sd_d / sqrt(n), df n - 1,
  where sd_d = sqrt(2) x the trial's log sd (two trials per log-ratio; a drift adds
  nothing because it hits both);
- sequential (rounds until decisive): the confidence sequence's half-width at n rounds
  (casslab.analysis.sequential) plus z_{power} sd_d / sqrt(n) (the estimate's own
  spread): the width of an anytime-valid interval is what the lab pays for stopping
  early.
Infinite when the interval cannot be finite at that n (too few trials or rounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.effects import PAIRED, POOLED, RANK, SEQUENTIAL, to_pct
from casslab.analysis.sequential import DEFAULT_ROUNDS, half_width_factor, tune_c

POWER = 0.90
DESIGNS = ("interleaved", "sequential", "pooled")


def detectable_log_effect(kind: str, sd: float, n_low: int, n_high: int, level: float = 0.95,
                          power: float = POWER, c: float = math.nan) -> float:
    """The detectable effect (log scale) of an interval of `kind` (effects.POOLED, RANK,
    PAIRED, SEQUENTIAL) with `sd` the noise of one observation on the log scale (one
    trial for pooled/rank; one per-round log-ratio for paired/sequential)."""
    if math.isnan(sd):
        return math.nan
    if kind in (POOLED, RANK):
        df = n_low + n_high - 2
        if n_low < 2 or n_high < 2 or df < 1:
            return math.inf
        d = (float(st.t.ppf(0.5 + level / 2, df)) + float(st.t.ppf(power, df))) * sd * \
            math.sqrt(1 / n_low + 1 / n_high)
        return d / math.sqrt(3 / math.pi) if kind == RANK else d
    n = min(n_low, n_high)
    if kind == PAIRED:
        if n < 2:
            return math.inf
        return (float(st.t.ppf(0.5 + level / 2, n - 1)) + float(st.t.ppf(power, n - 1))) * \
            sd / math.sqrt(n)
    if kind == SEQUENTIAL:
        cc = tune_c(DEFAULT_ROUNDS, 1 - level) if math.isnan(c) else c
        w = half_width_factor(n, 1 - level, cc)
        if math.isinf(w):
            return math.inf
        # E[Q_n] = (n - 1) sd^2: the half-width the sequence has at typical spread
        return w * math.sqrt(n - 1) * sd + float(st.norm.ppf(power)) * sd / math.sqrt(n)
    raise ValueError(f"no detectable effect for an interval of kind {kind!r}")


def log_sd(noise_cv: float) -> float:
    """A trial's sd on the log scale from its CV (lognormal: sqrt(log(1 + cv^2)))."""
    return math.sqrt(math.log1p(noise_cv ** 2))


def detectable_pct(noise_cv: float, trials: int, design: str = "interleaved", *,
                   alpha: float = 0.05, family: int = 1, power: float = POWER,
                   max_rounds: int | None = None) -> float:
    """The smallest change (in %, upward) a finding can detect with `trials` kept
    trials per cell (= rounds for interleaved designs), given a trial's CV `noise_cv`
    (a fraction: 0.05 for 5 %), at level 1 - alpha / family (Bonferroni over the
    campaign's findings). `design`: "pooled" (random or blocked order, Welch on logs),
    "interleaved" (paired within rounds, fixed number) or "sequential" (interleaved,
    until: verdicts; the sequence tuned for `max_rounds`, default `trials`)."""
    if design not in DESIGNS:
        raise ValueError(f"design {design!r} is not one of {', '.join(DESIGNS)}")
    level = 1 - alpha / max(family, 1)
    sd = log_sd(noise_cv)
    if design == "pooled":
        d = detectable_log_effect(POOLED, sd, trials, trials, level, power)
    elif design == "interleaved":
        d = detectable_log_effect(PAIRED, math.sqrt(2) * sd, trials, trials, level, power)
    else:
        c = tune_c(max_rounds or trials, 1 - level)
        d = detectable_log_effect(SEQUENTIAL, math.sqrt(2) * sd, trials, trials, level, power,
                                  c)
    return to_pct(d)


@dataclass(frozen=True)
class FindingPower:
    """What the plan can decide about one finding."""

    claim: str
    detectable_pct: float  # smallest detectable change, %
    looks_for_pct: float  # the size the finding looks for, % (NaN: a direction only)
    trials: int  # kept trials per side (rounds for interleaved designs)
    warning: str  # "" when the plan can decide it

    def line(self) -> str:
        what = (f"looks for {self.looks_for_pct:+.1f} %" if not math.isnan(self.looks_for_pct)
                else "looks for a direction")
        det = ("never (too few trials)" if math.isinf(self.detectable_pct) else
               f"+-{self.detectable_pct:.1f} %")
        return f"finding {self.claim!r}: detectable {det} with {self.trials} per side; {what}"


def finding_power(claim: str, looks_for_pct: float, noise_cv: float, trials: int,
                  design: str = "interleaved", *, alpha: float = 0.05, family: int = 1,
                  max_rounds: int | None = None) -> FindingPower:
    """One finding's detectable effect under the plan, and a warning when the plan can
    never decide it or cannot see the size it looks for."""
    d = detectable_pct(noise_cv, trials, design, alpha=alpha, family=family,
                       max_rounds=max_rounds)
    warning = ""
    if math.isinf(d):
        unit = "trials per side" if design == "pooled" else "rounds"
        level = 1 - alpha / max(family, 1)
        warning = (f"finding {claim!r}: {trials} {unit} can never give a finite "
                   f"{level:.3g} interval; it needs "
                   f"{_needed(noise_cv, design, alpha, family, max_rounds)} or more")
    elif not math.isnan(looks_for_pct) and d > abs(looks_for_pct):
        warning = (f"finding {claim!r}: the plan detects +-{d:.1f} % (noise CV "
                   f"{100 * noise_cv:.1f} %), more than the {abs(looks_for_pct):.1f} % the "
                   f"finding looks for")
    return FindingPower(claim, d, looks_for_pct, trials, warning)


def _needed(noise_cv: float, design: str, alpha: float, family: int,
            max_rounds: int | None) -> int:
    for n in range(2, 1000):
        if math.isfinite(detectable_pct(noise_cv, n, design, alpha=alpha, family=family,
                                        max_rounds=max_rounds or n)):
            return n
    return 1000
