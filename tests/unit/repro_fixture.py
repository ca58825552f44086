"""A seed 002 campaign database without a lab: the real spec (its reference block), every
cell of its design, round trips made of the configured delays plus a little noise."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from casslab.analysis.delaymodel import model_rtt_ms
from casslab.experiment.spec import load_spec
from casslab.metrics.samples import TrialMetrics
from casslab.store.db import Store

ROOT = Path(__file__).resolve().parents[2]
SPEC_002 = ROOT / "examples" / "002-edge" / "3-endpoint-percent.yaml"
SPEC_002_EDGE = ROOT / "examples" / "002-edge" / "4-edge-percent.yaml"


def _op(mean_ms: float) -> dict[str, object]:
    us = mean_ms * 1000
    lat = {"mean_us": us, "p50_us": us, "p95_us": 1.2 * us, "p99_us": 1.3 * us,
           "p999_us": 1.4 * us, "max_us": 1.5 * us, "min_us": 0.8 * us}
    return {"ops": 100, "ops_s": 1000 / mean_ms, "errors": 0, "latency": lat, "service": lat}


def fabricate_002(directory: Path, *, spec: Path = SPEC_002, trials: int = 3,
                  rounds: bool = False) -> None:
    """The endpoint sweep: RTT = 2 x 10 ms x (1 + pct/100) + 15 ms per CL step, reads
    1 ms slower, sd 0.2 ms; so every "raises the RTT" finding holds. Another sweep
    (`spec`: 4-edge-percent.yaml): the delay-only model's RTT, reads 1 ms slower.
    `rounds`: the trials get the rounds of the spec's interleaved design (a cell's t-th
    trial in round t)."""
    text = spec.read_text()
    parsed = yaml.safe_load(text)
    factors = parsed["factors"]
    rng = random.Random(2)
    store = Store(directory)
    cid, _ = store.open_campaign(name=parsed["name"], digest="fixture", spec_yaml=text,
                                 response=", ".join(parsed["analysis"]["responses"]),
                                 factors=factors)
    cells: list[dict[str, object]] = [{}]
    for f in factors:
        cells = [{**c, f["name"]: lv} for c in cells for lv in f["levels"]]
    plan, seq = [], 0
    for ci, params in enumerate(cells):
        key = ",".join(f"{k}={v}" for k, v in params.items())
        for t in range(trials):
            seq += 1
            plan.append((seq, ci, key, params, t + 1, False, "none"))
    status = store.ensure_plan(cid, plan)
    if rounds:
        store.set_rounds(cid, {s: no for s, _ci, _key, _p, no, _w, _r in plan})
    network, nodes = parsed["lab"]["network"], parsed["lab"]["nodes"]
    for s, _ci, _key, params, _no, _w, _r in plan:
        if "network.scale.endpoint" in params:
            pct = float(params["network.scale.endpoint"])  # type: ignore[arg-type]
            steps = ("ONE", "TWO", "THREE").index(str(params["cl"]))
            write = 20 * (1 + pct / 100) + 15 * steps + rng.gauss(0, 0.2)
        else:  # another sweep: the configured delays alone, plus the noise
            write = model_rtt_ms(network, params, nodes, str(params["cl"])) + rng.gauss(0, 0.2)
        summary = {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": 5.0,
                   "ops": 200, "ops_s": 40.0, "errors": 0,
                   "by_op": {"update": _op(write), "read": _op(write + 1)},
                   "all": _op(write + 0.5)}
        store.commit_trial(status[s][0], summary=summary, intervals=[],
                           metrics=TrialMetrics(), command=["casslab-load"])
    store.close()


def fabricate(directory: Path, spec_path: Path, runtime_s: Callable[[dict[str, Any]], float],
              *, scale: str | None = None, trials: int = 3, seed: int = 0) -> None:
    """Any spec's campaign database without a lab, as the runner stores it (the spec's
    text, its digest at `scale`, the scaled factors): every cell, `trials` kept trials
    each, run time runtime_s(params) x lognormal noise (2 %), and a mean latency of run
    time / operations (one request in flight). An interleaved design's trials get their
    rounds (a cell's t-th trial in round t)."""
    spec = load_spec(spec_path, scale=scale)
    factors = [{"name": f.name, "kind": f.kind, "label": f.label, "levels": list(f.levels)}
               for f in spec.factors]
    rng = random.Random(seed)
    store = Store(directory)
    cid, _ = store.open_campaign(name=spec.name, digest=spec.digest, spec_yaml=spec.text,
                                 response=", ".join(spec.responses), factors=factors)
    cells: list[dict[str, Any]] = [{}]
    for f in factors:
        cells = [{**c, f["name"]: lv} for c in cells for lv in f["levels"]]
    plan = [(ci * trials + t + 1, ci, ",".join(f"{k}={v}" for k, v in params.items()),
             params, t + 1, False, "none") for ci, params in enumerate(cells)
            for t in range(trials)]
    status = store.ensure_plan(cid, plan)
    if spec.design.interleaved:
        store.set_rounds(cid, {s: no for s, _ci, _key, _p, no, _w, _r in plan})
    for s, _ci, _key, params, _no, _w, _r in plan:
        elapsed = runtime_s(params) * math.exp(rng.gauss(0, 0.02))
        summary = {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": elapsed,
                   "ops": 1000, "ops_s": 1000 / elapsed, "errors": 0,
                   "by_op": {"read": _op(elapsed)}, "all": _op(elapsed)}
        store.commit_trial(status[s][0], summary=summary, intervals=[],
                           metrics=TrialMetrics(), command=["casslab-load"])
    store.close()
