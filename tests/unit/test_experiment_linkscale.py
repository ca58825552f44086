"""Coupled link scaling: a base link table of named groups, a factor that scales one
group by a percentage, and one-line errors for a bad group, link or level."""

from __future__ import annotations

import pytest

from casslab.experiment.factors.network import wanted
from casslab.experiment.factors.registry import net_levels
from casslab.experiment.spec import SpecError, parse_spec
from casslab.net import NetSpec

SEED_002 = """\
workload: ycsb-a
lab:
  nodes: 3
  network:
    groups:
      endpoint: {client-node1: 5, client-node2: 10, client-node3: 15}
      edge: {node1-node2: 5, node2-node3: {delay_ms: 10, jitter_ms: 2, loss_pct: 1},
             node1-node3: 15}
factors:
  - {name: network.scale.edge, levels: [0, 10, 20, 30, 40, 50]}
"""


def _delays(spec_text: str, params: dict[str, object]) -> dict[tuple[str, str], float]:
    spec = parse_spec(spec_text)
    mapping = wanted(spec.lab.network, net_levels(params), 3)
    assert mapping is not None
    table = NetSpec.from_mapping(mapping).resolve(3)
    return {k: c.delay_ms for k, c in table.items()}


def test_scale_factor_is_a_network_factor_with_percent_levels() -> None:
    spec = parse_spec(SEED_002)
    (f,) = spec.factors
    assert f.kind == "network"
    assert f.levels == (0.0, 10.0, 20.0, 30.0, 40.0, 50.0)


def test_a_level_scales_every_link_of_its_group_together() -> None:
    base = _delays(SEED_002, {"network.scale.edge": 0.0})
    up = _delays(SEED_002, {"network.scale.edge": 50.0})
    for a, b, ms in (("node1", "node2", 5.0), ("node2", "node3", 10.0),
                     ("node1", "node3", 15.0)):
        assert base[(a, b)] == base[(b, a)] == ms
        assert up[(a, b)] == up[(b, a)] == pytest.approx(1.5 * ms)
    # The other group keeps its base delays.
    assert up[("client", "node2")] == base[("client", "node2")] == 10.0


def test_time_fields_scale_and_loss_stays() -> None:
    spec = parse_spec(SEED_002)
    mapping = wanted(spec.lab.network, net_levels({"network.scale.edge": 20.0}), 3)
    assert mapping is not None
    cond = NetSpec.from_mapping(mapping).resolve(3)[("node2", "node3")]
    assert cond.delay_ms == pytest.approx(12.0)
    assert cond.jitter_ms == pytest.approx(2.4)
    assert cond.loss_pct == 1.0


def test_an_explicit_link_factor_wins_over_the_base_table() -> None:
    spec = parse_spec(SEED_002)
    mapping = wanted(spec.lab.network, net_levels({"network.scale.edge": 10.0,
                                                   "network.node1-node2.delay_ms": 1.0}), 3)
    assert mapping is not None
    assert mapping["links"]["node1-node2"]["delay_ms"] == 1.0
    assert mapping["links"]["node1-node3"]["delay_ms"] == pytest.approx(16.5)


def test_without_a_factor_the_base_table_applies() -> None:
    text = SEED_002.split("factors:")[0]
    assert _delays(text, {})[("node3", "client")] == 15.0


@pytest.mark.parametrize(("level", "shown"), [("'ten'", "'ten'"), ("2000", "2000"),
                                              ("-100", "-100"), ("true", "True")])
def test_a_bad_level_is_one_line_naming_factor_level_and_valid(level: str, shown: str) -> None:
    text = SEED_002.replace("levels: [0, 10,", f"levels: [0, {level},")
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    msg = str(err.value)
    assert "\n" not in msg
    assert (f"factors[0].levels[1] (factor network.scale.edge): level {shown} is not a "
            "percentage (valid: a number from -99 to 1000, e.g. 50 for +50 %)") in msg


