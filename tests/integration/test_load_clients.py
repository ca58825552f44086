"""Two casslab-load clients against one real 1-node lab: a 2-client load phase writes
every record once (disjoint slices), and a 2-client run's merged histogram holds the sum
of the clients' operations with its p99 between theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.lab import Lab
from casslab.load import LoadSpec
from casslab.load.multi import local_places, run_clients

pytestmark = pytest.mark.integration

RECORDS = 3000


@pytest.fixture(scope="module")
def lab(lab1: Lab) -> Lab:
    """The run's shared 1-node lab (conftest; no CPU quota). The load phases here drop
    and recreate the keyspaces they count (keyspace1, ycsb): no other test's rows."""
    return lab1


def _hosts(lab: Lab) -> list[str]:
    return [f"{n.address}:9042" for n in lab.state().nodes]


def test_two_clients_load_disjoint_slices_and_merge_their_run(lab: Lab, tmp_path: Path
                                                              ) -> None:
    places = local_places(2, lab.exec_prefix(), tmp_path / "there")
    load = LoadSpec.of("stress-write", {"phase": "load", "records": RECORDS, "drop": True,
                                        "seed": 5})
    loaded = run_clients(load, hosts=_hosts(lab), places=places, work_dir=tmp_path / "load")
    assert [c.ops for c in loaded.clients] == [RECORDS // 2, RECORDS // 2]
    assert loaded.summary.ops == RECORDS and loaded.summary.errors == 0
    with lab.cql() as cql:
        (count,), = cql.execute("SELECT count(*) FROM keyspace1.standard1").rows
    assert count == RECORDS  # each key written once: the slices are disjoint and cover

    run = LoadSpec.of("stress-mixed", {"records": RECORDS, "duration": "4s", "seed": 5,
                                       "interval": "0.5s"})
    # As a campaign on the local lab runs them: the clients write their logs in the
    # directory the merge reads (the load phase above fetched them from another).
    here = local_places(2, lab.exec_prefix(), tmp_path / "run")
    result = run_clients(run, hosts=_hosts(lab), places=here, work_dir=tmp_path / "run")
    clients = result.clients
    assert len(clients) == 2 and all(c.ended_by == "completed" for c in clients)
    timed = [int(c.raw["ok"]) + int(c.raw["not_found"]) for c in clients]
    merged = result.summary.raw["merged"]
    assert merged["ops"] == sum(timed) > 0
    assert result.summary.ops == sum(c.ops for c in clients)
    assert sum(int(iv["ops"]) for iv in result.intervals) == result.summary.ops
    p99s = sorted(c.all_ops().latency.p99_us for c in clients)  # type: ignore[union-attr]
    overall = result.summary.all_ops()
    assert overall is not None and p99s[0] <= overall.latency.p99_us <= p99s[1]
    assert [c["ops"] for c in result.summary.raw["clients"]] == [c.ops for c in clients]


def test_two_clients_merge_the_parts_of_a_read_modify_write_apart(lab: Lab, tmp_path: Path
                                                                  ) -> None:
    load = LoadSpec.of("ycsb-f", {"phase": "load", "records": 1000, "drop": True, "seed": 7})
    run_clients(load, hosts=_hosts(lab), places=local_places(2, lab.exec_prefix(), tmp_path),
                work_dir=tmp_path)
    run = LoadSpec.of("ycsb-f", {"records": 1000, "duration": "3s", "seed": 7})
    result = run_clients(run, hosts=_hosts(lab),
                         places=local_places(2, lab.exec_prefix(), tmp_path / "run"),
                         work_dir=tmp_path / "run")
    reads = [c.raw["parts"]["read"] for c in result.clients]
    part = result.summary.raw["parts"]["read"]
    assert part["ops"] == sum(int(r["ops"]) for r in reads) > 0
    p99s = sorted(int(r["latency"]["p99_us"]) for r in reads)
    assert p99s[0] <= part["latency"]["p99_us"] <= p99s[1]
    # The parts are inside the rmw operations: the merged count is the operations only.
    timed = [int(c.raw["ok"]) + int(c.raw["not_found"]) for c in result.clients]
    assert result.summary.raw["merged"]["ops"] == sum(timed)
