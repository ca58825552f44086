"""Shared labs and stand-in hosts of the integration tests, each made once per test run.

Starting a lab (JVMs up, CQL ready) or stand-in hosts costs tens of seconds on 2 cores,
so a test that can share one does (issue 28: `make test` has a budget). Use them as
fixtures, and keep what a test leaves behind from disturbing the next one (a keyspace of
its own, nodes started again if it stopped them):

- `lab1`: a 1-node lab (profile container: own cgroup, no limits) with optional client
  TLS, so plain CQL works too; `LAB1` is its name for the CLI (`--name`). Workloads,
  multi-client loads, Prometheus, the tuner, the CLI's `run`/`stress`.
- `lab3`: a 3-node lab, RF 3, profile rpi3 (limits, oversubscribed on 2 cores); `LAB3`.
- `tls_files`: the node keystore and certificates `lab1` was started with.
- `stand_in_hosts`: five stand-in hosts (network namespaces, each with its own sshd and
  install root); `ssh_hosts`: its first two. Provisioning is per test (it is what the
  hosts tests check), but the hosts, and so the jars the playbook unpacked into their
  install roots once per version, stay for the whole run. A module that starts nodes on
  them wipes their data afterwards (labtools.wipe_node_data).
- `lab_up(name, options)`: a lab of a module's own, for a test that needs a shape none
  of the above has; `make_lab(name)` for a test that drives `up`/`down` itself.

Every test in this directory is marked `integration` (`pytestmark`), so `make check`
(`-m "not integration"`) never starts a lab; a module without the mark is refused at
collection. `make test` runs them on two workers (`--dist loadfile`: a module's tests on
one worker, and the stand-in hosts' modules together on one, tests/scheduling.py; each
worker has its own CASSLAB_HOME, so its `lab1`/`lab3` are its own, and its own stand-in
hosts, in a subnet no other set holds), except the modules marked `timing` (they measure
delays or rates that a second test on the same two cores would disturb), which run
afterwards one at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from scheduling import is_hosts_module

from labtools import TlsFiles, hosts_name, leftovers, make_tls_files

LAB3 = "it3"
LAB1 = "it1"
# Enough for the largest user, the hosts campaign (3 node hosts and 2 client hosts).
STAND_IN_HOSTS = 5
HERE = Path(__file__).parent


# The groups that take longest (BENCHMARKS.md: the 20 slowest tests), longest first; the
# stand-in hosts' modules go to one worker together (several minutes), so they lead.
_LONG_FIRST = {"test_readme_walk": 2, "test_examples_smoke": 1}
_HOSTS_FIRST = 3


def _weight(item: pytest.Item) -> int:
    if not item.path.is_relative_to(HERE):
        return 0
    return _HOSTS_FIRST if is_hosts_module(item.path.stem) else _LONG_FIRST.get(item.path.stem, 0)


def pytest_itemcollected(item: pytest.Item) -> None:
    """A test of a hosts module (test_hosts_*, test_sshhosts: each makes or shares
    stand-in hosts) is marked `stand_in_hosts`; `make test` hands those modules to one
    worker as one unit (tests/scheduling.py), so the worker's shared set serves them all.
    A test elsewhere that uses the shared hosts is refused: the scheduler, which sees only
    test ids, would split it from them."""
    if is_hosts_module(item.path.stem):
        item.add_marker(pytest.mark.stand_in_hosts)
    elif "stand_in_hosts" in getattr(item, "fixturenames", ()):
        raise pytest.UsageError(f"{item.nodeid} uses the stand-in hosts: put it in a "
                                "test_hosts_* module (tests/scheduling.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse an integration test without the `integration` mark: it would run in
    `make check`, which must never need a lab."""
    mine = [item for item in items if item.path.is_relative_to(HERE)]
    unmarked = sorted({str(item.path.relative_to(HERE)) for item in mine
                       if item.get_closest_marker("integration") is None})
    if unmarked:
        raise pytest.UsageError(
            "tests/integration modules need `pytestmark = pytest.mark.integration`: "
            + ", ".join(unmarked))
    # Longest modules first (xdist hands modules out in collection order): a long one
    # started last would run on alone at the end while the other worker idles.
    items.sort(key=_weight, reverse=True)


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
def stand_in_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHosts]:
    """Five stand-in hosts (namespaces with their own sshd), shared by every hosts test."""
    if not sshhosts.SSHD.exists():
        pytest.skip("openssh-server is installed by `make setup`")
    made = sshhosts.start(hosts_name("it"), STAND_IN_HOSTS, tmp_path_factory.mktemp("hosts"))
    yield made
    sshhosts.stop(made)


@pytest.fixture(scope="session")
def ssh_hosts(stand_in_hosts: SshHosts) -> SshHosts:
    """The first two stand-in hosts (the same machines, key and bridge): for tests that
    expect exactly two, e.g. `ansible_inventory(nodes=2)` or `a, b = ssh_hosts.hosts`."""
    return dataclasses.replace(stand_in_hosts, hosts=stand_in_hosts.hosts[:2])
