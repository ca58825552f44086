"""The delay-only model of seed 002: the round trip the configured delays give, read
from the spec's own link table and the cell's levels (no Cassandra)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from casslab.analysis.delaymodel import model_rtt_ms

EDGE = Path(__file__).resolve().parents[2] / "examples" / "002-edge"


def network(spec: str) -> object:
    return yaml.safe_load((EDGE / spec).read_text())["lab"]["network"]


def test_at_cl1_the_model_is_the_client_round_trip_alone() -> None:
    assert model_rtt_ms(network("4-edge-percent.yaml"), {"network.scale.edge": 50}, 3,
                        "ONE") == pytest.approx(20.0)
    assert model_rtt_ms(network("3-endpoint-percent.yaml"),
                        {"network.scale.endpoint": 50}, 3, "ONE") == pytest.approx(30.0)


def test_the_coordinator_waits_for_its_nearest_peers_averaged_over_coordinators() -> None:
    net = network("4-edge-percent.yaml")
    # a, b, c = 5, 10, 15: nearest peer 5, 5, 10 ms away; farthest 15, 10, 15 ms.
    assert model_rtt_ms(net, {"network.scale.edge": 0}, 3, "TWO") == pytest.approx(
        20 + 2 * 20 / 3)
    assert model_rtt_ms(net, {"network.scale.edge": 0}, 3, "THREE") == pytest.approx(
        20 + 2 * 40 / 3)
    assert model_rtt_ms(net, {"network.scale.edge": 50}, 3, "three") == pytest.approx(
        20 + 3 * 40 / 3)


def test_a_network_level_that_is_a_whole_link_table_is_read_too() -> None:
    spec = yaml.safe_load((EDGE / "2-edge-steps.yaml").read_text())
    level = spec["factors"][0]["levels"][1]  # a, b, c = 15, 20, 25: nearest 15, 15, 20
    assert model_rtt_ms(spec["lab"].get("network"), {"network": level}, 3, "TWO") == (
        pytest.approx(20 + 2 * 50 / 3))


def test_a_level_the_model_has_no_rule_for_is_nan() -> None:
    net = network("4-edge-percent.yaml")
    assert math.isnan(model_rtt_ms(net, {}, 3, "QUORUM"))
    assert math.isnan(model_rtt_ms(net, {}, 1, "TWO"))
