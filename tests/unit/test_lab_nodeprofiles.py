"""Per-node profiles: `--node-profile` values, each node's profile, CPU warnings."""

from __future__ import annotations

import pytest

from casslab.core.errors import ProfileError, UsageError
from casslab.hardware import BUILTIN_PROFILES
from casslab.lab.nodeprofiles import (
    cpu_warning,
    node_index,
    node_profiles,
    parse_node_profile_options,
)


def test_node_profile_options_accept_a_name_or_a_number() -> None:
    assert parse_node_profile_options(["node6=rpi3", "2=t2.micro"]) == {
        "node6": "rpi3", "node2": "t2.micro"}


@pytest.mark.parametrize(("item", "message"), [
    ("node3", "expected NODE=PROFILE, e.g. node3=rpi3"),
    ("=rpi3", "expected NODE=PROFILE"),
    ("node3=", "expected NODE=PROFILE"),
    ("first=rpi3", "'first' is not a node"),
    ("node0=rpi3", "'node0' is not a node"),
])
def test_a_malformed_node_profile_option_is_one_line_naming_it(item: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        parse_node_profile_options([item])
    assert "\n" not in str(info.value) and f"'{item}'" in str(info.value)


def test_a_node_given_twice_is_refused() -> None:
    with pytest.raises(UsageError, match="node3 is given twice"):
        parse_node_profile_options(["node3=rpi3", "3=rpi2"])


def test_each_node_gets_its_own_profile_and_the_others_the_labs() -> None:
    got = node_profiles("rpi2", {"node3": "rpi3"}, 3)
    assert [p.name for p in got] == ["rpi2", "rpi2", "rpi3"]
    assert [p.cpu_cores for p in got] == [0.6, 0.6, 1.0]


def test_fields_are_set_over_every_nodes_profile() -> None:
    got = node_profiles("rpi2", {"node2": "rpi3"}, 2, fields={"memory_mib": 2048})
    assert [(p.name, p.memory_mib) for p in got] == [("rpi2", 2048), ("rpi3", 2048)]
    assert got[1].cpu_cores == 1.0


def test_a_node_the_lab_does_not_have_names_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"'node4': no such node in a 3-node lab \(valid: "
                                         r"node1 ... node3\)"):
        node_profiles("rpi2", {"node4": "rpi3"}, 3)
    with pytest.raises(UsageError, match=r"valid: node1\)"):
        node_index("node2", 1, "--node-profile")


def test_an_unknown_node_profile_names_the_node_and_the_valid_profiles() -> None:
    with pytest.raises(ProfileError, match=r"--node-profile node2=rpi9: unknown profile "
                                           r"'rpi9' \(valid: rpi2, rpi3"):
        node_profiles("rpi2", {"node2": "rpi9"}, 3)


def test_mixed_quotas_over_the_machine_warn_with_each_nodes_share() -> None:
    pis = [BUILTIN_PROFILES["rpi2"]] * 2 + [BUILTIN_PROFILES["rpi3"]]
    msg = cpu_warning(pis, cores=2)
    assert msg is not None and "0.6 + 0.6 + 1 = 2.2 cores" in msg
    assert cpu_warning(pis, cores=4) is None


def test_an_unlimited_node_among_limited_ones_is_named() -> None:
    msg = cpu_warning([BUILTIN_PROFILES["rpi2"], BUILTIN_PROFILES["host"]], cores=2)
    assert msg is not None and "profile 'host' has no CPU limit: 2 nodes" in msg
