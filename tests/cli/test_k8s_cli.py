"""`casslab k8s render`: the real command writes valid manifests of the chosen cell and
refuses bad input in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

ROOT = Path(__file__).resolve().parents[2]
LINKS = str(ROOT / "examples" / "000-rpi-iot" / "links.yaml")


def test_render_writes_the_cells_manifests_and_says_which_cell(tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    res = casslab("k8s", "render", LINKS, "-o", str(out), "--cell",
                  "nodes=2,network=wifi,workload=ycsb-i", "--clients", "2", "--image",
                  "registry.example/casslab-load:1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == ("cell nodes=2,network=wifi,workload=ycsb-i: 2 x "
                                          "rpi2, 2 NetworkChaos, 2 load clients")
    assert sorted(p.name for p in out.iterdir()) == [
        "datacenter.yaml", "load-job.yaml", "network-chaos.yaml", "prepare-job.yaml"]
    job = yaml.safe_load((out / "load-job.yaml").read_text())
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example/casslab-load:1"
    assert container["args"][:3] == ["ycsb", "--workload", "i"]
    assert container["args"][container["args"].index("--client") + 1] == (
        "$(JOB_COMPLETION_INDEX)/2")


def test_an_unknown_cell_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    res = casslab("k8s", "render", LINKS, "-o", str(out), "--cell", "nodes=7")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: --cell 'nodes=7' is not a cell of rpi-iot-links (valid: nodes=1,")
    assert not out.exists()


def test_per_node_links_with_racks_is_one_line(tmp_path: Path) -> None:
    edge = str(ROOT / "examples" / "002-edge" / "2-edge-steps.yaml")
    res = casslab("k8s", "render", edge, "-o", str(tmp_path), "--racks", "3")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: --racks 3: link conditions of node1 alone need one rack (a node's pod is "
        "named by its rack's ordinal); use --racks 1 or conditions alike for every node"]
