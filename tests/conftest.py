"""Test-wide set-up: labs made by tests live in a throw-away CASSLAB_HOME.

The jar cache (CASSLAB_CACHE, default ~/.cache/casslab) is shared with `make jars`
so no test downloads anything. The throw-away home is removed when the session ends,
so test runs leave nothing behind in /tmp.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_MADE_HOME = "CASSLAB_TEST_HOME_MADE"


def pytest_configure() -> None:
    if "CASSLAB_TEST_HOME_SET" not in os.environ:
        home = tempfile.mkdtemp(prefix="casslab-test-home-")
        os.environ["CASSLAB_HOME"] = home
        os.environ["CASSLAB_TEST_HOME_SET"] = "1"
        os.environ[_MADE_HOME] = f"{os.getpid()}:{home}"


def pytest_unconfigure() -> None:
    # Only the process that made the home removes it (xdist workers and child pytest
    # runs inherit the variables but not the ownership).
    pid, _, home = os.environ.get(_MADE_HOME, "").partition(":")
    if pid == str(os.getpid()) and os.path.basename(home).startswith("casslab-test-home-"):
        shutil.rmtree(home, ignore_errors=True)
