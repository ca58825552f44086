"""The options of a cell's load phase, one rule for every place that loads a cell's data:
the local runner's load phase and the Kubernetes prepare Job alike."""

from __future__ import annotations

from dataclasses import replace

from casslab.experiment.factors.cell import Cell
from casslab.experiment.spec import CampaignSpec
from casslab.load.options import LoadOptions

# The load phase's re-issues of a write that failed on a busy cluster, unless the spec
# sets `error-retries`: a key lost to a timeout would void every later trial (the
# measured runs keep casslab-load's 0: their errors are data).
LOAD_PHASE_ERROR_RETRIES = 10


def load_phase_options(spec: CampaignSpec, cell: Cell) -> LoadOptions:
    """The casslab-load options of a cell's load phase: its run's options without those
    that shape only the measured run, then the spec's workload.load_options, and
    LOAD_PHASE_ERROR_RETRIES unless the spec gives its own."""
    opts = replace(cell.load_options().for_load_phase(spec.workload.load_options),
                   phase="load")
    if opts.error_retries is None:
        opts = replace(opts, error_retries=LOAD_PHASE_ERROR_RETRIES)
    return opts
