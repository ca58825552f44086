"""Sampling what the nodes and the machine do during a trial, in a background thread.

OS side, per node JVM: CPU from /proc/<pid>/stat (utime, stime), disk bytes from
/proc/<pid>/io (read_bytes / write_bytes: what reached the block layer), RSS from
/proc/<pid>/status, data size as `du` of the node's data directory, and SSTables as
the *-Data.db files per table directory. Machine: /proc/stat and /proc/diskstats.
Burstable nodes: the CPU credit balance the lab's credit controller last wrote.
Cassandra side, per node over CQL (host=...): running compactions
(system_views.sstable_tasks), pending ones (thread_pools CompactionExecutor) and
coordinator read/write rates and latencies per table, and the compactions completed
since the trial started (system.compaction_history).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from casslab.cassandra.cql import Cql
from casslab.core.errors import CasslabError
from casslab.hardware.credits import read_balance_file
from casslab.metrics.samples import (
    CompactionSample,
    HostSample,
    NodeSample,
    SstableSample,
    TableSample,
    TrialMetrics,
)

CLK_TCK = os.sysconf("SC_CLK_TCK")
SYSTEM_KEYSPACES = {"system", "system_schema", "system_auth", "system_distributed",
                    "system_traces", "system_views", "system_virtual_schema"}
_SKIP_DISKS = re.compile(r"^(loop|ram|zram|dm-|md|sr|fd|nbd)")


@dataclass(frozen=True)
class NodeTarget:
    name: str
    pid: int
    address: str
    data_dir: Path
    # The lab's CPU credit balance file (profiles.credits); None: no burstable nodes.
    credits_file: Path | None = None


@dataclass(frozen=True)
class ProcCounters:
    cpu_user_s: float
    cpu_sys_s: float
    read_bytes: int
    write_bytes: int
    rss_mib: float


def read_proc(pid: int) -> ProcCounters | None:
    """A process's CPU seconds, disk bytes and RSS; None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        io = Path(f"/proc/{pid}/io").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return parse_proc(stat, io, status)


def parse_proc(stat: str, io: str, status: str, clk_tck: int = CLK_TCK) -> ProcCounters:
    """ProcCounters from the texts of /proc/PID/stat, io and status (pure; `clk_tck` is
    the jiffies per second of the machine they come from)."""
    fields = stat.rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime is field 14, stime field 15.
    utime, stime = int(fields[11]), int(fields[12])
    iod = dict(line.split(":", 1) for line in io.splitlines() if ":" in line)
    rss = re.search(r"^VmRSS:\s+(\d+)\s+kB", status, re.M)
    return ProcCounters(utime / clk_tck, stime / clk_tck, int(iod.get("read_bytes", 0)),
                        int(iod.get("write_bytes", 0)), int(rss.group(1)) / 1024 if rss else 0.0)


HostCpu = tuple[float, float, float, float]


def read_host_cpu() -> HostCpu:
    """(user, system, iowait, total) jiffies of /proc/stat's first line."""
    return parse_host_cpu(Path("/proc/stat").read_text())


def parse_host_cpu(proc_stat: str) -> HostCpu:
    """(user, system, iowait, total) jiffies of a /proc/stat text's first line (pure)."""
    parts = proc_stat.splitlines()[0].split()[1:]
    v = [float(x) for x in parts[:8]]
    user, nice, system, _idle, iowait, irq, softirq, _steal = (v + [0.0] * 8)[:8]
    return user + nice, system + irq + softirq, iowait, sum(v)


def read_host_disk() -> tuple[int, int]:
    """Sectors (512 B) read and written by the whole disks of this machine."""
    return parse_diskstats(Path("/proc/diskstats").read_text(),
                           lambda name: Path(f"/sys/block/{name}").exists())


def parse_diskstats(text: str, is_disk: Callable[[str], bool]) -> tuple[int, int]:
    """Sectors read and written in a /proc/diskstats text by the devices `is_disk`
    accepts (whole disks: /sys/block/NAME exists) and that are not virtual (pure)."""
    rd = wr = 0
    for line in text.splitlines():
        f = line.split()
        if len(f) < 10 or _SKIP_DISKS.match(f[2]) or not is_disk(f[2]):
            continue
        rd += int(f[5])
        wr += int(f[9])
    return rd, wr


def parse_net_dev(text: str, interface: str) -> tuple[int, int] | None:
    """(received, sent) bytes of `interface` in a /proc/net/dev text; None when it is
    not there (pure)."""
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if sep and name.strip() == interface:
            f = rest.split()
            return int(f[0]), int(f[8])
    return None


