"""Driving casslab-load, the Rust load generator, from Python."""

from typing import TYPE_CHECKING

from casslab.core.lazy import exports

if TYPE_CHECKING:
    from casslab.load.runner import LoadResult, LoadSpec, find_binary, run_load
    from casslab.load.summary import OpSummary, Percentiles, RunSummary

__all__ = ["LoadResult", "LoadSpec", "OpSummary", "Percentiles", "RunSummary", "find_binary",
           "run_load"]
__getattr__, __dir__ = exports(__name__, {
    **dict.fromkeys(("LoadResult", "LoadSpec", "find_binary", "run_load"),
                    "casslab.load.runner"),
    **dict.fromkeys(("OpSummary", "Percentiles", "RunSummary"), "casslab.load.summary")})
