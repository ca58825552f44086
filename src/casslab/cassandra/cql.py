"""CQL access to a lab from Python, through a worker inside the lab's namespace."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Any, Protocol

from casslab.core.errors import CqlError, UsageError
from casslab.system.netns import exec_prefix

CONSISTENCY_LEVELS = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                      "EACH_QUORUM", "LOCAL_ONE", "SERIAL", "LOCAL_SERIAL")



def check_consistency(level: str, option: str = "--cl") -> str:
    """The level upper-cased; UsageError naming it and the valid levels otherwise."""
    if level.upper() not in CONSISTENCY_LEVELS:
        raise UsageError(f"{option}: '{level}' is not a consistency level (valid: "
                         f"{', '.join(CONSISTENCY_LEVELS)})")
    return level.upper()


# Cassandra's rule for keyspace names (CASSANDRA-6700: letters, digits, _; at most 48).
_KEYSPACE = re.compile(r"^[A-Za-z0-9_]{1,48}$")


def check_keyspace_name(name: str, option: str = "--keyspace") -> str:
    """The name when Cassandra could have made a keyspace of it; UsageError otherwise."""
    if not _KEYSPACE.match(name):
        raise UsageError(f"{option}: '{name}' is not a keyspace name (valid: 1 to 48 "
                         "letters, digits or _)")
    return name


NATIVE_PORT = 9042
# A host name or IPv4 address; an IPv6 address goes in brackets ([::1]:9042).
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$")


def parse_contact_points(text: str, option: str = "--hosts") -> list[tuple[str, int]]:
    """`h1[:port],h2,...` -> [(host, port)] (port 9042 when not given); UsageError naming
    the option and the contact point that is not one."""
    items = [h.strip() for h in text.split(",")]
    if not any(items):
        raise UsageError(f"{option}: {text!r} names no contact point (valid: "
                         "host[:port],... e.g. 10.0.0.5,10.0.0.6:9042)")
    points = []
    for item in items:
        if not item:
            raise UsageError(f"{option}: {text!r} has an empty contact point between commas")
        host, port = item, str(NATIVE_PORT)
        if ":" in item and not item.endswith("]"):
            host, _, port = item.rpartition(":")
        if not _HOST.match(host):
            raise UsageError(f"{option}: '{host}' is not a host name or address")
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            raise UsageError(f"{option}: port '{port}' of '{item}' is not a port "
                             "(valid: 1..65535)")
        points.append((host, int(port)))
    return points


# The worker connects with 15 s connect and control-connection timeouts.
READY_TIMEOUT_S = 60.0
# Added to a statement's own timeout before the worker counts as hung.
RESPONSE_MARGIN_S = 15.0


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

    def __init__(self, contacts: list[str], *, netns: str | None,
                 worker: list[str] | None = None,
                 ready_timeout_s: float = READY_TIMEOUT_S,
                 response_margin_s: float = RESPONSE_MARGIN_S) -> None:
        """`worker`: the worker command (default: this Python's cql_worker module)."""
        self._contacts = contacts
        self._netns = netns
        self._worker = worker or [sys.executable, "-m", "casslab.cassandra.cql_worker"]
        self._ready_timeout_s = ready_timeout_s
        self._response_margin_s = response_margin_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._buffer = b""

    def __enter__(self) -> CqlClient:
        prefix = exec_prefix(self._netns)
        cmd = [*prefix, *self._worker, "--contact", ",".join(self._contacts)]
        # A file, not a pipe: the driver may log a lot and a full pipe would block the
        # worker; its tail goes into the error when the worker dies or hangs.
        self._stderr = tempfile.TemporaryFile(prefix="casslab-cql-worker-")
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr)
        self._buffer = b""
        try:
            first = self._read(self._ready_timeout_s)
        except CqlError:
            self.close()
            raise
        if "error" in first:
            self.close()
            err = first["error"]
            raise CqlError(err["kind"], f"cannot connect to {','.join(self._contacts)}: "
                           f"{err['message']}")
        return self

    def __exit__(self, *_exc: object) -> None:
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
        try:
            self._proc.stdin.write((json.dumps(req) + "\n").encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass  # the worker died: _read reports how, with its stderr
        # The driver gives up after timeout_s; the margin covers the worker's own work.
        resp = self._read(timeout_s + self._response_margin_s)
        if "error" in resp:
            raise CqlError(resp["error"]["kind"], resp["error"]["message"])
        return CqlResult(resp["columns"], resp["rows"])

    def _read(self, timeout_s: float) -> dict[str, Any]:
        """The worker's next JSON line; CqlError (with its stderr tail) when it exits or
        says nothing for `timeout_s` (then it is killed: a late answer would be read as
        the answer to the next request)."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0.0))
            if not ready:
                self._kill()
                raise CqlError("WorkerTimeout", f"CQL worker gave no answer within "
                               f"{timeout_s:g} s{self._stderr_tail()}")
            chunk = os.read(fd, 65536)
            if not chunk:
                code = self._proc.wait()
                raise CqlError("WorkerExited", f"CQL worker exited with code {code}"
                               f"{self._stderr_tail()}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)  # type: ignore[no-any-return]

    def _stderr_tail(self) -> str:
        """`: <last stderr lines>` of the worker, or nothing when it wrote none."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return f": {' | '.join(lines[-3:])}" if lines else ""

    def _kill(self) -> None:
        assert self._proc is not None
        self._proc.kill()
        self._proc.wait()

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.stdin:
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._kill()
        if self._proc.stdout:
            self._proc.stdout.close()
        self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


# Each node's own view of gossip: who it sees, in which state (NORMAL when joined).
GOSSIP_QUERY = "SELECT address, status_with_port, status, load FROM system_views.gossip_info"


def gossip_status(row: list[object]) -> str:
    """The STATUS of a GOSSIP_QUERY row (`NORMAL,...`; empty when not known yet)."""
    return str(row[1] or row[2] or "")


def gossip_table(cql: CqlClient) -> dict[str, tuple[str, float | None]]:
    """address -> (STATUS, load in MiB or None) as the connected node's gossip says.
    Peers gossip STATUS_WITH_PORT only; a node's own row also has the legacy STATUS."""
    def mib(load: object) -> float | None:
        try:
            return float(str(load)) / (1024 * 1024)
        except (TypeError, ValueError):
            return None

    return {str(r[0]): (gossip_status(r), mib(r[3])) for r in cql.execute(GOSSIP_QUERY).rows}


def status_code(up: bool, status: str) -> str:
    """nodetool's two letters: U/D (the process runs), then N/J/L from gossip's STATUS
    (`?` for a running node gossip has not described yet)."""
    phase = {"NORMAL": "N", "BOOT": "J", "LEAVING": "L", "LEFT": "L"}.get(
        status.split(",")[0], "N" if not up else "?")
    return ("U" if up else "D") + phase


def gossip_views(cql: CqlClient, addresses: list[str]) -> dict[str, dict[str, str]]:
    """For each node of `addresses`: the gossip status it holds for every endpoint."""
    return {addr: {str(r[0]): gossip_status(r)
                   for r in cql.execute(GOSSIP_QUERY, host=addr).rows}
            for addr in addresses}