def keep_final_interval(dt: float, interval_s: float, has_samples: bool) -> bool:
    """Whether the last, shorter interval of a stopped sampler becomes a sample: only
    when the trial has none yet, since rates over a few milliseconds are noise."""
    return not (dt < 0.05 or (dt < 0.5 * interval_s and has_samples))


def node_sample(t_s: float, name: str, old: ProcCounters, cur: ProcCounters, dt: float,
                data_mib: float | None, compactions: tuple[int | None, int | None] = (None, None),
                credits: float | None = None) -> NodeSample:
    """A node's rates over `dt` seconds between two readings of its process (pure)."""
    return NodeSample(t_s, name, 100 * (cur.cpu_user_s - old.cpu_user_s) / dt,
                      100 * (cur.cpu_sys_s - old.cpu_sys_s) / dt,
                      (cur.read_bytes - old.read_bytes) / 1024 / dt,
                      (cur.write_bytes - old.write_bytes) / 1024 / dt, cur.rss_mib,
                      data_mib, compactions[0], compactions[1], credits)


def host_sample(t_s: float, old_cpu: HostCpu, cpu: HostCpu, old_disk: tuple[int, int],
                disk: tuple[int, int], dt: float) -> HostSample:
    """A machine's CPU shares and disk rates over `dt` seconds between two readings (pure)."""
    total = max(cpu[3] - old_cpu[3], 1e-9)
    return HostSample(t_s, 100 * (cpu[0] - old_cpu[0]) / total,
                      100 * (cpu[1] - old_cpu[1]) / total, 100 * (cpu[2] - old_cpu[2]) / total,
                      (disk[0] - old_disk[0]) / 2 / dt, (disk[1] - old_disk[1]) / 2 / dt)


def du_mib(path: Path) -> float | None:
    """Allocated size of a directory tree in MiB (like du), None when missing."""
    if not path.exists():
        return None
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                continue  # a compaction removed it between listing and stat
    return total / (1024 * 1024)


def sstable_counts(data_dir: Path) -> dict[tuple[str, str], int]:
    """(keyspace, table) -> live SSTables (*-Data.db files) of the user keyspaces."""
    found: dict[tuple[str, str], int] = {}
    if not data_dir.exists():
        return found
    for ks in data_dir.iterdir():
        if ks.name in SYSTEM_KEYSPACES or not ks.is_dir():
            continue
        for tdir in ks.iterdir():
            if tdir.is_dir():
                found[(ks.name, tdir.name)] = len(list(tdir.glob("*-Data.db")))
    return by_table(found)


def by_table(dir_counts: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """(keyspace, table) -> count from (keyspace, table directory) -> count: the user
    keyspaces only, the table's id suffix dropped (pure)."""
    return {(ks, tdir.rsplit("-", 1)[0]): n for (ks, tdir), n in dir_counts.items()
            if ks not in SYSTEM_KEYSPACES}


def _credits(n: NodeTarget) -> float | None:
    if n.credits_file is None:
        return None
    row = read_balance_file(n.credits_file).get(n.name)
    return None if row is None else row.credits


class Sampler:
    """Samples every `interval_s` from start() to stop() in a daemon thread."""

    def __init__(self, nodes: list[NodeTarget], *, interval_s: float = 1.0,
                 cql: Callable[[], AbstractContextManager[Cql]] | None = None) -> None:
        self.nodes = nodes
        self.interval_s = interval_s
        self.cql_factory = cql
        self.metrics = TrialMetrics()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="casslab-sampler", daemon=True)
        self._t0 = 0.0
        self._t0_epoch_ms = 0.0
        self._base: tuple[dict[str, ProcCounters | None], HostCpu,
                          tuple[int, int], float] = ({}, (0.0, 0.0, 0.0, 0.0), (0, 0), 0.0)

    def start(self) -> None:
        # Baselines now, so the first interval counts from the trial's start even while
        # the thread is still connecting over CQL.
        self._t0 = time.monotonic()
        self._t0_epoch_ms = time.time() * 1000
        self._base = ({n.name: read_proc(n.pid) for n in self.nodes}, read_host_cpu(),
                      read_host_disk(), self._t0)
        self._thread.start()

    def stop(self) -> TrialMetrics:
        self._stop.set()
        self._thread.join(timeout=30.0)
        return self.metrics

    def _run(self) -> None:
        try:
            if self.cql_factory:
                try:
                    with self.cql_factory() as cql:
                        self._loop(cql)
                    return
                except CasslabError as exc:
                    self.metrics.errors.append(f"CQL metrics off: {exc}")
            self._loop(None)
        except Exception as exc:  # a sampler bug must not kill the trial; it is recorded
            self.metrics.errors.append(f"sampler stopped: {type(exc).__name__}: {exc}")

    def _loop(self, cql: Cql | None) -> None:
        prev_nodes, prev_cpu, prev_disk, prev_t = self._base
        side = CqlSide(self.metrics, self._t0_epoch_ms)
        while True:
            # One last sample when stopped, so even a trial shorter than the interval has one.
            stopped = self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - prev_t)))
            now = time.monotonic()
            dt = now - prev_t
            if stopped and not keep_final_interval(dt, self.interval_s,
                                                   bool(self.metrics.host)):
                break
            t_s = round(now - self._t0, 3)
            for n in self.nodes:
                cur = read_proc(n.pid)
                old = prev_nodes.get(n.name)
                prev_nodes[n.name] = cur
                if cur is None or old is None:
                    continue
                compactions = side.compactions(cql, n.name, n.address) if cql else (None, None)
                self.metrics.nodes.append(node_sample(t_s, n.name, old, cur, dt,
                                                      du_mib(n.data_dir), compactions,
                                                      _credits(n)))
                for (ks, table), count in sstable_counts(n.data_dir).items():
                    self.metrics.sstables.append(SstableSample(t_s, n.name, ks, table, count))
                if cql:
                    side.tables(cql, n.name, n.address, t_s)
                    side.completed(cql, n.name, n.address, t_s)
            cpu, disk = read_host_cpu(), read_host_disk()
            self.metrics.host.append(host_sample(t_s, prev_cpu, cpu, prev_disk, disk, dt))
            prev_cpu, prev_disk, prev_t = cpu, disk, now
            if stopped:
                break


