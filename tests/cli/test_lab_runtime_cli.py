"""`lab up --runtime`: a runtime the lab cannot honour is refused in one line, before
anything is made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import CASSLAB


@pytest.mark.parametrize(("args", "message"), [
    (["--runtime", "docker"], "error: --runtime docker: unknown runtime; valid: process, "
                              "netns, lxc"),
    (["--runtime", "lxc", "--no-netns"], "error: --runtime lxc: needs root and the lab's own "
                                         "namespace; run as root without --no-netns, or use "
                                         "--runtime process"),
])
def test_a_runtime_the_lab_cannot_honour_is_one_line_and_leaves_nothing(
        args: list[str], message: str, tmp_path: Path) -> None:
    env = {**os.environ, "CASSLAB_HOME": str(tmp_path / "home"), "COLUMNS": "300"}
    res = subprocess.run([CASSLAB, "lab", "up", "--name", "rtcli", *args], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2
    assert res.stderr.strip() == message
    assert not (tmp_path / "home" / "labs" / "rtcli").exists()
