"""Experiment specs: YAML in, a validated `CampaignSpec` out.

Every error names the field (as a path like `factors[1].levels[0]`), the line of
the spec it comes from and what would be valid. Lines come from yaml.compose's
node marks, so they are exact even in flow style.

One module per job (issue 29): `model` (the dataclasses), `parse` (the reader),
`factorblock` (the `factors:` block, read through the factor registry in
casslab.experiment.factors), `sections` (lab, workload, stop, search),
`designblock` (`design:`), `checks` (across sections, into casslab-load and
casslab.net), `size` (the bound on a campaign's size) and `schema` (JSON Schema). This
package re-exports their public names, so `from casslab.experiment.spec import ...`
stays the one way in.
"""

from casslab.experiment.factors.parsers import NETWORK_PARAMS, NETWORK_SCOPES
from casslab.experiment.factors.registry import (
    CONCURRENCY,
    COPY_FACTOR,
    FACTOR_DOC,
    SEARCHABLE,
    factor_kind,
)
from casslab.experiment.levels import is_relative, relative_fraction
from casslab.experiment.spec.checks import MAX_OPTION_CELLS
from casslab.experiment.spec.designblock import (
    DESIGN_KEYS,
    GUARD_KEYS,
    LABS,
    MAX_DESIGN_TRIALS,
    MAX_GUARD_RERUNS,
    ORDERS,
    RESETS,
    TRIALS_RANGE_KEYS,
    UNTILS,
)
from casslab.experiment.spec.factorblock import FACTOR_KEYS
from casslab.experiment.spec.model import (
    DEFAULT_MAX_RESTARTS,
    CampaignSpec,
    DesignSpec,
    Factor,
    Guard,
    LabSpec,
    SearchSpec,
    SpecError,
    SteadyWarmup,
    StopRule,
    WorkloadSpec,
)
from casslab.experiment.spec.parse import (
    ANALYSIS_KEYS,
    METRICS_KEYS,
    TOP_KEYS,
    load_spec,
    parse_spec,
    scale_names,
)
from casslab.experiment.spec.schema import json_schema
from casslab.experiment.spec.sections import (
    BACKENDS,
    DEFAULT_STEADY_MAX_S,
    LAB_KEYS,
    MAX_OPS,
    MAX_TRIAL_S,
    SEARCH_KEYS,
    STOP_KEYS,
    STOP_WHEN_KEYS,
    WARMUP_KEYS,
    WARMUP_MODES,
    WORKLOAD_KEYS,
    YCSB_KEYS,
)
from casslab.experiment.spec.size import MAX_TRIALS, MAX_WALL_S, CampaignSize, estimate_size

__all__ = [
    "ANALYSIS_KEYS", "BACKENDS", "CONCURRENCY", "COPY_FACTOR", "DEFAULT_MAX_RESTARTS",
    "DEFAULT_STEADY_MAX_S", "DESIGN_KEYS", "FACTOR_DOC", "FACTOR_KEYS", "GUARD_KEYS", "LABS",
    "LAB_KEYS", "MAX_DESIGN_TRIALS", "MAX_GUARD_RERUNS", "MAX_OPS", "MAX_OPTION_CELLS",
    "MAX_TRIALS", "MAX_TRIAL_S", "MAX_WALL_S", "METRICS_KEYS", "NETWORK_PARAMS",
    "NETWORK_SCOPES", "ORDERS", "RESETS", "SEARCHABLE", "SEARCH_KEYS", "STOP_KEYS",
    "STOP_WHEN_KEYS", "TOP_KEYS", "TRIALS_RANGE_KEYS", "UNTILS", "WARMUP_KEYS",
    "WARMUP_MODES", "WORKLOAD_KEYS", "YCSB_KEYS", "CampaignSize", "CampaignSpec",
    "DesignSpec", "Factor", "Guard", "LabSpec", "SearchSpec", "SpecError", "SteadyWarmup",
    "StopRule", "WorkloadSpec", "estimate_size", "factor_kind", "is_relative", "json_schema",
    "load_spec", "parse_spec", "relative_fraction", "scale_names",
]
