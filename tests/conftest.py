"""Test-wide set-up: labs made by tests live in a throw-away CASSLAB_HOME.

The jar cache (CASSLAB_CACHE, default ~/.cache/casslab) is shared with `make jars`
so no test downloads anything.
"""

from __future__ import annotations

import os
import tempfile


def pytest_configure() -> None:
    if "CASSLAB_TEST_HOME_SET" not in os.environ:
        os.environ["CASSLAB_HOME"] = tempfile.mkdtemp(prefix="casslab-test-home-")
        os.environ["CASSLAB_TEST_HOME_SET"] = "1"
