"""The spec format as JSON Schema (`casslab schema experiment`), from the same bounds
and names the reader checks against."""

from __future__ import annotations

from casslab.core import specio
from casslab.experiment.factors.parsers import NETWORK_PARAMS, NETWORK_SCOPES
from casslab.experiment.factors.registry import FACTOR_DOC, SEARCHABLE
from casslab.experiment.figures import figures_schema
from casslab.experiment.reference import reference_schema
from casslab.experiment.spec.designblock import (
    LABS,
    MAX_DESIGN_TRIALS,
    MAX_GUARD_RERUNS,
    ORDERS,
    RESETS,
    TRIALS_RANGE_KEYS,
    UNTILS,
)
from casslab.experiment.spec.sections import BACKENDS, MAX_OPS, MAX_TRIAL_S, WARMUP_MODES
from casslab.hardware import BUILTIN_PROFILES
from casslab.lab.state import MAX_NODES, RUNTIME_NAMES
from casslab.load.multi import MAX_CLIENTS
from casslab.load.runner import WORKLOADS
from casslab.store.responses import valid_forms

# ---- JSON Schema (casslab schema experiment) ----------------------------------------------


def json_schema() -> specio.JsonSchema:
    """The spec format as JSON Schema for editors; `parse_spec` stays the authority (it
    also checks what a schema cannot say: cross-field rules, files, factor levels)."""
    obj, num, integer, enum = (specio.schema_object, specio.schema_number,
                               specio.schema_integer, specio.schema_enum)
    params = {k: num(lo, hi, description=k) for k, (lo, hi) in NETWORK_PARAMS.items()}
    network = {"oneOf": [{"type": "string", "description": "a link profile name or none"},
                         obj({**params, "profile": {"type": "string"},
                              "groups": {"type": "object", "description": "group -> link "
                                         "-> base delay_ms or fields (network.scale.GROUP)"},
                              **{s: obj(params) for s in NETWORK_SCOPES}})]}
    stop = {"ops": integer(1, MAX_OPS), "duration_s": num(0, MAX_TRIAL_S, lo_open=True),
            "timeout_s": num(1, MAX_TRIAL_S, description="wall-time guard of a trial")}
    response = {"type": "string", "description": valid_forms()}
    workload = obj({"name": {"type": "string", "description": ", ".join(WORKLOADS) +
                             ", or a cassandra-stress user profile .yaml"},
                    "records": integer(1), "prepare": {"type": "boolean"},
                    "clients": integer(1, MAX_CLIENTS),
                    "warmup": {"oneOf": [enum(WARMUP_MODES), obj(
                        {"until": enum(WARMUP_MODES),
                         "max_s": num(0, MAX_TRIAL_S, lo_open=True,
                                      description="latest start of the recorded window")},
                        required=("until",))],
                        "description": "until-steady: the recorded window starts once the "
                                       "per-interval series has settled"},
                    "options": {"type": "object", "description": "casslab-load options"},
                    "load_options": {"type": "object", "description": "casslab-load options "
                                     "of the load phase only, over options"},
                    "ycsb": obj({"file": {"type": "string", "description": "YCSB workload "
                                          "property file (e.g. workloads/workloada)"},
                                 "props": {"type": "object", "description": "YCSB "
                                           "properties over the file's"}})})
    return specio.schema_document("casslab experiment spec", obj({
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
        "description": {"type": "string"},
        "lab": obj({"nodes": integer(1, MAX_NODES), "profile": enum(list(BUILTIN_PROFILES)),
                    "runtime": enum(list(RUNTIME_NAMES)),
                    "node_profiles": specio.schema_map(enum(list(BUILTIN_PROFILES)),
                                                       "node name (node6) -> profile"),
                    "network": network, "set": {"type": "object",
                                                "description": "cassandra.yaml overrides"},
                    "timeout_s": num(10, 3600),
                    "max_restarts": integer(0, 100),
                    "backend": enum(list(BACKENDS)),
                    "inventory": {"type": "string",
                                  "description": "Ansible inventory (backend hosts)"}}),
        "workload": {"oneOf": [{"type": "string"}, workload]},
        "factors": {"type": "array", "items": obj(
            {"name": {"type": "string", "description": FACTOR_DOC},
             "levels": {"type": "array", "minItems": 1}, "label": {"type": "string"},
             "labels": {"type": ["array", "object"],
                        "description": "short label per level (list in level order, "
                                       "or level -> label)"}},
            required=("name", "levels"))},
        "design": obj({"trials": {"oneOf": [
                           integer(1, MAX_DESIGN_TRIALS),
                           obj({"min": integer(2, MAX_DESIGN_TRIALS),
                                "max": integer(2, MAX_DESIGN_TRIALS)},
                               required=TRIALS_RANGE_KEYS)],
                           "description": "kept trials per cell, or {min, max} rounds "
                                          "with until: verdicts"},
                       "warmup_trials": integer(0, 1000),
                       "lab_warmup_trials": integer(0, 100),
                       "warmup_rounds": {**integer(0, 10),
                                         "description": "order: interleaved: whole rounds "
                                         "of warm-ups (every cell once) before round 1"},
                       "randomize": {"type": "boolean",
                                     "description": "older spelling of order: random"},
                       "order": enum(ORDERS, "blocked: cells in factor order, grouped by "
                                     "lab; random: shuffled blocks and trials; "
                                     "interleaved: rounds of one trial per cell, "
                                     "counterbalanced (Williams)"),
                       "until": enum(UNTILS, "verdicts: add rounds until every finding "
                                     "is decisive (needs order: interleaved)"),
                       "budget": {"type": ["string", "number"],
                                  "description": "wall time after which no new round "
                                                 "starts, e.g. 5m (until: verdicts)"},
                       "detect": {"type": ["string", "number"],
                                  "description": "until: verdicts: the margin, declared "
                                                 "before the run, of a 'smaller than this "
                                                 "lab can detect' verdict of a ratio (its "
                                                 "whole interval within +- this), e.g. 10% "
                                                 "or 0.1"},
                       "noise_cv": {"type": ["string", "number"],
                                    "description": "a trial's coefficient of variation, "
                                                   "e.g. 0.05 or 5% (for power)"},
                       "seed": integer(0),
                       "labs": enum(LABS, "rebuild: a change of lab factor rebuilds the "
                                    "lab; keep: each lab is built once, paused while "
                                    "another runs, resumed (data recreated) when its "
                                    "cells come again; keep-data: as keep, the data kept "
                                    "when the schema is the one it was paused with; "
                                    "per-round (interleaved): a fresh lab for every round"),
                       "reset": enum(RESETS),
                       "guard": obj({"max_outside_cpu_pct": num(0, 100, lo_open=True),
                                     "reruns": integer(0, MAX_GUARD_RERUNS)},
                                    required=("max_outside_cpu_pct",))}),
        "stop": obj(stop),
        "search": obj({"vary": enum(SEARCHABLE), "start": num(0, lo_open=True),
                       "multiply": num(1, lo_open=True), "add": num(0, lo_open=True),
                       "max_steps": integer(2, 100),
                       "stop_when": obj({"throughput_drop_pct": num(0, 100),
                                         "p99_ms": num(0, lo_open=True)}),
                       "trials": integer(1, 100), "ops": stop["ops"],
                       "duration_s": stop["duration_s"]}, required=("vary",)),
        "metrics": obj({"interval_s": num(0.1, 60), "cql": {"type": "boolean"}}),
        "analysis": obj({"response": response, "responses": {
                             "type": "array", "minItems": 1, "items": response},
                         "bootstrap": integer(100, 100_000),
                         "seed": integer(0)}),
        "scales": specio.schema_map(specio.schema_map(
            {}, "dotted spec path (factors by name, e.g. factors.nodes.levels) -> value"),
            "named sizes of this spec, e.g. paper (`--scale NAME`; `smoke` is built in)"),
        "report": figures_schema(),
        "reference": reference_schema(),
    }, required=("workload",)))
