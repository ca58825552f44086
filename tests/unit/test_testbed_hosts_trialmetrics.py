"""Hosts' raw readings become the local sampler's samples: known counters in, known
rates out; the node hosts together as `host`."""

from __future__ import annotations

from casslab.testbed.hosts.sampling import RawNode, RawReading
from casslab.testbed.hosts.trialmetrics import HostSeries, combine

MIB = 1024 * 1024


def reading(host: str, t: float, *, utime: int = 0, write_bytes: int = 0,
            cpu_user: int = 100, cpu_total: int = 1000, sectors_written: int = 0,
            rx: int = 0, node: bool = True) -> RawReading:
    stat = "123 (java) S " + " ".join(["0"] * 10) + f" {utime} 0 0 0"
    raw = RawNode(stat, f"read_bytes: 0\nwrite_bytes: {write_bytes}\n", "VmRSS:\t 102400 kB",
                  5 * MIB, {("ks", "t-abc"): 3, ("system", "local-1"): 1})
    idle = cpu_total - cpu_user
    return RawReading(
        host=host, t=t, clk_tck=100, proc_stat=f"cpu  {cpu_user} 0 0 {idle} 0 0 0 0",
        diskstats=f"   8       0 sda 1 0 0 0 2 0 {sectors_written} 0 0 0 0\n"
                  "   7       0 loop0 1 0 999 0 2 0 999 0 0 0 0\n",
        disks=frozenset({"sda", "loop0"}), net_dev=f"  eth0: {rx} 5 0 0 0 0 0 0 0 5 0 0 0 0 0 0",
        loadavg="0.50 0.40 0.30 1/100 123", nodes={"node1": raw if node else None})


def test_two_readings_give_the_nodes_and_the_hosts_rates() -> None:
    series = HostSeries("h1", interval_s=1.0)
    series.add(reading("h1", 10.0))
    series.add(reading("h1", 12.0, utime=100, write_bytes=4 * MIB, cpu_user=200,
                       cpu_total=1400, sectors_written=400, rx=4096))
    (node,) = series.metrics.nodes
    assert (node.t_s, node.node, node.cpu_user_pct, node.write_kb_s) == (2.0, "node1", 50.0,
                                                                         2048.0)
    assert (node.rss_mib, node.data_mib) == (100.0, 5.0)
    (host,) = series.metrics.hosts
    assert (host.cpu_user_pct, host.write_kb_s, host.net_rx_kb_s, host.net_tx_kb_s,
            host.load1) == (25.0, 100.0, 2.0, 0.0, 0.5)
    assert [(s.keyspace, s.table, s.sstables) for s in series.metrics.sstables] == [
        ("ks", "t", 3)]


def test_a_node_gone_at_either_reading_has_no_sample_but_its_host_has() -> None:
    series = HostSeries("h1", interval_s=1.0)
    series.add(reading("h1", 10.0))
    series.add(reading("h1", 11.0, node=False))
    series.add(reading("h1", 12.0))
    assert series.metrics.nodes == [] and len(series.metrics.hosts) == 2


def test_the_last_short_interval_counts_only_when_there_is_no_sample_yet() -> None:
    busy = HostSeries("h1", interval_s=1.0)
    for t in (10.0, 11.0):
        busy.add(reading("h1", t))
    busy.add(reading("h1", 11.1), final=True)
    assert [s.t_s for s in busy.metrics.hosts] == [1.0]
    short = HostSeries("h1", interval_s=1.0)
    short.add(reading("h1", 10.0))
    short.add(reading("h1", 10.3, cpu_user=130, cpu_total=1100), final=True)
    assert [s.t_s for s in short.metrics.hosts] == [0.3]


def test_combine_means_cpu_and_sums_disk_over_the_node_hosts() -> None:
    a, b = HostSeries("h1", 1.0), HostSeries("h2", 1.0)
    a.add(reading("h1", 0.0))
    a.add(reading("h1", 1.0, cpu_user=125, cpu_total=1100, sectors_written=200))
    b.add(reading("h2", 5.0))
    b.add(reading("h2", 6.0, cpu_user=175, cpu_total=1100, sectors_written=600))
    metrics = combine([a, b])
    (host,) = metrics.host
    assert (host.t_s, host.cpu_user_pct, host.write_kb_s) == (1.0, 50.0, 400.0)
    assert [h.host for h in metrics.hosts] == ["h1", "h2"]
    assert len(metrics.nodes) == 2
