"""Seed 002 (Cassandra at the edge: endpoint and edge delays x consistency level): what
its doc needs beyond each spec's own findings, from the campaigns' reports.

- The findings that span two specs or two responses (casslab.analysis.across), decided
  by the one engine (casslab.analysis.findings.verdict_of), in one Bonferroni family:
  F2, per operation and consistency level, which sweep's slope is the steeper (Figs
  8-10: at CL 1 and 2 the endpoint delays weigh more, at CL 3 the edge delays), and F4,
  reads take longer than writes (Tables 1-6). Both are claims of direction (the paper
  gives no tolerance); the paper's own slopes and read/write ratio, computed from the
  specs' `reference.values` by the same fits, are printed beside them. When both sweeps
  ran in interleaved rounds the effects are per round, paired by round number, and
  anytime-valid when a sweep added rounds until its own findings were decisive (its
  number of rounds was chosen by the data, which a fixed-n test does not allow for;
  one the sequence leaves open has spent both sweeps' shared rounds, and says how many
  would decide it, as a campaign's own findings do); otherwise one fit per sweep over
  its pooled trials (casslab.analysis.across).
- The delay-only model (casslab.analysis.delaymodel) beside each of the paper's values
  and the lab's median, with what each leaves above the model.

A campaign is a sweep when its cells vary `network.scale.<group>` and `cl`; the sweep is
the group (endpoint, edge).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casslab.analysis.across import (
    RoundPoint,
    cell_ratio_effect,
    line_fit,
    round_log_ratios,
    round_ratio_effect,
    round_slope_difference_effect,
    round_slopes,
    slope_difference_effect,
)
from casslab.analysis.campaign import Analysis, level_label
from casslab.analysis.delaymodel import model_rtt_ms
from casslab.analysis.effects import PAIRED, Effect
from casslab.analysis.findings import (
    Verdict,
    bound_of,
    family_level,
    spent_verdict,
    verdict_of,
)
from casslab.analysis.power import detectable_log_effect
from casslab.analysis.sequential import tune_c
from casslab.experiment.factors.registry import CL, scale_factor, scaled_groups
from casslab.experiment.reference import Finding, RefValue
from casslab.experiment.scales import stored_root
from casslab.experiment.spec import load_spec
from casslab.report.html import Report, Until, until_verdicts

OPS = (("write", "update.mean_ms"), ("read", "read.mean_ms"))
# (consistency level, the steeper sweep, the paper's figure and wording)
F2 = (("ONE", "endpoint", "Fig. 8", "endpoint latency matters more than edge latency"),
      ("TWO", "endpoint", "Fig. 9", "the endpoint slope is still the steeper, edge "
       "'catching up'"),
      ("THREE", "edge", "Fig. 10", "edge latency matters more than endpoint latency"))
STEP = 10.0  # slopes per 10 % step, as the paper's tables step
# What an across finding that the sequence left open has spent (its label's words).
SWEEPS_SPENT = "both sweeps' rounds"


@dataclass(frozen=True)
class Sweep:
    """One campaign sweeping `network.scale.<group>` over consistency levels."""

    name: str  # the campaign (results folder)
    group: str  # endpoint, edge
    report: Report

    @property
    def factor(self) -> str:
        return scale_factor(self.group)

    def analysis(self, response: str) -> Analysis | None:
        return next((a for a in self.report.analyses if a.response == response), None)

    def lab_points(self, response: str, cl: str) -> list[tuple[float, float]]:
        """(step, value) per kept trial at consistency level `cl`."""
        a = self.analysis(response)
        return [(float(cs.params[self.factor]) / STEP, v) for cs in (a.cells if a else [])
                if level_label(cs.params.get(CL)) == cl for v in cs.values]

    def round_points(self, response: str, cl: str) -> list[RoundPoint]:
        """(round, step, value) per kept trial at `cl` that has a round."""
        a, rounds = self.analysis(response), self.report.rounds or {}
        return [(rounds[t], float(cs.params[self.factor]) / STEP, v)
                for cs in (a.cells if a else []) if level_label(cs.params.get(CL)) == cl
                for t, v in zip(cs.trial_ids, cs.values, strict=True) if t in rounds]

    def until(self) -> Until:
        """How its stored spec's rounds end (one read of the spec)."""
        return until_verdicts(self.report.spec_yaml, self.report.spec_digest)

    def paper_points(self, response: str, cl: str) -> list[tuple[float, float]]:
        return [(float(rv.at[self.factor]) / STEP, rv.value)
                for rv in self.report.reproduction.reference.values
                if rv.response == response and self.factor in rv.at
                and level_label(rv.at.get(CL)) == cl]


def sweeps(reports: Sequence[tuple[str, Report | None]]) -> dict[str, Sweep]:
    """group -> its sweep, among the campaigns that ran."""
    out: dict[str, Sweep] = {}
    for name, rep in reports:
        if rep is None or not rep.analyses or not rep.analyses[0].cells:
            continue
        params = rep.analyses[0].cells[0].params
        groups = scaled_groups(params)
        if len(groups) == 1 and CL in params:
            out[groups[0]] = Sweep(name, groups[0], rep)
    return out


