"""Raw /proc readings of a host, taken on the host by a small python3 loop over ONE SSH
channel per host for the whole trial.

The loop prints one JSON line at once (the baseline), then one per interval, and a last
one when its stdin closes; each line holds the texts of /proc/stat, /proc/diskstats,
/proc/loadavg, the data interface's /proc/net/dev line and, per node, its process's
/proc/PID/stat, io and RSS line, the data directory's allocated bytes and its
*-Data.db files per table directory. Turning them into samples is the metrics parsers'
job (casslab.testbed.hosts.trialmetrics joins the two): this module only carries texts.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from casslab.core.errors import CasslabError
from casslab.testbed.hosts.inventory import Host
from casslab.testbed.hosts.ssh import Fleet, HostError

if TYPE_CHECKING:
    import asyncssh

# Runs on the host (python3, which Ansible needs there anyway). Stdlib only; argv[1] is
# {"interval_s": s, "interface": name, "nodes": [{"name", "pid", "data_dir"}]}.
REMOTE_LOOP = r'''
import json, os, select, sys, time
cfg = json.loads(sys.argv[1])
def rd(p):
    try:
        with open(p) as f:
            return f.read()
    except OSError:
        return None
def walk(d):
    if not os.path.isdir(d):
        return None, {}
    total, tables = 0, {}
    for root, _dirs, files in os.walk(d):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
        rel = os.path.relpath(root, d).split(os.sep)
        if len(rel) == 2:
            tables["/".join(rel)] = sum(1 for f in files if f.endswith("-Data.db"))
    return total, tables
def node(n):
    p = "/proc/%d/" % n["pid"]
    st, io, status = rd(p + "stat"), rd(p + "io"), rd(p + "status")
    if st is None or io is None or status is None:
        return None
    du, tables = walk(n["data_dir"])
    rss = "\n".join(l for l in status.splitlines() if l.startswith("VmRSS:"))
    return {"stat": st, "io": io, "status": rss, "du": du, "tables": tables}
def reading():
    net = [l for l in (rd("/proc/net/dev") or "").splitlines()
           if l.partition(":")[0].strip() == cfg["interface"]]
    return {"t": time.monotonic(), "clk_tck": os.sysconf("SC_CLK_TCK"),
            "stat": (rd("/proc/stat") or "cpu").splitlines()[0],
            "diskstats": rd("/proc/diskstats") or "", "disks": os.listdir("/sys/block"),
            "net": net[0] if net else None, "load": rd("/proc/loadavg") or "0",
            "nodes": {n["name"]: node(n) for n in cfg["nodes"]}}
def emit():
    sys.stdout.write(json.dumps(reading()) + "\n")
    sys.stdout.flush()
emit()
due = time.monotonic() + cfg["interval_s"]
while True:
    ready = select.select([sys.stdin], [], [], max(0.0, due - time.monotonic()))[0]
    emit()
    if ready:
        break
    due = max(due + cfg["interval_s"], time.monotonic())
'''


@dataclass(frozen=True)
class SamplerTarget:
    """One node process on a host, as the remote loop reads it."""

    name: str
    pid: int
    data_dir: str


@dataclass(frozen=True)
class RawNode:
    stat: str
    io: str
    status: str  # the VmRSS line of /proc/PID/status
    du_bytes: int | None  # None: no data directory yet
    table_dirs: dict[tuple[str, str], int]  # (keyspace, table dir) -> *-Data.db files


@dataclass(frozen=True)
class RawReading:
    """One line of a host's remote loop: texts of /proc, and its monotonic clock."""

    host: str
    t: float
    clk_tck: int
    proc_stat: str
    diskstats: str
    disks: frozenset[str]
    net_dev: str | None  # the data interface's line of /proc/net/dev
    loadavg: str
    nodes: dict[str, RawNode | None]  # None: the process is gone


def sampler_command(targets: list[SamplerTarget], interface: str, interval_s: float) -> str:
    """The shell line that runs the remote loop for `targets` on their host."""
    cfg = {"interval_s": interval_s, "interface": interface,
           "nodes": [{"name": t.name, "pid": t.pid, "data_dir": t.data_dir} for t in targets]}
    return f"exec python3 -u -c {shlex.quote(REMOTE_LOOP)} {shlex.quote(json.dumps(cfg))}"


def parse_line(host: str, line: str) -> RawReading:
    """A RawReading from one line of the remote loop (pure); CasslabError naming the
    host for a line that is not one."""
    try:
        raw: dict[str, Any] = json.loads(line)
        return RawReading(
            host=host, t=float(raw["t"]), clk_tck=int(raw["clk_tck"]),
            proc_stat=str(raw["stat"]), diskstats=str(raw["diskstats"]),
            disks=frozenset(raw["disks"]), net_dev=raw.get("net"), loadavg=str(raw["load"]),
            nodes={name: None if n is None else _node(n) for name, n in raw["nodes"].items()})
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CasslabError(f"{host}: sampler line is not a reading ({exc}): "
                           f"{line[:120]!r}") from None


def _node(n: dict[str, Any]) -> RawNode:
    tables: dict[tuple[str, str], int] = {}
    for rel, count in n["tables"].items():
        ks, _, tdir = str(rel).partition("/")
        tables[(ks, tdir)] = int(count)
    return RawNode(str(n["stat"]), str(n["io"]), str(n["status"]),
                   None if n["du"] is None else int(n["du"]), tables)


class HostStream:
    """A host's remote loop: its readings as they come, and a stop that takes the last."""

    def __init__(self, host: Host, process: asyncssh.SSHClientProcess[str]) -> None:
        self.host = host
        self.process = process

    async def read(self) -> RawReading | None:
        """The next reading; None once the loop has ended."""
        line = await self.process.stdout.readline()
        if not line:
            return None
        return parse_line(self.host.name, line)

    def stop(self) -> None:
        """Ask for the last reading: the loop takes one more and ends."""
        self.process.stdin.write_eof()

    async def close(self, timeout_s: float = 10.0) -> str:
        """Wait for the loop's end (HostError after `timeout_s`); its stderr."""
        import asyncio

        try:
            await asyncio.wait_for(self.process.wait_closed(), timeout_s)
        except TimeoutError:
            self.process.close()
            raise HostError(f"{self.host.name}: the sampler did not end within "
                            f"{timeout_s:g} s") from None
        return str(await self.process.stderr.read())


async def open_stream(fleet: Fleet, host: Host, targets: list[SamplerTarget],
                      interval_s: float) -> HostStream:
    """Start the remote loop on `host` for its `targets` (one channel)."""
    command = sampler_command(targets, host.data_interface, interval_s)
    return HostStream(host, await fleet.open_process(host, command))
