import itertools
from pathlib import Path

import pytest

from casslab.cassandra.config import (
    NodeLayout,
    even_tokens,
    parse_overrides,
    render_cassandra_yaml,
)
from casslab.core.errors import UsageError


def test_overrides_parse_yaml_scalars_and_nested_keys() -> None:
    got = parse_overrides(["concurrent_writes=16", "auto_snapshot=true",
                           "memtable.configurations.default.class_name=TrieMemtable",
                           "cluster_name=my lab"])
    assert got["concurrent_writes"] == 16
    assert got["auto_snapshot"] is True
    assert got["memtable"]["configurations"]["default"]["class_name"] == "TrieMemtable"
    assert got["cluster_name"] == "my lab"


@pytest.mark.parametrize("bad", ["concurrent_writes", "=5", ""])
def test_override_without_key_value_is_rejected(bad: str) -> None:
    with pytest.raises(UsageError, match="expected key=value"):
        parse_overrides([bad])


def test_tokens_split_the_ring_evenly_and_never_collide() -> None:
    nodes, per_node = 3, 16
    all_tokens = sorted(t for i in range(1, nodes + 1) for t in even_tokens(nodes, i, per_node))
    assert len(set(all_tokens)) == nodes * per_node
    gaps = {b - a for a, b in itertools.pairwise(all_tokens)}
    assert max(gaps) - min(gaps) <= 1
    assert all(-(2**63) <= t < 2**63 for t in all_tokens)


def test_rendered_yaml_has_addresses_seeds_and_overrides(tmp_path: Path) -> None:
    node = NodeLayout(2, "127.0.1.2", tmp_path / "node2")
    cfg = render_cassandra_yaml(lab_name="x", node=node, node_count=3, seeds=["127.0.1.1"],
                                overrides=parse_overrides(["num_tokens=4", "auto_snapshot=true"]))
    assert cfg["listen_address"] == cfg["rpc_address"] == "127.0.1.2"
    assert cfg["seed_provider"][0]["parameters"][0]["seeds"] == "127.0.1.1:7000"
    assert cfg["num_tokens"] == 4 and len(cfg["initial_token"].split(",")) == 4
    assert cfg["auto_snapshot"] is True
    assert cfg["data_file_directories"] == [str(tmp_path / "node2" / "data")]
