"""casslab-load as Kubernetes Jobs: the load phase (one pod), then the measured run as an
Indexed Job of K pods, pod I running `--client I/K` (its slice of the key range).

The argv is casslab.load.runner.build_command's, so a pod runs what a local trial runs.
K clients split the run as the local multi-client runner does: rate/K and ops/K each
(ops rounded down: the pods take one argv, so a remainder of ops is not run), and each a
seed of its own: the spec's seed followed by the pod's index (seed 7, pod 12 -> 712), as
distinct as the indexes are. Kubernetes expands `$(JOB_COMPLETION_INDEX)` in args from
the container's env, which takes the index from the pod's annotation (downward API).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from casslab.core.errors import UsageError
from casslab.k8s.names import Naming
from casslab.load.options import LoadOptions
from casslab.load.runner import LoadSpec, build_command

API_VERSION = "batch/v1"
INDEX_ENV = "JOB_COMPLETION_INDEX"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
BINARY = "casslab-load"


def run_job(workload: str, run: LoadOptions, clients: int, naming: Naming, *,
            image: str) -> dict[str, Any]:
    """The measured run: an Indexed Job of `clients` pods, all started at once."""
    opts, extra = split_run(run, clients)
    argv = build_command(LoadSpec(workload, opts, extra), [naming.service_host], BINARY)
    job = _job(f"{naming.cluster}-load", argv, naming, image=image)
    job["spec"].update({"completionMode": "Indexed", "completions": clients,
                        "parallelism": clients})
    if clients > 1:
        job["spec"]["template"]["spec"]["containers"][0]["env"] = [
            {"name": INDEX_ENV, "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.annotations['{INDEX_ANNOTATION}']"}}}]
    return job


def load_job(workload: str, load: LoadOptions, naming: Naming, *,
             image: str) -> dict[str, Any]:
    """The load phase (schema and data) before the run: one pod."""
    argv = build_command(LoadSpec(workload, load), [naming.service_host], BINARY)
    return _job(f"{naming.cluster}-prepare", argv, naming, image=image)


def split_run(run: LoadOptions, clients: int) -> tuple[LoadOptions, list[str]]:
    """One client's options and its extra args (`--client`, `--seed` by pod index).

    Raises UsageError when the run has fewer operations than clients.
    """
    if clients == 1:
        return run, []
    if run.ops is not None and run.ops < clients:
        raise UsageError(f"--clients {clients}: the run has only {run.ops} operations "
                         f"(stop.ops), fewer than one per client")
    opts = replace(run, ops=run.ops // clients if run.ops is not None else None,
                   rate_ops_s=run.rate_ops_s / clients if run.rate_ops_s else None,
                   seed=None)
    index = f"$({INDEX_ENV})"
    extra = ["--client", f"{index}/{clients}"]
    if run.seed is not None:
        extra += ["--seed", f"{run.seed}{index}"]
    return opts, extra


def _job(name: str, argv: list[str], naming: Naming, *, image: str) -> dict[str, Any]:
    labels = naming.labels("client")
    container = {
        "name": BINARY,
        "image": image,
        "command": argv[:1],
        "args": argv[1:],
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "Job",
        "metadata": {"name": name, "namespace": naming.namespace, "labels": labels},
        "spec": {
            # A failed client is a failed trial: rerun the trial, not one pod of it.
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "containers": [container]},
            },
        },
    }