class CqlSide:
    """Cassandra's side of each node over CQL (host=its address), appended to `metrics`:
    coordinator latencies per table, compactions completed since `since_epoch_ms`; the
    running and pending compactions are returned for the node's sample. Errors are
    noted (at most 20), never raised: CQL trouble must not end a trial."""

    def __init__(self, metrics: TrialMetrics, since_epoch_ms: float) -> None:
        self.metrics = metrics
        self.since_epoch_ms = since_epoch_ms

    def compactions(self, cql: Cql, name: str, address: str) -> tuple[int | None, int | None]:
        try:
            active = len(cql.execute("SELECT kind FROM system_views.sstable_tasks",
                                     host=address, timeout_s=2.0).rows)
            rows = cql.execute("SELECT pending_tasks FROM system_views.thread_pools WHERE "
                               "name = 'CompactionExecutor'", host=address,
                               timeout_s=2.0).rows
            pending = int(rows[0][0]) if rows else 0
            return active, pending
        except CasslabError as exc:
            self.note(f"{name}: compactions: {exc}")
            return None, None

    def completed(self, cql: Cql, name: str, address: str, t_s: float) -> None:
        # compaction_history is local to each node and keyed by id: counted here, not
        # filtered in CQL (a range on compacted_at would need ALLOW FILTERING anyway).
        try:
            rows = cql.execute("SELECT toUnixTimestamp(compacted_at) FROM "
                               "system.compaction_history", host=address,
                               timeout_s=2.0).rows
        except CasslabError as exc:
            self.note(f"{name}: compaction_history: {exc}")
            return
        done = sum(1 for (at,) in rows if at is not None and int(at) >= self.since_epoch_ms)
        self.metrics.compactions.append(CompactionSample(t_s, name, done))

    def tables(self, cql: Cql, name: str, address: str, t_s: float) -> None:
        for kind in ("read", "write"):
            try:
                rows = cql.execute(f"SELECT keyspace_name, table_name, count, per_second, "
                                   f"p50th_ms, p99th_ms FROM system_views.coordinator_{kind}"
                                   "_latency", host=address, timeout_s=2.0).rows
            except CasslabError as exc:
                self.note(f"{name}: coordinator_{kind}_latency: {exc}")
                continue
            for ks, table, count, per_s, p50, p99 in rows:
                if ks in SYSTEM_KEYSPACES:
                    continue
                self.metrics.tables.append(TableSample(
                    t_s, name, str(ks), str(table), kind, int(count or 0),
                    float(per_s or 0.0), float(p50 or 0.0), float(p99 or 0.0)))

    def note(self, message: str) -> None:
        if len(self.metrics.errors) < 20:
            self.metrics.errors.append(message)
