"""Sampling nodes on real hosts: one remote sampler per host over SSH, its raw /proc
readings turned into the local sampler's TrialMetrics.

    sampling = await hostmetrics.start(fleet, started, interval_s=1.0)
    await asyncio.to_thread(run_the_load)        # the event loop keeps reading meanwhile
    metrics = await sampling.stop()

The readings come from casslab.hosts.sampling and become samples through the same
functions the local sampler uses (metrics.sampler: parse_proc, node_sample, host_sample,
...), so a node's CPU, disk and RSS mean the same on a host as in the local lab. Times
are the host's own clock from its first reading. Cassandra's side over CQL (compactions,
coordinator latencies) is not sampled on hosts yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from casslab.core.errors import CasslabError
from casslab.hosts.cluster import Started
from casslab.hosts.sampling import HostStream, RawReading, SamplerTarget, open_stream
from casslab.hosts.ssh import Fleet
from casslab.metrics.sampler import (
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

MIB = 1024 * 1024


@dataclass
class HostSeries:
    """The samples of one host's readings, each against the one before (pure)."""

    host: str
    interval_s: float
    metrics: TrialMetrics = field(default_factory=TrialMetrics)
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
            self.metrics.nodes.append(node_sample(t_s, name, a, b, dt, data_mib))
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


def combine(series: Sequence[HostSeries]) -> TrialMetrics:
    """One TrialMetrics from every host's: their node samples side by side, and as
    `host` the node hosts together, interval by interval: mean CPU shares, summed disk
    rates (pure)."""
    out = TrialMetrics()
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


class HostSampling:
    """Every host's remote sampler, read in the background until `stop`."""

    def __init__(self, streams: list[HostStream], interval_s: float) -> None:
        self.series = [HostSeries(s.host.name, interval_s) for s in streams]
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
        return combine(self.series)


async def start(fleet: Fleet, nodes: Sequence[Started], interval_s: float = 1.0
                ) -> HostSampling:
    """Start one remote sampler per host of `nodes` (their first readings are the
    baseline). HostError when a host refuses the channel."""
    by_host: dict[str, list[Started]] = {}
    for s in nodes:
        by_host.setdefault(s.node.host.name, []).append(s)
    streams = await asyncio.gather(*(
        open_stream(fleet, group[0].node.host,
                    [SamplerTarget(s.node.layout.name, s.pid,
                                   str(s.node.layout.directory / "data")) for s in group],
                    interval_s)
        for group in by_host.values()))
    return HostSampling(list(streams), interval_s)
