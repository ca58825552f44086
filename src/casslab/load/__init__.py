"""Driving casslab-load, the Rust load generator, from Python."""

from casslab.load.runner import LoadResult, LoadSpec, find_binary, run_load
from casslab.load.summary import OpSummary, Percentiles, RunSummary

__all__ = ["LoadResult", "LoadSpec", "OpSummary", "Percentiles", "RunSummary", "find_binary",
           "run_load"]