@pytest.mark.parametrize(("text", "message"), [
    (SEED_002.replace("network.scale.edge", "network.scale.core"),
     ":10: factors[0].name: factor network.scale.core: no group 'core' in "
     "lab.network.groups (valid: endpoint, edge)"),
    (SEED_002.split("  network:")[0] + "factors:\n  - {name: network.scale.edge, levels: [10]}\n",
     "factor network.scale.edge: no group 'edge' in lab.network.groups (valid: none "
     "defined: add lab.network.groups)"),
    (SEED_002.replace("client-node3: 15", "client-node9: 15"),
     ":5: lab.network: link client-node9: unknown endpoint 'node9' (valid: client, "
     "node1, node2, node3)"),
    (SEED_002.replace("client-node3: 15", "node2-node1: 15"),
     ":7: lab.network.groups.edge.node1-node2: link node1-node2 is already in group "
     "endpoint"),
    (SEED_002.replace("client-node3: 15", "client-bob: 15"),
     "lab.network.groups.endpoint.client-bob: unknown endpoint 'bob'"),
    (SEED_002.replace("endpoint:", "End Point:"),
     "lab.network.groups.'End Point': 'End Point' is not a group name (valid: "),
    (SEED_002.replace("node1-node3: 15", "node1-node3: {delay: 15}"),
     "lab.network.groups.edge.node1-node3.delay: unknown key"),
    (SEED_002.replace("node1-node3: 15", "node1-node3: -1"),
     "lab.network.groups.edge.node1-node3: -1 is out of range"),
])
def test_bad_groups_are_named(text: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    assert message in str(err.value)


TERMS = SEED_002.replace("network.scale.edge, levels: [0, 10, 20, 30, 40, 50]",
                         "network.scale, levels: [edge+50, endpoint+50, base, "
                         "'edge+20,endpoint-10']")


def test_a_terms_level_scales_each_group_it_names() -> None:
    spec = parse_spec(TERMS)
    (f,) = spec.factors
    assert f.kind == "network"
    assert f.levels == ("edge+50", "endpoint+50", "base", "edge+20,endpoint-10")
    edge = _delays(TERMS, {"network.scale": "edge+50"})
    end = _delays(TERMS, {"network.scale": "endpoint+50"})
    both = _delays(TERMS, {"network.scale": "edge+20,endpoint-10"})
    base = _delays(TERMS, {"network.scale": "base"})
    assert edge[("node1", "node3")] == pytest.approx(22.5)
    assert edge[("client", "node1")] == 5.0  # the endpoint group keeps its base
    assert end[("node1", "node3")] == 15.0
    assert end[("client", "node3")] == pytest.approx(22.5)
    assert both[("node2", "node1")] == pytest.approx(6.0)
    assert both[("node2", "client")] == pytest.approx(9.0)
    assert base == _delays(SEED_002.split("factors:")[0], {})


@pytest.mark.parametrize(("level", "message"), [
    ("edge50", "level 'edge50': 'edge50' is not <group>+<percent> (valid: `base`"),
    ("'edge+50,edge+10'", "level 'edge+50,edge+10': group edge is named twice"),
    ("edge+2000", "level 'edge+2000': edge +2000 % is out of range"),
    ("12", "level 12 is not a scaling"),
    ("core+10", "factors[0].levels[0]: level core+10: no group 'core' in "
     "lab.network.groups (valid: endpoint, edge)"),
])
def test_a_bad_terms_level_is_one_line_naming_it(level: str, message: str) -> None:
    text = TERMS.replace("levels: [edge+50,", f"levels: [{level},")
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    assert "\n" not in str(err.value)
    assert message in str(err.value)


def test_terms_beside_a_group_factor_are_refused() -> None:
    text = TERMS + "  - {name: network.scale.endpoint, levels: [0, 10]}\n"
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    assert ("factors[0].name: factor network.scale beside network.scale.endpoint: scale "
            "each group with one of them") in str(err.value)
