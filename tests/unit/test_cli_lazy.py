"""The root command lists every command without importing it, and each listed line is
the command's own help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from casslab.cli.main import CasslabGroup


@pytest.mark.parametrize("name", sorted(CasslabGroup.lazy))
def test_listed_help_is_the_commands_own_first_line(name: str) -> None:
    entry = CasslabGroup.lazy[name]
    assert entry.load(name).get_short_help_str(limit=1000) == entry.short_help


def test_importing_the_entry_point_imports_no_command_module() -> None:
    code = ("import sys, casslab.cli.main; "
            "print(sorted(m for m in sys.modules if m.startswith(('casslab.lab', "
            "'casslab.net', 'casslab.experiment', 'casslab.analysis', 'casslab.report', "
            "'casslab.tune', 'casslab.load', 'casslab.cli.lab'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_a_lazy_command_runs_and_an_unknown_one_is_one_line() -> None:
    cli = [sys.executable, "-m", "casslab.cli.main"]
    ok = subprocess.run([*cli, "lab", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "lab up" not in ok.stderr and "up" in ok.stdout
    bad = subprocess.run([*cli, "lab", "bogus"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "error: python -m casslab.cli.main lab: No such command 'bogus'. "
        "Did you mean 'logs'? (see --help)"]


@pytest.mark.parametrize("argv", [["--help"], ["lab", "list"], ["lab", "--help"],
                                  ["net", "--help"], ["run", "--help"]])
def test_light_commands_do_not_import_pydantic_ansible_or_the_whole_lab(argv: list[str],
                                                               tmp_path: Path) -> None:
    # Typer coerces an unset flag (None) through a pydantic TypeAdapter; with the flags
    # settled to False these commands stay within the start-up budget.
    code = ("import sys, runpy; sys.argv = ['casslab', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('casslab.cli.main', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'ansible')"
            " or m in ('casslab.lab.cluster', 'casslab.net.emulator')))")
    env = {**os.environ, "CASSLAB_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         env=env, check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"
