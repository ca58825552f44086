from pathlib import Path

import pytest

from casslab.core.errors import LabStateError, UsageError
from casslab.lab.state import LabState, NodeState, check_node_ref, lab_lock, validate_name


def _state(tmp_path: Path) -> LabState:
    return LabState(name="a", directory=str(tmp_path), cassandra_version="5.0.6",
                    profile="rpi3", netns="casslab-a", cgroup_version=1, subnet=1,
                    seeds=["127.0.1.1"], overrides={"x": 1},
                    nodes=[NodeState(1, "127.0.1.1", str(tmp_path / "node1"), pid=42,
                                     start_ticks=7, cgroup_dirs=["/sys/fs/cgroup/cpu/x"])])


def test_state_survives_a_round_trip(tmp_path: Path) -> None:
    _state(tmp_path).save()
    assert LabState.load(tmp_path) == _state(tmp_path)


def test_nodes_are_found_by_number_name_or_address(tmp_path: Path) -> None:
    s = _state(tmp_path)
    assert s.node("1") is s.node("node1") is s.node("127.0.1.1")
    with pytest.raises(UsageError, match="no node '9' \\(valid: node1\\)"):
        s.node("9")


@pytest.mark.parametrize("name", ["", "Upper", "1abc", "has space", "a" * 21, "a/b"])
def test_bad_lab_names_are_rejected(name: str) -> None:
    with pytest.raises(UsageError, match="lab name"):
        validate_name(name)


def test_a_second_writer_is_refused_while_the_lock_is_held(tmp_path: Path) -> None:
    with lab_lock(tmp_path), pytest.raises(LabStateError, match="another casslab"), \
            lab_lock(tmp_path):
        pass


def test_a_node_reference_is_checked_for_its_form_before_any_lab() -> None:
    for ok in ("1", "12", "node3", "127.0.1.2", "::1"):
        check_node_ref(ok)
    for bad in ("0", "nodeX", "node0", "", "-1", "first"):
        with pytest.raises(UsageError, match=f"node '{bad}' is not a node"):
            check_node_ref(bad)


def test_a_state_file_older_than_per_node_profiles_still_loads(tmp_path: Path) -> None:
    import json

    _state(tmp_path).save()
    raw = json.loads((tmp_path / "lab.json").read_text())
    for key in ("profile_fields", "profiles_file"):
        raw.pop(key)
    for n in raw["nodes"]:
        n.pop("profile")
    (tmp_path / "lab.json").write_text(json.dumps(raw))
    s = LabState.load(tmp_path)
    assert s.profile_of(s.nodes[0]) == "rpi3" and s.profile_fields == {}


def test_a_nodes_own_profile_survives_a_round_trip(tmp_path: Path) -> None:
    s = _state(tmp_path)
    s.nodes[0].profile = "rpi2"
    s.profile_fields = {"memory_mib": 2048}
    s.save()
    loaded = LabState.load(tmp_path)
    assert loaded.profile_of(loaded.nodes[0]) == "rpi2"
    assert loaded.profile_fields == {"memory_mib": 2048}
