"""Sampling nodes on real hosts: one remote sampler per host over SSH, its raw /proc
readings turned into the local sampler's TrialMetrics.

    sampling = await trialmetrics.start(fleet, started, interval_s=1.0)
    await asyncio.to_thread(run_the_load)        # the event loop keeps reading meanwhile
    metrics = await sampling.stop()

The readings come from casslab.testbed.hosts.sampling and become samples through the same
functions the local sampler uses (metrics.sampler: parse_proc, node_sample, host_sample,
...), so a node's CPU, disk and RSS mean the same on a host as in the local lab. Times
are the host's own clock from its first reading. Given a CQL client factory, Cassandra's
side (compactions, coordinator latencies per table) is read from here as the local
sampler reads it (metrics.sampler.CqlSide), in a thread of its own.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from casslab.cassandra.cql import Cql
from casslab.core.errors import CasslabError
from casslab.metrics.sampler import (
    CqlSide,
    HostCpu,
    by_table,
    host_sample,
    keep_final_interval,
    node_sample,
    parse_diskstats,
    parse_host_cpu,
    parse_net_dev,
    parse_proc,
)
from casslab.metrics.samples import HostLoadSample, HostSample, SstableSample, TrialMetrics
from casslab.testbed.hosts.cluster import Started
from casslab.testbed.hosts.sampling import HostStream, RawReading, SamplerTarget, open_stream
from casslab.testbed.hosts.ssh import Fleet

MIB = 1024 * 1024


@dataclass
class HostSeries:
    """The samples of one host's readings, each against the one before (pure)."""

    host: str
    interval_s: float
    metrics: TrialMetrics = field(default_factory=TrialMetrics)
    # Node -> (running, pending) compactions as CQL last said (see CqlPoller).
    compactions: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    _first: RawReading | None = field(default=None, init=False, repr=False)
    _prev: RawReading | None = field(default=None, init=False, repr=False)

    def add(self, cur: RawReading, *, final: bool = False) -> None:
        """Samples from `cur` against the previous reading; the first is the baseline.
        `final`: the loop's last, possibly shorter, interval (kept as the local
        sampler keeps it)."""
        prev = self._prev
        if prev is None or self._first is None:
            self._first = self._prev = cur
            return
        dt = cur.t - prev.t
        if dt <= 0 or (final and not keep_final_interval(dt, self.interval_s,
                                                          bool(self.metrics.hosts))):
            return
        t_s = round(cur.t - self._first.t, 3)
        self._nodes(prev, cur, dt, t_s)
        self._host(prev, cur, dt, t_s)
        self._prev = cur

    def _nodes(self, prev: RawReading, cur: RawReading, dt: float, t_s: float) -> None:
        for name, node in cur.nodes.items():
            old = prev.nodes.get(name)
            if node is None or old is None:
                continue  # not running at one of the two readings: no rate
            a = parse_proc(old.stat, old.io, old.status, cur.clk_tck)
            b = parse_proc(node.stat, node.io, node.status, cur.clk_tck)
            data_mib = None if node.du_bytes is None else node.du_bytes / MIB
            self.metrics.nodes.append(node_sample(t_s, name, a, b, dt, data_mib,
                                                  self.compactions.get(name, (None, None))))
            for (ks, table), count in by_table(node.table_dirs).items():
                self.metrics.sstables.append(SstableSample(t_s, name, ks, table, count))

    def _host(self, prev: RawReading, cur: RawReading, dt: float, t_s: float) -> None:
        h = host_sample(t_s, _cpu(prev), _cpu(cur), _disk(prev), _disk(cur), dt)
        old_net, net = _net(prev), _net(cur)
        rx = tx = None
        if old_net is not None and net is not None:
            rx, tx = (net[0] - old_net[0]) / 1024 / dt, (net[1] - old_net[1]) / 1024 / dt
        self.metrics.hosts.append(HostLoadSample(
            t_s, cur.host, h.cpu_user_pct, h.cpu_sys_pct, h.cpu_iowait_pct, h.read_kb_s,
            h.write_kb_s, rx, tx, float(cur.loadavg.split()[0])))


def _cpu(r: RawReading) -> HostCpu:
    return parse_host_cpu(r.proc_stat)


def _disk(r: RawReading) -> tuple[int, int]:
    return parse_diskstats(r.diskstats, r.disks.__contains__)


def _net(r: RawReading) -> tuple[int, int] | None:
    return None if r.net_dev is None else parse_net_dev(r.net_dev, r.net_dev.partition(
        ":")[0].strip())


