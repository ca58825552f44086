"""Test-wide set-up: labs made by tests live in a throw-away CASSLAB_HOME.

The jar cache (CASSLAB_CACHE, default ~/.cache/casslab) is shared with `make jars`
so no test downloads anything. Each xdist worker gets a home of its own. The throw-away
home is removed when the session ends, so test runs leave nothing behind in /tmp.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest

from scheduling import scope_of

_MADE_HOME = "CASSLAB_TEST_HOME_MADE"


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`, except that the stand-in hosts' modules are one unit
    (tests/scheduling.py)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class HostsTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return HostsTogether(config, log)


def pytest_configure() -> None:
    # One home per pytest process: `make check` runs its tests in two xdist workers at
    # once, and labs or lock files of the same name must not meet in one home. A child
    # pytest run (same worker name) keeps its parent's.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if os.environ.get("CASSLAB_TEST_HOME_SET") != worker:
        home = tempfile.mkdtemp(prefix="casslab-test-home-")
        os.environ["CASSLAB_HOME"] = home
        os.environ["CASSLAB_TEST_HOME_SET"] = worker
        os.environ[_MADE_HOME] = f"{os.getpid()}:{home}"


def pytest_unconfigure() -> None:
    # Only the process that made the home removes it (child pytest runs inherit the
    # variables but not the ownership).
    pid, _, home = os.environ.get(_MADE_HOME, "").partition(":")
    if pid == str(os.getpid()) and os.path.basename(home).startswith("casslab-test-home-"):
        shutil.rmtree(home, ignore_errors=True)