@dataclass(frozen=True)
class Design:
    """How the across findings pair the two sweeps: by round (both interleaved), with
    the anytime-valid sequence (`c`) when either added rounds until decisive, tuned to
    the fewer of their planned rounds."""

    by_round: bool
    sequential: bool
    c: float | None
    planned: int | None


    def verdict(self, f: Finding, effect: Effect, p: float, m: int, family: str) -> Verdict:
        """A per-round effect's verdict, its bound the difference this lab detects at
        the planned rounds (the sequence) or at the rounds run (paired t). Inconclusive
        in the sequence: the rounds the two sweeps share are all it has (each sweep
        stops by its own findings, budget or maximum), so it says so and projects the
        rounds of both that would decide it (`spent_verdict`)."""
        z = bound_of(f, effect, planned_rounds=self.planned if self.sequential else None)
        v = verdict_of(f, effect, p, m, family, bound=z.value, bound_what=z.what)
        return spent_verdict(v, SWEEPS_SPENT if self.sequential else "")


def design_of(end: Sweep, edge: Sweep, alpha_each: float) -> Design:
    ends = (end.until(), edge.until())
    by_round = bool(end.report.rounds) and bool(edge.report.rounds)
    sequential = by_round and any(u.sequential for u in ends)
    planned = min((u.planned for u in ends if u.planned), default=None)
    c = tune_c(planned, alpha_each) if sequential and planned else None
    return Design(by_round, sequential, c, planned)


def _slope_verdict(end: Sweep, edge: Sweep, op: str, response: str, cl: str, steeper: str,
                   source: str, words: str, level: float, m: int, family: str,
                   design: Design) -> Verdict:
    n_cl = ("ONE", "TWO", "THREE").index(cl) + 1
    pa, pb = line_fit(end.paper_points(response, cl)), line_fit(edge.paper_points(response,
                                                                                   cl))
    f = Finding(f"CL {n_cl}, {op}: {words} (endpoint slope - edge slope, ms per 10 %)",
                response, "sweep", "edge", "endpoint",
                "higher" if steeper == "endpoint" else "lower", {"cl": (cl,)}, "ols",
                f"{source}; paper: endpoint {pa.slope:.3g}, edge {pb.slope:.3g}")
    if design.by_round:
        effect, p = round_slope_difference_effect(
            round_slopes(end.round_points(response, cl)),
            round_slopes(edge.round_points(response, cl)), level,
            sequential=design.sequential, c=design.c)
        return design.verdict(f, effect, p, m, family)
    a, b = line_fit(end.lab_points(response, cl)), line_fit(edge.lab_points(response, cl))
    effect, p, bound = slope_difference_effect(a, b, level)
    return verdict_of(f, effect, p, m, family, bound=bound)


def _cell_log_ratios(sweep: Sweep) -> list[float]:
    """One log(read / write) per cell of the sweep: the mean of its trials' logs."""
    reads, writes = sweep.analysis("read.mean_ms"), sweep.analysis("update.mean_ms")
    if reads is None or writes is None:
        return []
    by_key = {cs.key: cs for cs in writes.cells}
    out = []
    for cs in reads.cells:
        w = by_key.get(cs.key)
        if w is None or not cs.values or not w.values:
            continue
        pairs = [(r, x) for r, x in zip(cs.values, w.values, strict=False) if r > 0 and x > 0]
        if pairs:
            out.append(statistics.fmean(math.log(r / x) for r, x in pairs))
    return out


def _paper_read_write(values: Sequence[RefValue]) -> float:
    """The paper's geometric mean read / write over its points that give both."""
    def key(rv: RefValue) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((k, level_label(v)) for k, v in rv.at.items()))
    writes = {key(rv): rv.value for rv in values if rv.response == "update.mean_ms"}
    logs = [math.log(rv.value / writes[key(rv)]) for rv in values
            if rv.response == "read.mean_ms" and writes.get(key(rv), 0) > 0 and rv.value > 0]
    return math.exp(statistics.fmean(logs)) if logs else math.nan


def _round_read_write(sweep: Sweep) -> dict[int, float]:
    """round -> the mean log(read / write) over the sweep's trials of that round."""
    reads, writes = sweep.analysis("read.mean_ms"), sweep.analysis("update.mean_ms")
    rounds = sweep.report.rounds or {}
    if reads is None or writes is None:
        return {}
    write_of = {t: v for cs in writes.cells for t, v in zip(cs.trial_ids, cs.values,
                                                              strict=True)}
    return round_log_ratios([(rounds[t], v, write_of[t]) for cs in reads.cells
                             for t, v in zip(cs.trial_ids, cs.values, strict=True)
                             if t in rounds and t in write_of])


