"""The exception hierarchy: one root, one subclass per step that can fail.

Library code raises these and never prints or exits; the CLI turns them into a
one-line message and a non-zero exit code.
"""

from __future__ import annotations


class CasslabError(Exception):
    """Root of every error casslab raises on purpose."""


class UsageError(CasslabError):
    """Bad input from the user: an unknown name, a value out of range."""


class PrerequisiteError(CasslabError):
    """Something casslab needs on this machine is missing (java, mvn, ip, root)."""


def require_extra(module: str, extra: str, what: str) -> None:
    """PrerequisiteError naming the optional extra to install when `module` (a package of
    that extra) is missing; cheap: it looks the module up without importing it."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise PrerequisiteError(f"{what} needs {module}, which is not installed: "
                                f"pip install 'casslab[{extra}]'")


class DistributionError(CasslabError):
    """The Cassandra distribution could not be resolved or is incomplete."""


class ProfileError(UsageError):
    """A hardware profile is unknown or malformed."""


class CgroupError(CasslabError):
    """Creating, limiting or removing a cgroup failed."""


class NetnsError(CasslabError):
    """Creating, using or removing the lab's network namespace failed."""


class LabStateError(CasslabError):
    """The lab's on-disk state forbids the request (name in use, no such lab)."""


class NodeStartError(CasslabError):
    """A node died or did not become ready in time; the message has its log tail."""


class CqlError(CasslabError):
    """A CQL statement failed; `kind` is the driver's exception class name."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class CommandError(CasslabError):
    """An external command failed; keeps the command, exit code and stderr."""

    def __init__(self, cmd: list[str], returncode: int, stderr: str) -> None:
        tail = stderr.strip().splitlines()[-1] if stderr.strip() else "(no stderr)"
        super().__init__(f"`{' '.join(cmd)}` exited {returncode}: {tail}")
        self.cmd = cmd
        self.returncode = returncode
        self.stderr = stderr
