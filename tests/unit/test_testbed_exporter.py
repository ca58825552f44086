"""The lab exporter: nodes' process counters and link conditions as Prometheus text,
served over HTTP; a busy address is one error naming it."""

from __future__ import annotations

import os
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.lab.state import LabState, NodeState
from casslab.net.emulator import NetState
from casslab.net.linkprofiles import LinkConditions
from casslab.testbed import exporter


def lab_state(tmp_path: Path) -> LabState:
    (tmp_path / "n1" / "data").mkdir(parents=True)
    (tmp_path / "n1" / "data" / "x").write_bytes(b"x" * 2 * 1024 * 1024)
    # node1 is this test process (real /proc counters); node2 has no process
    nodes = [NodeState(1, "127.0.1.1", str(tmp_path / "n1"), pid=os.getpid()),
             NodeState(2, "127.0.1.2", str(tmp_path / "n2"), pid=0)]
    return LabState("cvbx", str(tmp_path), "5.0.6", "host", None, None, 1, ["127.0.1.1"], {},
                    nodes=nodes)


def value(text: str, prefix: str) -> float:
    return float(next(line for line in text.splitlines() if line.startswith(prefix))
                 .rsplit(" ", 1)[1])


def test_nodes_and_links_are_rendered(tmp_path: Path) -> None:
    net = NetState("ns", {"node1": "127.0.1.1"},
                   {("node1", "node2"): LinkConditions(delay_ms=20, jitter_ms=5, loss_pct=1,
                                                       rate_mbit=8)})
    text = exporter.render(lab_state(tmp_path), net)
    node1 = '{lab="cvbx",node="node1"'
    assert value(text, f"casslab_node_up{node1}}}") == 1
    assert value(text, 'casslab_node_up{lab="cvbx",node="node2"}') == 0
    assert value(text, f'casslab_node_cpu_seconds_total{node1},mode="user"}}') > 0
    assert value(text, f"casslab_node_rss_bytes{node1}}}") > 1024 * 1024
    assert value(text, f"casslab_node_data_bytes{node1}}}") >= 2 * 1024 * 1024
    link = '{lab="cvbx",src="node1",dst="node2"}'
    assert value(text, f"casslab_link_delay_seconds{link}") == 0.02
    assert value(text, f"casslab_link_loss_ratio{link}") == 0.01
    assert value(text, f"casslab_link_rate_bytes_per_second{link}") == 1e6
    assert "# TYPE casslab_node_cpu_seconds_total counter" in text


def test_a_busy_address_is_one_error_naming_it() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        addr = f"127.0.0.1:{s.getsockname()[1]}"
        with pytest.raises(UsageError, match=rf"^--serve {addr}: cannot listen there"):
            exporter.serve(None, addr)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="give HOST:PORT"):
        exporter.serve(None, "9471")  # type: ignore[arg-type]


class FakeCql:
    """The virtual tables' rows as a 5.0 node returns them, per query."""

    def __init__(self) -> None:
        self.hosts: list[str | None] = []

    def execute(self, query: str, params: object = None, *, consistency: str = "ONE",
                host: str | None = None, timeout_s: float = 10.0) -> object:
        self.hosts.append(host)
        rows: dict[str, list[list[object]]] = {
            "thread_pools": [["CompactionExecutor", 1, 4, 0, 0, 17],
                             ["Native-Transport-Requests", 3, 0, 2, 9, 1200]],
            "coordinator_read_latency": [["ks", "t", 50, 1.5, 12.0, 40.0],
                                         ["system", "local", 9, 0.1, 0.2, 0.3]],
            "coordinator_write_latency": [["ks", "t", 70, 0.8, 4.0, 9.0]],
            "sstable_tasks": [["compaction"]],
        }
        table = next(k for k in rows if f"system_views.{k}" in query)

        class Result:
            pass

        r = Result()
        r.rows = rows[table]  # type: ignore[attr-defined]
        return r


def test_virtual_table_figures_are_rendered_per_node(tmp_path: Path) -> None:
    cql = FakeCql()
    figures = exporter.read_figures(cql, "127.0.1.1")
    assert set(cql.hosts) == {"127.0.1.1"}
    assert [lat.keyspace for lat in figures.latencies] == ["ks", "ks"]  # system left out
    text = exporter.render(lab_state(tmp_path), None, {"127.0.1.1": figures})
    n1 = 'lab="cvbx",node="node1"'
    assert value(text, f"casslab_node_cql_up{{{n1}}}") == 1
    assert value(text, 'casslab_node_cql_up{lab="cvbx",node="node2"}') == 0
    read = f'{n1},kind="read",keyspace="ks",table="t"'
    assert value(text, f"casslab_node_coordinator_requests_total{{{read}}}") == 50
    assert value(text, f'casslab_node_coordinator_latency_seconds{{{read},quantile="0.99"}}') \
        == 0.012
    ntr = f'{n1},pool="Native-Transport-Requests"'
    assert value(text, f'casslab_node_thread_pool_tasks{{{ntr},state="blocked"}}') == 2
    assert value(text, f"casslab_node_thread_pool_blocked_total{{{ntr}}}") == 9
    assert value(text, f"casslab_node_compactions_pending{{{n1}}}") == 4
    assert value(text, f"casslab_node_compactions_running{{{n1}}}") == 1


def test_without_figures_no_cassandra_series_are_written(tmp_path: Path) -> None:
    text = exporter.render(lab_state(tmp_path), None)
    assert "casslab_node_cql_up{" not in text
    assert "casslab_node_cpu_seconds_total{" in text


def test_a_node_without_a_compaction_executor_has_none_pending(tmp_path: Path) -> None:
    figures = exporter.read_figures(FakeCql(), "127.0.1.1")
    without = replace(figures, pools=[p for p in figures.pools
                                      if p.name != "CompactionExecutor"])
    text = exporter.render(lab_state(tmp_path), None, {"127.0.1.1": without})
    assert value(text, 'casslab_node_compactions_pending{lab="cvbx",node="node1"}') == 0
