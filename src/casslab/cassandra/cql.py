"""CQL access to a lab from Python, through a worker inside the lab's namespace."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from casslab.core.errors import CqlError
from casslab.system.netns import exec_prefix

CONSISTENCY_LEVELS = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                      "EACH_QUORUM", "LOCAL_ONE", "SERIAL", "LOCAL_SERIAL")


class Cql(Protocol):
    """What code that only runs statements needs of a session: CqlClient, or a fake in
    unit tests."""

    def execute(self, query: str, params: list[Any] | None = None, *, consistency: str = ...,
                host: str | None = ..., timeout_s: float = ...) -> Any: ...


@dataclass(frozen=True)
class CqlResult:
    columns: list[str]
    rows: list[list[Any]]


class CqlClient:
    """A CQL session usable as a context manager.

    >>> with CqlClient(["127.0.1.1"], netns="casslab-demo") as cql:
    ...     cql.execute("SELECT release_version FROM system.local").rows
    """

    def __init__(self, contacts: list[str], *, netns: str | None) -> None:
        self._contacts = contacts
        self._netns = netns
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> CqlClient:
        prefix = exec_prefix(self._netns)
        cmd = [*prefix, sys.executable, "-m", "casslab.cassandra.cql_worker",
               "--contact", ",".join(self._contacts)]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
        first = self._read()
        if "error" in first:
            self.close()
            err = first["error"]
            raise CqlError(err["kind"], f"cannot connect to {','.join(self._contacts)}: "
                           f"{err['message']}")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def execute(self, query: str, params: list[Any] | None = None, *,
                consistency: str = "ONE", host: str | None = None,
                timeout_s: float = 10.0) -> CqlResult:
        """Run one statement at `consistency`, coordinated by `host` if given.

        Raises CqlError(kind, message) with the driver's exception name, e.g.
        'Unavailable' when too few replicas are alive for the level.
        """
        if consistency.upper() not in CONSISTENCY_LEVELS:
            raise CqlError("UsageError", f"consistency '{consistency}' is not one of "
                           f"{', '.join(CONSISTENCY_LEVELS)}")
        assert self._proc is not None and self._proc.stdin is not None, "use as context manager"
        req = {"query": query, "params": params, "consistency": consistency.upper(),
               "host": host, "timeout_s": timeout_s}
        self._proc.stdin.write(json.dumps(req) + "\n")
        self._proc.stdin.flush()
        resp = self._read()
        if "error" in resp:
            raise CqlError(resp["error"]["kind"], resp["error"]["message"])
        return CqlResult(resp["columns"], resp["rows"])

    def _read(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.wait()
            raise CqlError("WorkerExited", f"CQL worker exited with code {code}")
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None
