"""What the metrics sampler produces: one row type per table of the results database."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NodeSample:
    """One node at `t_s` seconds after the trial started; rates over the last interval."""

    t_s: float
    node: str
    cpu_user_pct: float  # of one core (200 % = both cores of this machine)
    cpu_sys_pct: float
    read_kb_s: float
    write_kb_s: float
    rss_mib: float
    data_mib: float | None
    compactions_active: int | None = None
    compactions_pending: int | None = None
    # The CPU credit balance of a burstable node (the lab's credit controller), else None.
    cpu_credits: float | None = None


@dataclass(frozen=True)
class HostSample:
    """The machine as a whole (/proc/stat, /proc/diskstats)."""

    t_s: float
    cpu_user_pct: float  # of the whole machine (100 % = every core busy)
    cpu_sys_pct: float
    cpu_iowait_pct: float
    read_kb_s: float
    write_kb_s: float


@dataclass(frozen=True)
class HostLoadSample:
    """One real host of a hosts lab (casslab.testbed.hosts) at `t_s`: HostSample's columns for
    that host, the data interface's traffic and the load average."""

    t_s: float
    host: str
    cpu_user_pct: float  # of the whole host (100 % = every core busy)
    cpu_sys_pct: float
    cpu_iowait_pct: float
    read_kb_s: float
    write_kb_s: float
    net_rx_kb_s: float | None  # None: the data interface was not found
    net_tx_kb_s: float | None
    load1: float


@dataclass(frozen=True)
class SstableSample:
    t_s: float
    node: str
    keyspace: str
    table: str
    sstables: int


@dataclass(frozen=True)
class TableSample:
    """A coordinator latency row of system_views on one node (kind: read or write)."""

    t_s: float
    node: str
    keyspace: str
    table: str
    kind: str
    count: int
    per_second: float
    p50_ms: float
    p99_ms: float


@dataclass(frozen=True)
class CompactionSample:
    """Compactions a node completed since the trial started (rows of its
    system.compaction_history with compacted_at at or after the sampler's start)."""

    t_s: float
    node: str
    completed: int


@dataclass
class TrialMetrics:
    nodes: list[NodeSample] = field(default_factory=list)
    host: list[HostSample] = field(default_factory=list)
    sstables: list[SstableSample] = field(default_factory=list)
    tables: list[TableSample] = field(default_factory=list)
    compactions: list[CompactionSample] = field(default_factory=list)
    # Per real host (hosts labs only); `host` then holds the node hosts together.
    hosts: list[HostLoadSample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
