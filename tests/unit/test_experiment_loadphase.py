"""The options of a cell's load phase: the run's options without the run-only ones, the
spec's workload.load_options over them, and the load phase's own retries."""

from __future__ import annotations

from casslab.experiment.loadphase import LOAD_PHASE_ERROR_RETRIES, load_phase_options
from casslab.experiment.spec import CampaignSpec, parse_spec


def spec(workload: str, factors: str = "") -> CampaignSpec:
    return parse_spec(f"workload: {workload}\n" + (f"factors:\n{factors}" if factors else ""))


def test_load_phase_takes_workload_load_options_over_the_run_options() -> None:
    s = spec("{name: ycsb-a, records: 500, options: {in-flight: 1},\n"
             "           load_options: {in-flight: 16}}",
             "  - {name: network, levels: [ethernet-100]}\n")
    cell = s.cell({"network": "ethernet-100"})
    assert cell.load_options().in_flight == 1  # the measured run keeps its one request
    load = load_phase_options(s, cell)
    assert (load.in_flight, load.phase, load.records) == (16, "load", 500)
    assert load.error_retries == LOAD_PHASE_ERROR_RETRIES


def test_load_phase_without_load_options_keeps_the_run_concurrency() -> None:
    s = spec("{name: ycsb-a, options: {in-flight: 2, rate: 50}}")
    load = load_phase_options(s, s.cell({}))
    assert (load.in_flight, load.rate_ops_s) == (2, None)


def test_a_spec_that_sets_its_own_retries_keeps_them_in_the_load_phase() -> None:
    s = spec("{name: ycsb-a, options: {error-retries: 3}}")
    assert load_phase_options(s, s.cell({})).error_retries == 3
