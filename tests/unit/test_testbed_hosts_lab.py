"""The hosts lab's pure parts: where a user profile goes on a client host, and the ssh
command line that reaches a host."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.testbed.hosts.inventory import Host
from casslab.testbed.hosts.lab import remote_stress_profile, ssh_argv, stress_profile

HOST = Host("c1", "10.0.0.5", ("client",), user="pi", port=2222, key_file=Path("/k/id"),
            install_root="/opt/casslab",
            ssh_common_args="-o UserKnownHostsFile=/k/known")


def test_a_built_in_workload_needs_no_profile_copy() -> None:
    assert stress_profile("ycsb-a") is None


def test_a_missing_profile_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^workload profile .*nope\.yaml does not exist$"):
        stress_profile(str(tmp_path / "nope.yaml"))


def test_profiles_of_one_name_with_different_content_get_different_copies(
        tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "kv.yaml", tmp_path / "b" / "kv.yaml"
    for path, text in ((a, "keyspace: one\n"), (b, "keyspace: two\n")):
        path.parent.mkdir()
        path.write_text(text)
    ra, rb = remote_stress_profile(HOST, a), remote_stress_profile(HOST, b)
    assert ra != rb
    assert ra.startswith("/opt/casslab/run/profiles/") and ra.endswith("-kv.yaml")
    assert stress_profile(str(a)) == a.resolve()


def test_ssh_argv_reaches_the_host_as_the_inventory_says() -> None:
    assert ssh_argv(HOST) == ["ssh", "-o", "BatchMode=yes", "-p", "2222", "-i", "/k/id",
                              "-o", "UserKnownHostsFile=/k/known", "pi@10.0.0.5"]
