"""Which cell a render takes and what of the spec it carries."""

from __future__ import annotations

import pytest

from casslab.core.errors import UsageError
from casslab.experiment.loadphase import LOAD_PHASE_ERROR_RETRIES
from casslab.experiment.spec import parse_spec
from casslab.k8s import pick_cell

SPEC = """
name: pi-links
lab: {nodes: 1, profile: rpi2, set: {concurrent_writes: 8}}
workload: {name: ycsb-a, records: 1000, options: {in-flight: 2}}
factors:
  - {name: nodes, levels: [1, 3]}
  - {name: network, levels: [ethernet-100, wifi]}
  - {name: profile.memory_mib, levels: [1024, 2048]}
design: {seed: 7}
stop: {ops: 1000}
"""


def test_the_first_cell_of_the_plan_is_the_default() -> None:
    cell = pick_cell(parse_spec(SPEC))
    assert cell.key == "nodes=1,network=ethernet-100,profile.memory_mib=1024"
    assert cell.nodes == 1 and cell.profile.name == "rpi2"
    assert cell.overrides == {"concurrent_writes": 8}


def test_a_named_cell_takes_its_levels_over_the_lab() -> None:
    cell = pick_cell(parse_spec(SPEC), "nodes=3,network=wifi,profile.memory_mib=2048")
    assert cell.nodes == 3
    assert cell.profile.memory_mib == 2048 and cell.profile.cpu_cores == 0.6
    # wifi conditions every directed link of 3 nodes and the client: 3*2 + 3*2
    assert len(cell.links) == 12


def test_an_unknown_cell_is_named_with_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"--cell 'nodes=9' is not a cell of pi-links "
                       r"\(valid: nodes=1,network=ethernet-100,profile.memory_mib=1024, "):
        pick_cell(parse_spec(SPEC), "nodes=9")


def test_run_options_carry_the_stop_rule_and_seed_and_the_load_phase_its_own() -> None:
    cell = pick_cell(parse_spec(SPEC))
    assert (cell.run.phase, cell.run.ops, cell.run.seed, cell.run.in_flight) == (
        "run", 1000, 7, 2)
    assert cell.load is not None and cell.load.phase == "load" and cell.load.ops is None


def test_the_prepare_job_retries_failed_writes_as_the_local_load_phase_does() -> None:
    cell = pick_cell(parse_spec(SPEC))
    assert cell.load is not None and cell.load.error_retries == LOAD_PHASE_ERROR_RETRIES
    assert cell.run.error_retries is None  # a measured run's errors are data


def test_no_prepare_means_no_load_phase() -> None:
    text = SPEC.replace("records: 1000,", "records: 1000, prepare: false,")
    assert pick_cell(parse_spec(text)).load is None


def test_clients_default_to_one_and_below_one_is_refused() -> None:
    assert pick_cell(parse_spec(SPEC)).clients == 1
    assert pick_cell(parse_spec(SPEC), clients=4).clients == 4
    with pytest.raises(UsageError, match=r"--clients 0: must be at least 1"):
        pick_cell(parse_spec(SPEC), clients=0)


def test_a_clean_network_has_no_links() -> None:
    text = "name: plain\nworkload: {name: ycsb-a}\n"
    assert pick_cell(parse_spec(text)).links == {}


def test_an_option_naming_a_local_file_is_refused() -> None:
    text = ("name: tls\nworkload: {name: ycsb-a, options: {tls: true, tls-ca: /etc/ca.pem}}\n")
    with pytest.raises(UsageError, match=r"workload.options.tls-ca: a file on this machine"):
        pick_cell(parse_spec(text))


def test_a_load_phase_option_naming_a_local_file_is_refused() -> None:
    text = ("name: tls\nworkload: {name: ycsb-a, load_options: {tls: true, "
            "tls-ca: /etc/ca.pem}}\n")
    with pytest.raises(UsageError, match=r"^workload.load_options.tls-ca: a file on this "
                       "machine"):
        pick_cell(parse_spec(text))