def _read_verdict(found: Mapping[str, Sweep], level: float, m: int,
                  family: str, design: Design) -> Verdict:
    paper = _paper_read_write([rv for s in found.values()
                               for rv in s.report.reproduction.reference.values])
    f = Finding("reads take slightly longer than writes (read / write, every cell of both "
                "sweeps)", "read.mean_ms", "operation", "write", "read", "higher", {},
                "ols", f"Tables 1-6; paper: read / write {paper:.3f} (geometric mean)")
    if design.by_round:
        a, b = (_round_read_write(s) for s in found.values())
        both = {r: (a[r] + b[r]) / 2 for r in sorted(set(a) & set(b))}
        effect, p = round_ratio_effect(both, level, sequential=design.sequential,
                                       c=design.c)
        return design.verdict(f, effect, p, m, family)
    logs = [x for s in found.values() for x in _cell_log_ratios(s)]
    effect, p = cell_ratio_effect(logs, level)
    bound = detectable_log_effect(PAIRED, effect.noise_sd, effect.n_low, effect.n_high,
                                  level)
    return verdict_of(f, effect, p, m, family, bound=bound)


def across_verdicts(reports: Sequence[tuple[str, Report | None]], alpha: float = 0.05
                    ) -> tuple[list[Verdict], str]:
    """(F2 and F4's verdicts, what could not be decided and why): empty when the two
    sweeps have not both run."""
    found = sweeps(reports)
    if "endpoint" not in found or "edge" not in found:
        return [], ("F2 and F4 need both sweeps (3-endpoint-percent, 4-edge-percent); ran: "
                    + (", ".join(s.name for s in found.values()) or "neither"))
    m = len(OPS) * len(F2) + 1
    level, family = family_level(alpha, m, "findings across the two sweeps")
    end, edge = found["endpoint"], found["edge"]
    design = design_of(end, edge, 1 - level)
    out = [_slope_verdict(end, edge, op, resp, cl, steeper, src, words, level, m, family,
                          design) for op, resp in OPS for cl, steeper, src, words in F2]
    out.append(_read_verdict({"endpoint": end, "edge": edge}, level, m, family, design))
    return out, ""


def _lab_network(spec_yaml: str, digest: str = "") -> tuple[Any, int]:
    lab = stored_root(spec_yaml, digest).get("lab", {})
    return lab.get("network"), int(lab.get("nodes", 1))


def _g(v: float) -> str:
    return "-" if math.isnan(v) else f"{v:.2f}"


def model_rows(name: str, spec: Path, rep: Report | None
               ) -> list[tuple[str, float, float, float]]:
    """(the row's Markdown, paper - model, lab - model, model) per published value that
    names a consistency level: the campaign's (its stored spec and the lab's median),
    else the spec file's (paper and model only: the campaign has not run)."""
    if rep is not None:
        network, nodes = _lab_network(rep.spec_yaml, rep.spec_digest)
        rows = [(r.ref, r.lab.median if r.lab.n else math.nan)
                for r in rep.reproduction.values]
    else:
        network, nodes = _lab_network(spec.read_text())
        rows = [(rv, math.nan) for rv in load_spec(spec).reference.values]
    out = []
    for ref, lab in rows:
        cl = ref.at.get("cl")
        if cl is None:
            continue
        model = model_rtt_ms(network, ref.at, nodes, str(cl))
        at = ", ".join(f"{k}={level_label(v)}" for k, v in ref.at.items())
        text = (f"| `{name}` | {ref.response} | {at} | {ref.value:g} | "
                f"{_g(lab) if rep else '(not run)'} | {_g(model)} | "
                f"{ref.value - model:+.2f} | "
                f"{'-' if math.isnan(lab) else f'{lab - model:+.2f}'} |")
        out.append((text, ref.value - model, lab - model, model))
    return out


def model_block(campaigns: Sequence[tuple[str, Path, Report | None]]) -> str:
    """The delay-only model beside the paper's values and the lab's medians (campaigns
    that ran), and the medians of what each leaves above the model."""
    rows = [r for name, spec, rep in campaigns for r in model_rows(name, spec, rep)]
    head = ("The delay-only model (casslab.analysis.delaymodel: the configured delays, no "
            "Cassandra) beside each of the paper's values and the lab's median of the "
            "cell's kept trials (ms). What the model does not explain is the excess: "
            "paper - model and lab - model.")
    if not rows:
        return head + "\n\n(no spec of the study gives the paper's values per consistency level)"
    within = sum(abs(r[3] / (r[3] + r[1]) - 1) <= 0.15 for r in rows if r[3] + r[1] > 0)
    paper_x = [r[1] for r in rows]
    lab_x = [r[2] for r in rows if not math.isnan(r[2])]
    summary = (f"The model alone is within 15 % of {within} of the {len(rows)} paper "
               f"values. Excess over the model, median [range]: paper "
               f"{statistics.median(paper_x):+.2f} [{min(paper_x):+.2f}, "
               f"{max(paper_x):+.2f}] ms"
               + (f"; lab {statistics.median(lab_x):+.2f} [{min(lab_x):+.2f}, "
                  f"{max(lab_x):+.2f}] ms over {len(lab_x)} values" if lab_x else
                  "; lab: no trials")
               + ". A description, not a test: the points share cells and trials.")
    table = ["| campaign | response | at | paper | lab median | model | paper - model | "
             "lab - model |", "|---|---|---|---:|---:|---:|---:|---:|"]
    return "\n".join([head, "", summary, "", *table, *(r[0] for r in rows)])
