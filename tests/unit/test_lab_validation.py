import pytest

from casslab.core.errors import UsageError
from casslab.hardware import BUILTIN_PROFILES
from casslab.lab.cluster import unlimited_node_memory_mib, validate_node_count
from casslab.lab.nodeprofiles import cpu_warning


@pytest.mark.parametrize(("count", "message"), [(0, "at least 1 node"), (-2, "at least 1 node"),
                                                 (1000, "at most 32 nodes")])
def test_node_count_out_of_range(count: int, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        validate_node_count(count, heap_mib=512, memory_mib=24576)


def test_node_count_beyond_memory_names_the_sizes() -> None:
    with pytest.raises(UsageError, match=r"8 nodes x \(4096 MiB heap"):
        validate_node_count(8, heap_mib=4096, memory_mib=24576)


def test_quota_over_the_machine_warns_of_oversubscription() -> None:
    msg = cpu_warning([BUILTIN_PROFILES["rpi3"]] * 3, cores=2)
    assert msg is not None and "oversubscribed" in msg and "3 cores" in msg


def test_quota_within_the_machine_does_not_warn() -> None:
    assert cpu_warning([BUILTIN_PROFILES["rpi2"]] * 3, cores=2) is None


def test_nodes_without_a_memory_limit_size_their_heap_on_a_bounded_share() -> None:
    assert unlimited_node_memory_mib(24576, 1) == 4096  # heap 1 GiB, not 6 GiB
    assert unlimited_node_memory_mib(24576, 12) == 2048
    assert BUILTIN_PROFILES["host"].effective_heap_mib(unlimited_node_memory_mib(24576, 3)) == 1024
