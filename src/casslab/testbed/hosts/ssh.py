"""One SSH connection per host, commands and files to all of them at once (asyncssh).

A campaign on real hosts starts, samples and stops every node in parallel, so the driver
holds one connection per host for the whole run and multiplexes channels over it. Every
failure names its host: `pi2 (10.0.0.12): permission denied for root with key ~/.ssh/lab`.

    async with Fleet(inventory.hosts, known_hosts=...) as fleet:
        results = await fleet.run("uname -r")          # {host name: Result}
        await fleet.push(Path("casslab-load"), "bin/casslab-load")
"""

from __future__ import annotations

import asyncio
import hashlib
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from casslab.core.errors import CasslabError, require_extra
from casslab.testbed.hosts.inventory import Host

if TYPE_CHECKING:
    import asyncssh

CONNECT_TIMEOUT_S = 10.0


class HostError(CasslabError):
    """A host could not be reached, refused us, or a command on it failed."""


@dataclass(frozen=True)
class Result:
    host: str
    exit_status: int
    stdout: str
    stderr: str


def _where(host: Host) -> str:
    return f"{host.name} ({host.address}:{host.port})" if host.port != 22 else \
        f"{host.name} ({host.address})"


class Fleet:
    """Connections to `hosts`, opened together on enter and closed together on exit."""

    def __init__(self, hosts: Iterable[Host], *, known_hosts: Path | None = None,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        self.hosts = tuple(hosts)
        self.known_hosts = known_hosts
        self.connect_timeout_s = connect_timeout_s
        self._conns: dict[str, asyncssh.SSHClientConnection] = {}

    async def __aenter__(self) -> Fleet:
        opened = await asyncio.gather(*(self._connect(h) for h in self.hosts),
                                      return_exceptions=True)
        failures = [r for r in opened if isinstance(r, BaseException)]
        if failures:
            await self.close()
            raise failures[0]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        conns, self._conns = self._conns, {}
        for conn in conns.values():
            conn.close()
        await asyncio.gather(*(c.wait_closed() for c in conns.values()),
                             return_exceptions=True)

    async def _connect(self, host: Host) -> None:
        require_extra("asyncssh", "hosts", "connecting to real hosts")
        import asyncssh  # heavy (cryptography): only runs against real hosts pay for it

        keys = [str(host.key_file)] if host.key_file else ()
        try:
            conn = await asyncio.wait_for(asyncssh.connect(
                host.address, port=host.port, username=host.user, client_keys=keys or None,
                known_hosts=str(self.known_hosts) if self.known_hosts else (),
                agent_path=None, password=None), self.connect_timeout_s)
        except TimeoutError:
            raise HostError(f"{_where(host)}: no answer on SSH within "
                            f"{self.connect_timeout_s:g} s (is the host up and the address "
                            "right?)") from None
        except asyncssh.PermissionDenied:
            key = f"key {host.key_file}" if host.key_file else "the default keys"
            raise HostError(f"{_where(host)}: permission denied for {host.user} with "
                            f"{key}") from None
        except asyncssh.HostKeyNotVerifiable as exc:
            raise HostError(f"{_where(host)}: host key not trusted ({exc.reason}); add it "
                            f"to {self.known_hosts}") from None
        except (OSError, asyncssh.Error) as exc:
            reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
            raise HostError(f"{_where(host)}: cannot connect over SSH: {reason}") from None
        self._conns[host.name] = conn

    def _conn(self, host: Host) -> asyncssh.SSHClientConnection:
        conn = self._conns.get(host.name)
        if conn is None:
            raise HostError(f"{_where(host)}: not connected (use `async with Fleet(...)`)")
        return conn

    async def run_on(self, host: Host, command: str, *, check: bool = True,
                     timeout_s: float = 120.0) -> Result:
        """`command` through the host's login shell; HostError on a non-zero exit when
        `check`, with the last line of its stderr."""
        try:
            proc = await asyncio.wait_for(self._conn(host).run(command, check=False),
                                          timeout_s)
        except TimeoutError:
            raise HostError(f"{_where(host)}: `{command}` did not end within "
                            f"{timeout_s:g} s") from None
        result = Result(host.name, proc.exit_status if proc.exit_status is not None else -1,
                        _text(proc.stdout), _text(proc.stderr))
        if check and result.exit_status != 0:
            last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise HostError(f"{_where(host)}: `{command}` exited {result.exit_status}: {last}")
        return result

    async def open_process(self, host: Host, command: str) -> asyncssh.SSHClientProcess[str]:
        """`command` on `host` on one channel of its connection, its stdin and stdout
        left open as text streams for the caller (a sampler that prints as it goes)."""
        import asyncssh

        try:
            proc: asyncssh.SSHClientProcess[str] = await self._conn(host).create_process(
                command, encoding="utf-8", errors="replace")
        except (OSError, asyncssh.Error) as exc:
            raise HostError(f"{_where(host)}: cannot start `{command[:60]}`: {exc}") from None
        return proc

    async def run(self, command: str, *, hosts: Iterable[Host] | None = None,
                  check: bool = True, timeout_s: float = 120.0) -> dict[str, Result]:
        """`command` on every host (or `hosts`) at once."""
        chosen = tuple(hosts) if hosts is not None else self.hosts
        results = await asyncio.gather(*(self.run_on(h, command, check=check,
                                                     timeout_s=timeout_s) for h in chosen))
        return {r.host: r for r in results}

    async def push(self, local: Path, remote: str, *, hosts: Iterable[Host] | None = None,
                   mode: int | None = None) -> None:
        """Copy `local` to `remote` on every host (or `hosts`) at once, with SFTP, and
        check each copy's SHA-256 against the local file's."""
        chosen = tuple(hosts) if hosts is not None else self.hosts
        digest = hashlib.sha256(local.read_bytes()).hexdigest()
        await asyncio.gather(*(self._push_one(h, local, remote, digest, mode) for h in chosen))

    async def fetch(self, host: Host, remote: str, local: Path) -> None:
        """Copy `remote` from `host` to `local` with SFTP; HostError naming the host and
        the file when it cannot be read."""
        import asyncssh

        try:
            async with self._conn(host).start_sftp_client() as sftp:
                await sftp.get(remote, str(local))
        except (OSError, asyncssh.Error) as exc:
            reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
            raise HostError(f"{_where(host)}: cannot copy {remote}: {reason}") from None

    async def _push_one(self, host: Host, local: Path, remote: str, digest: str,
                        mode: int | None) -> None:
        parent = str(Path(remote).parent)
        await self.run_on(host, f"mkdir -p {shlex.quote(parent)}")
        async with self._conn(host).start_sftp_client() as sftp:
            await sftp.put(str(local), remote)
            if mode is not None:
                await sftp.chmod(remote, mode)
        got = (await self.run_on(host, f"sha256sum {shlex.quote(remote)}")).stdout.split()[:1]
        if got != [digest]:
            raise HostError(f"{_where(host)}: copy of {local.name} to {remote} is corrupt "
                            f"(sha256 {got[0] if got else 'missing'}, expected {digest})")


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value) if value is not None else ""
