"""casslab-load as Jobs: the load phase, and the run as an Indexed Job of K clients."""

from __future__ import annotations

import pytest

from casslab.core.errors import UsageError
from casslab.k8s.job import load_job, run_job, split_run
from casslab.k8s.names import Naming
from casslab.load.options import LoadOptions, from_mapping

NAMING = Naming(cluster="lab", namespace="ns")


def run_options(**extra: object) -> LoadOptions:
    return from_mapping("ycsb-a", {"phase": "run", "ops": 1000, "seed": 7, "records": 100,
                                   **extra})


def test_k_clients_are_an_indexed_job_each_with_its_slice_and_seed() -> None:
    job = run_job("ycsb-a", run_options(), 4, NAMING, image="reg/load:1")
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == (
        "Indexed", 4, 4)
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "reg/load:1" and container["command"] == ["casslab-load"]
    args = container["args"]
    assert args[:3] == ["ycsb", "--workload", "a"]
    assert args[args.index("--hosts") + 1] == "lab-dc1-service:9042"
    assert args[args.index("--client") + 1] == "$(JOB_COMPLETION_INDEX)/4"
    assert args[args.index("--seed") + 1] == "7$(JOB_COMPLETION_INDEX)"
    assert args.count("--seed") == 1
    assert args[args.index("--ops") + 1] == "250"
    assert container["env"][0]["name"] == "JOB_COMPLETION_INDEX"
    assert pod["restartPolicy"] == "Never" and spec["backoffLimit"] == 0


def test_one_client_runs_the_argv_of_a_local_trial() -> None:
    job = run_job("ycsb-a", run_options(), 1, NAMING, image="x")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert "--client" not in container["args"] and "env" not in container
    assert container["args"][container["args"].index("--seed") + 1] == "7"


def test_the_rate_is_split_and_ops_rounded_down() -> None:
    opts, extra = split_run(run_options(rate=900.0), 3)
    assert opts.rate_ops_s == 300.0 and opts.ops == 333 and opts.seed is None
    assert extra == ["--client", "$(JOB_COMPLETION_INDEX)/3", "--seed",
                     "7$(JOB_COMPLETION_INDEX)"]


def test_fewer_ops_than_clients_is_refused() -> None:
    with pytest.raises(UsageError, match=r"--clients 2000: the run has only 1000 operations"):
        split_run(run_options(), 2000)


def test_the_load_phase_is_one_plain_pod() -> None:
    load = from_mapping("ycsb-a", {"phase": "load", "records": 100})
    job = load_job("ycsb-a", load, NAMING, image="x")
    assert job["metadata"]["name"] == "lab-prepare"
    assert "completionMode" not in job["spec"]
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--phase") + 1] == "load"
