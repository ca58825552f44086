"""The casslab-load options of a campaign cell: the spec's workload.options, then its factors.

One place for both the spec check (every level is checked when the spec is read) and the
runner (the options of a trial), so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from casslab.experiment.levels import is_relative
from casslab.load.options import LoadOptions, canonical, family_of, from_mapping

# Factors that set the casslab-load option of the same name (`in_flight` -> --in-flight).
OPTION_FACTORS = ("cl_read", "cl_write", "in_flight", "workers", "threads", "rate", "rf",
                  "records")


def factor_options(name: str, workload: str) -> tuple[str, ...]:
    """The casslab-load options factor `name` sets for `workload` (as flags); () if none."""
    if name == "cl":
        return ("cl-read", "cl-write")
    if name == "compaction":  # other workloads get it as ALTER TABLE, not an option
        return ("compaction",) if family_of(workload) == "iot" else ()
    if name == "records" and family_of(workload) == "iot":  # iot sizes with --devices
        return ()
    if name.startswith("option."):
        return (canonical(name[len("option."):]),)
    return (canonical(name),) if name in OPTION_FACTORS else ()


def cell_mapping(workload: str, records: int, options: Mapping[str, Any],
                 params: Mapping[str, Any]) -> dict[str, Any]:
    """{flag: value} of a cell: records, workload.options, then the factors' levels.

    Levels relative to a peak are left out (the search resolves them first).
    """
    opts: dict[str, Any] = {} if family_of(workload) == "iot" else {"records": records}
    opts |= {canonical(str(k)): v for k, v in options.items()}
    for name, value in params.items():
        if is_relative(value):
            continue
        for flag in factor_options(name, workload):
            opts[flag] = value
    return opts


def cell_options(workload: str, records: int, options: Mapping[str, Any],
                 params: Mapping[str, Any], where: str = "workload.options") -> LoadOptions:
    """The typed options of a cell; raises OptionError naming a bad one."""
    return from_mapping(workload, cell_mapping(workload, records, options, params), where)
