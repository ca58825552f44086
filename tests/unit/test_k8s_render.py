"""`render` + `write` of example specs against golden files.

After a deliberate change of the manifests, regenerate the golden files and review the
diff:  CASSLAB_UPDATE_GOLDEN=1 pytest tests/unit/test_k8s_render.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from casslab.core.errors import UsageError
from casslab.experiment.spec import load_spec, parse_spec
from casslab.k8s import RenderOptions, render, write

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "k8s"
UPDATE = os.environ.get("CASSLAB_UPDATE_GOLDEN") == "1"

CASES = {
    # seed 000's wired Pis, first cell: one rpi2 node on 100 Mbit/s Ethernet
    "rpi-links-first": ("examples/000-rpi-iot/links.yaml", RenderOptions()),
    # the same study's Wi-Fi cell with 2 nodes and 2 load clients
    "rpi-links-wifi-2clients": ("examples/000-rpi-iot/links.yaml", RenderOptions(
        cell="nodes=2,network=wifi,workload=ycsb-a", clients=2)),
    # seed 002's edge: a delay per node pair and to the client
    "edge-steps-first": ("examples/002-edge/2-edge-steps.yaml", RenderOptions()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rendered_files_match_the_golden_files(case: str, tmp_path: Path) -> None:
    spec_path, options = CASES[case]
    written = write(render(load_spec(ROOT / spec_path), options), tmp_path)
    golden = GOLDEN / case
    if UPDATE:
        golden.mkdir(parents=True, exist_ok=True)
        for old in golden.glob("*.yaml"):
            old.unlink()
        for path in written:
            (golden / path.name).write_text(path.read_text())
    assert sorted(p.name for p in written) == sorted(p.name for p in golden.glob("*.yaml"))
    for path in written:
        assert path.read_text() == (golden / path.name).read_text(), (
            f"{case}/{path.name} differs from its golden file (CASSLAB_UPDATE_GOLDEN=1 "
            "regenerates them)")


def test_every_file_is_a_yaml_stream_of_objects(tmp_path: Path) -> None:
    spec_path, options = CASES["edge-steps-first"]
    for path in write(render(load_spec(ROOT / spec_path), options), tmp_path):
        docs = list(yaml.safe_load_all(path.read_text()))
        assert docs and all({"apiVersion", "kind", "metadata"} <= set(d) for d in docs)


def test_a_namespace_kubernetes_refuses_is_named() -> None:
    spec = parse_spec("name: t\nworkload: {name: ycsb-a}\n")
    with pytest.raises(UsageError, match=r"^--namespace 'My_NS': not a Kubernetes namespace"):
        render(spec, RenderOptions(namespace="My_NS"))


def test_the_cluster_is_the_campaign_name_as_a_dns_label() -> None:
    m = render(parse_spec("name: Edge_Study.2\nworkload: {name: ycsb-a}\n"))
    assert m.datacenter["spec"]["clusterName"] == "edge-study-2"
    assert m.run["metadata"]["name"] == "edge-study-2-load"
