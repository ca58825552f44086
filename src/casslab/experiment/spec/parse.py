"""Reading a spec: YAML text in (with line numbers, casslab.core.specio), each section
parsed by its own module, the cross-checks and the size bound, a `CampaignSpec` out."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from casslab.core import specio
from casslab.core.specio import Doc, Path_, V
from casslab.experiment import scales
from casslab.experiment.factors import registry
from casslab.experiment.figures import DesignFactor, parse_figures
from casslab.experiment.reference import parse_reference
from casslab.experiment.spec.checks import (
    check_load_options,
    check_network,
    check_table_factors,
    cross_checks,
)
from casslab.experiment.spec.designblock import parse_design
from casslab.experiment.spec.factorblock import parse_factors
from casslab.experiment.spec.model import CampaignSpec, Factor, SpecError, WorkloadSpec
from casslab.experiment.spec.sections import (
    parse_lab,
    parse_search,
    parse_stop,
    parse_warmup,
    parse_workload,
)
from casslab.experiment.spec.size import check_size
from casslab.load.options import options_class
from casslab.store.responses import parse_response, valid_forms

TOP_KEYS = ("name", "description", "lab", "workload", "factors", "design", "stop", "search",
            "metrics", "analysis", "report", "reference")

METRICS_KEYS = ("interval_s", "cql")
ANALYSIS_KEYS = ("response", "responses", "bootstrap", "seed")


def _op_names(workload: WorkloadSpec, factors: list[Factor]) -> tuple[str, ...] | None:
    """Operation types the campaign's workloads can run; None when one of them (a user
    profile) names its own."""
    names = [workload.name] + [str(lv) for f in factors if f.name == registry.WORKLOAD
                               for lv in f.levels]
    ops: dict[str, None] = {}
    for n in names:
        known = options_class(n).op_names
        if known is None:
            return None
        ops.update(dict.fromkeys(known))
    return tuple(ops)


def _responses(v: V, analysis: dict[str, Any], default: str,
               ops: tuple[str, ...] | None) -> tuple[str, ...]:
    """`analysis.responses` (a list) or `analysis.response` (one name), each a valid
    response name whose operation type the workloads run."""
    if "response" in analysis and "responses" in analysis:
        raise v.doc.error(("analysis", "responses"), "give `responses` (a list) or "
                          "`response` (one name), not both")
    if "responses" in analysis:
        raw, path = analysis["responses"], ("analysis", "responses")
        if not isinstance(raw, list) or not raw:
            raise v.doc.error(path, f"{raw!r} must be a non-empty list of response names, "
                              "e.g. [read.mean_ms, node_cpu_pct]")
        paths: list[Path_] = [(*path, i) for i in range(len(raw))]
    else:
        raw, paths = [analysis.get("response", default)], [("analysis", "response")]
    out: list[str] = []
    for name, where in zip(raw, paths, strict=True):
        if not isinstance(name, str):
            raise v.doc.error(where, f"{name!r} is not a response name (valid: "
                              f"{valid_forms()})")
        try:
            r = parse_response(name)
        except ValueError as exc:
            raise v.doc.error(where, str(exc)) from None
        if r.kind == "summary" and r.op != "ALL" and ops is not None and r.op not in ops:
            raise v.doc.error(where, f"{name!r}: the workloads run no {r.op!r} operations "
                              f"(valid: all, {', '.join(ops)})")
        if name in out:
            raise v.doc.error(where, f"{name!r} is listed twice")
        out.append(name)
    return tuple(out)


# ---- YAML with line numbers: casslab.core.specio ------------------------------------------


def _doc(text: str, source: str) -> Doc:
    return Doc(text, source, error=SpecError,
                empty="the spec is empty (it needs at least `workload:`)")


# ---- the spec -----------------------------------------------------------------------------


def load_spec(path: Path, *, allow_large: bool = False, scale: str | None = None
              ) -> CampaignSpec:
    """Read and validate a spec file; raises SpecError (file:line: field: problem).

    allow_large: accept a campaign above MAX_TRIALS trials or MAX_WALL_S of wall time.
    scale: one of the spec's `scales:` or `smoke` (casslab.experiment.scales); None: as
    written.
    """
    text = specio.read_text(path, "spec", SpecError)
    return parse_spec(text, source=str(path), base_dir=path.parent, allow_large=allow_large,
                      scale=scale)


def scale_names(path: Path) -> list[str]:
    """The sizes a spec file offers (its `scales:` and `smoke`)."""
    return scales.names(_doc(specio.read_text(path, "spec", SpecError), str(path)))


def parse_spec(text: str, *, source: str = "spec", base_dir: Path | None = None,
               allow_large: bool = False, scale: str | None = None) -> CampaignSpec:
    """Validate spec text; raises SpecError naming the field, its line and what is valid."""
    doc = _doc(text, source)
    scales.apply(doc, scale)
    v = V(doc)
    top = v.mapping(doc.root, (), TOP_KEYS)
    name = v.string(top.get("name", Path(source).stem if source != "spec" else "campaign"),
                    ("name",))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise doc.error(("name",), f"{name!r}: use letters, digits, '-', '_' or '.' (1-64)")
    if "workload" not in top:
        raise doc.error(("workload",), "is required (e.g. `workload: {name: ycsb-a}`)")
    lab = parse_lab(v, top.get("lab"), base_dir)
    workload = parse_workload(v, top["workload"], base_dir)
    search = parse_search(v, top.get("search"))
    factors = parse_factors(v, top.get("factors"), lab, search is not None, base_dir)
    stop = parse_stop(v, top.get("stop"), ("stop",), staged="stages" in workload.options)
    warmup = parse_warmup(v, top["workload"].get("warmup") if isinstance(top["workload"], dict)
                     else None, stop)
    workload = replace(workload, warmup=warmup)
    metrics = v.mapping(top.get("metrics"), ("metrics",), METRICS_KEYS)
    interval = v.number(metrics.get("interval_s", 1.0), ("metrics", "interval_s"), 0.1, 60.0)
    cql = v.boolean(metrics.get("cql", True), ("metrics", "cql"))
    analysis = v.mapping(top.get("analysis"), ("analysis",), ANALYSIS_KEYS)
    default_response = "runtime_s" if stop.ops and not stop.duration_s else "ops_s"
    responses = _responses(v, analysis, default_response, _op_names(workload, factors))
    boot = v.integer(analysis.get("bootstrap", 2000), ("analysis", "bootstrap"), 100, 100_000)
    cross_checks(v, lab, factors, search)
    check_table_factors(v, workload, factors)
    check_load_options(v, workload, factors)
    registry.check_scale_groups(v, lab.network, [f.name for f in factors],
                                [f.levels for f in factors])
    check_network(v, lab, workload, factors)
    design_factors = [DesignFactor(f.name, f.levels, f.labels) for f in factors]
    figures = parse_figures(v, top.get("report"), design_factors, responses)
    reference = parse_reference(v, top.get("reference"), design_factors, responses,
                                strict=scale is None)
    design = parse_design(v, top.get("design"), reference)
    if design.keep_labs and lab.backend == "hosts":
        raise v.doc.error(("design", "labs"), f"{design.labs} pauses local nodes; with "
                          "backend hosts the inventory's nodes stay as they are (valid "
                          "there: rebuild)")
    aseed = v.integer(analysis.get("seed", design.seed), ("analysis", "seed"), 0)
    spec = CampaignSpec(name=name, description=str(top.get("description") or ""), lab=lab,
                        workload=workload, factors=tuple(factors), design=design, stop=stop,
                        search=search, metrics_interval_s=interval, metrics_cql=cql,
                        responses=responses, bootstrap=boot, analysis_seed=aseed, text=text,
                        scale=scale, figures=figures, reference=reference)
    if not allow_large:
        check_size(doc, spec)
    return spec
