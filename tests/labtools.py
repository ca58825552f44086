"""Helpers shared by CLI and integration tests: run the real command, find leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from casslab.lab.state import system_name
from casslab.paths import default_home

CASSLAB = str(Path(sys.executable).parent / "casslab")


def casslab(*args: str, env: dict[str, str] | None = None,
            timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the real `casslab` command and capture its output."""
    return subprocess.run([CASSLAB, *args], capture_output=True, text=True, timeout=timeout_s,
                          env=env or dict(os.environ), check=False)


def leftovers(lab: str) -> list[str]:
    """Everything of lab `lab` (of this test run's home) still on this machine:
    processes, namespace, cgroups."""
    found = []
    home = default_home()
    sysname = system_name(lab, home)
    marker = f"{home}/labs/{lab}/node"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "CassandraDaemon" in cmdline:
            found.append(f"process {proc.name}")
    if Path(f"/var/run/netns/casslab-{sysname}").exists():
        found.append(f"namespace casslab-{sysname}")
    for ctrl in Path("/sys/fs/cgroup").iterdir():
        if (ctrl / "casslab" / sysname).exists():
            found.append(f"cgroup {ctrl / 'casslab' / sysname}")
    return found
