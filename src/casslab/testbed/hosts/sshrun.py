"""`python -m casslab.testbed.hosts.sshrun SSH-ARGV... -- COMMAND...`: run COMMAND over ssh with
its arguments intact.

ssh joins the remote command's words with spaces for the remote shell, so an argument
with a space or a shell character would be split or expanded there. Callers that build a
command as `[*prefix, *argv]` (casslab.load's runners) get a prefix that quotes: this
module joins COMMAND with shlex and hands ssh one word.
"""

from __future__ import annotations

import os
import shlex
import sys


def remote_argv(argv: list[str]) -> list[str]:
    """The ssh command line for `SSH-ARGV... -- COMMAND...`."""
    if "--" not in argv:
        raise SystemExit("usage: python -m casslab.testbed.hosts.sshrun SSH-ARGV... -- COMMAND...")
    cut = argv.index("--")
    ssh, command = argv[:cut], argv[cut + 1:]
    if not ssh or not command:
        raise SystemExit("usage: python -m casslab.testbed.hosts.sshrun SSH-ARGV... -- COMMAND...")
    return [*ssh, shlex.join(command)]


def prefix(ssh_argv: list[str]) -> list[str]:
    """A command prefix that runs what follows it over `ssh_argv` (ssh ... user@host)."""
    return [sys.executable, "-m", "casslab.testbed.hosts.sshrun", *ssh_argv, "--"]


def main() -> None:
    argv = remote_argv(sys.argv[1:])
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