def combine(series: Sequence[HostSeries], cql: TrialMetrics | None = None) -> TrialMetrics:
    """One TrialMetrics from every host's: their node samples side by side, and as
    `host` the node hosts together, interval by interval: mean CPU shares, summed disk
    rates; `cql`'s tables, compactions and errors beside them (pure)."""
    out = TrialMetrics()
    if cql is not None:
        out.tables, out.compactions = list(cql.tables), list(cql.compactions)
        out.errors += cql.errors
    for s in series:
        out.nodes += s.metrics.nodes
        out.sstables += s.metrics.sstables
        out.hosts += s.metrics.hosts
        out.errors += s.metrics.errors
    per_host = [s.metrics.hosts for s in series if s.metrics.hosts]
    for row in zip(*per_host, strict=False):
        n = len(row)
        out.host.append(HostSample(
            round(sum(r.t_s for r in row) / n, 3), sum(r.cpu_user_pct for r in row) / n,
            sum(r.cpu_sys_pct for r in row) / n, sum(r.cpu_iowait_pct for r in row) / n,
            sum(r.read_kb_s for r in row), sum(r.write_kb_s for r in row)))
    out.nodes.sort(key=lambda s: (s.t_s, s.node))
    return out


class CqlPoller:
    """Cassandra's side of every node over CQL each interval, in a thread: the client
    blocks, and the event loop reading the hosts must not wait for it."""

    def __init__(self, factory: Callable[[], AbstractContextManager[Cql]],
                 nodes: list[tuple[str, str]], interval_s: float) -> None:
        self.metrics = TrialMetrics()
        self.latest: dict[str, tuple[int | None, int | None]] = {}
        self._factory, self._nodes, self._interval_s = factory, nodes, interval_s
        self._side = CqlSide(self.metrics, time.time() * 1000)
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="casslab-host-cql",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self._factory() as cql:
                while True:
                    # One last poll when stopped, as the local sampler takes one.
                    stopped = self._stop.wait(self._interval_s)
                    t_s = round(time.monotonic() - self._t0, 3)
                    for name, address in self._nodes:
                        self.latest[name] = self._side.compactions(cql, name, address)
                        self._side.tables(cql, name, address, t_s)
                        self._side.completed(cql, name, address, t_s)
                    if stopped:
                        return
        except CasslabError as exc:
            self.metrics.errors.append(f"CQL metrics off: {exc}")
        except Exception as exc:  # a sampler bug must not kill the trial; it is recorded
            self.metrics.errors.append(f"CQL sampler stopped: {type(exc).__name__}: {exc}")

    def stop(self) -> TrialMetrics:
        self._stop.set()
        self._thread.join(timeout=30.0)
        return self.metrics


class HostSampling:
    """Every host's remote sampler, read in the background until `stop`."""

    def __init__(self, streams: list[HostStream], interval_s: float,
                 cql: CqlPoller | None = None) -> None:
        latest = cql.latest if cql is not None else {}
        self.series = [HostSeries(s.host.name, interval_s, compactions=latest)
                       for s in streams]
        self._cql = cql
        self._streams = streams
        self._tasks = [asyncio.create_task(self._follow(st, se))
                       for st, se in zip(streams, self.series, strict=True)]

    async def _follow(self, stream: HostStream, series: HostSeries) -> None:
        # One reading held back, so the loop's last one is known to be the last.
        pending: RawReading | None = None
        try:
            while (reading := await stream.read()) is not None:
                if pending is not None:
                    series.add(pending)
                pending = reading
            if pending is not None:
                series.add(pending, final=True)
        except CasslabError as exc:  # a broken host's sampler must not end the trial
            series.metrics.errors.append(f"sampler on {stream.host.name} stopped: {exc}")

    async def stop(self, timeout_s: float = 30.0) -> TrialMetrics:
        """Take each host's last reading, end the samplers; the trial's metrics. A host
        whose sampler failed has its message in `errors`, not an exception."""
        for stream in self._streams:
            stream.stop()
        if self._tasks:
            _done, late = await asyncio.wait(self._tasks, timeout=timeout_s)
            for task in late:
                task.cancel()
        for stream, series in zip(self._streams, self.series, strict=True):
            try:
                stderr = await stream.close(timeout_s=5.0)
            except CasslabError as exc:
                series.metrics.errors.append(str(exc))
                continue
            if stderr.strip():
                series.metrics.errors.append(
                    f"sampler on {stream.host.name}: {stderr.strip().splitlines()[-1]}")
        cql = await asyncio.to_thread(self._cql.stop) if self._cql is not None else None
        return combine(self.series, cql)


async def start(fleet: Fleet, nodes: Sequence[Started], interval_s: float = 1.0, *,
                cql: Callable[[], AbstractContextManager[Cql]] | None = None
                ) -> HostSampling:
    """Start one remote sampler per host of `nodes` (their first readings are the
    baseline) and, with `cql` (e.g. `lambda: CqlClient(addresses, netns=None)`), the
    CQL side of every node. HostError when a host refuses the channel."""
    by_host: dict[str, list[Started]] = {}
    for s in nodes:
        by_host.setdefault(s.node.host.name, []).append(s)
    streams = await asyncio.gather(*(
        open_stream(fleet, group[0].node.host,
                    [SamplerTarget(s.node.layout.name, s.pid,
                                   str(s.node.layout.directory / "data")) for s in group],
                    interval_s)
        for group in by_host.values()))
    poller = None if cql is None else CqlPoller(
        cql, [(s.node.layout.name, s.node.layout.address) for s in nodes], interval_s)
    return HostSampling(list(streams), interval_s, poller)
