"""One 3-node lab (RF 3, Raspberry Pi 3 profile) shared by the cluster tests."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from casslab.system import sshhosts
from casslab.system.sshhosts import SshHosts

sys.path.insert(0, str(Path(__file__).parent.parent))

from casslab.core.paths import default_cache, default_home
from casslab.lab import Lab, LabOptions
from casslab.testbed import open_lab

from labtools import TlsFiles, hosts_name, leftovers, make_tls_files

LAB3 = "it3"
LAB1 = "it1"


def make_lab(name: str) -> Lab:
    return open_lab(name, home=default_home(), cache=default_cache())


@contextlib.contextmanager
def lab_up(name: str, options: LabOptions) -> Iterator[Lab]:
    """A lab for a test module's fixture: up, then down and wiped with nothing left."""
    lab = make_lab(name)
    lab.up(options)
    try:
        yield lab
    finally:
        lab.down(wipe=True)
        assert not leftovers(name), f"lab down left: {leftovers(name)}"


@pytest.fixture(scope="session")
def lab3() -> Iterator[Lab]:
    lab = make_lab(LAB3)
    state = lab.up(LabOptions(nodes=3, profile="rpi3"))
    assert any("oversubscribed" in w for w in state.warnings)
    try:
        yield lab
    finally:
        lab.down(wipe=True)
        left = leftovers(LAB3)
        assert not left, f"lab down left: {left}"
        assert not Path(default_home(), "labs", LAB3).exists()


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def lab1(tls_files: TlsFiles) -> Iterator[Lab]:
    """A 1-node lab for workload tests (each test uses its own keyspace). Client TLS is
    on but optional, so the TLS test shares this lab and plain CQL works as well."""
    lab = make_lab(LAB1)
    lab.up(LabOptions(nodes=1, profile="container", overrides=tls_files.lab_overrides()))
    try:
        yield lab
    finally:
        lab.down(wipe=True)
        assert not leftovers(LAB1), f"lab down left: {leftovers(LAB1)}"


@pytest.fixture(scope="session")
def cli_env() -> dict[str, str]:
    return dict(os.environ)


@pytest.fixture(scope="session")
def ssh_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHosts]:
    """Two stand-in hosts (namespaces with their own sshd), shared by the hosts tests."""
    if not sshhosts.SSHD.exists():
        pytest.skip("openssh-server is installed by `make setup`")
    made = sshhosts.start(hosts_name("it"), 2, tmp_path_factory.mktemp("hosts"))
    yield made
    sshhosts.stop(made)
