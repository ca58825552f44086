"""The ssh prefix keeps every argument of the remote command intact."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from casslab.testbed.hosts.sshrun import prefix, remote_argv


def test_the_remote_command_is_one_quoted_word() -> None:
    argv = remote_argv(["ssh", "-p", "22", "root@h", "--", "echo", "a b", "$HOME", "x;y"])
    assert argv[:4] == ["ssh", "-p", "22", "root@h"]
    assert shlex.split(argv[4]) == ["echo", "a b", "$HOME", "x;y"]


@pytest.mark.parametrize("argv", [["ssh", "root@h"], ["--", "echo"], ["ssh", "h", "--"]])
def test_a_command_line_without_both_parts_is_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit, match="usage"):
        remote_argv(argv)


def test_the_prefix_runs_through_a_shell_like_ssh_does() -> None:
    # `sh -c WORD` stands in for ssh: it hands the one word to a shell, as sshd does.
    out = subprocess.run([*prefix(["sh", "-c"]), "printf", "%s|", "a b", "$HOME", "x;y"],
                         capture_output=True, text=True, check=True).stdout
    assert out == "a b|$HOME|x;y|"
    assert prefix(["ssh", "h"])[:3] == [sys.executable, "-m", "casslab.testbed.hosts.sshrun"]
