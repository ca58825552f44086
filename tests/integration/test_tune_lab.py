"""The tuner against a real 1-node lab: rates from the virtual tables match the load
sent, ALTER reaches every node's schema, dry run changes nothing, the CLI iterates and
stops cleanly on SIGTERM. (`tune learn`: test_tune_learn_lab.py, which measures no
rate against a clock and so runs beside other tests.)"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from casslab.lab import Lab
from casslab.load import LoadSpec, RunSummary, run_load
from casslab.tune.apply import schema_compaction
from casslab.tune.audit import AuditLog
from casslab.tune.loop import Tuner
from casslab.tune.observe import RateSnapshot, read_rates
from casslab.tune.rules import seed003_rules

from conftest import LAB1
from labtools import CASSLAB, casslab

# timing: compares rates from Cassandra's meters with the load's own rate; run alone (make
# test runs these after the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

KS = "tune_it"
TABLE = "sensor_data"
RATE_OPS_S = 200.0
LOAD_S = 30.0
# Cassandra's per_second is a Dropwizard five-minute EWMA ticked every 5 s.
TICK_S = 5.0
WINDOW_S = 300.0
TWCS = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"


@dataclass(frozen=True)
class Driven:
    summary: RunSummary
    before: RateSnapshot
    after: RateSnapshot
    load_s: float  # from the load's start to the rate read


def _hosts(lab: Lab) -> list[str]:
    return [n.address for n in lab.state().nodes]


def _load(lab: Lab, **options: object) -> RunSummary:
    hosts = [f"{a}:9042" for a in _hosts(lab)]
    result = run_load(LoadSpec.of("iot", {"keyspace": KS, "devices": 20, **options}),
                      hosts=hosts, prefix=lab.exec_prefix())
    assert result.summary.ended_by == "completed" and result.summary.errors == 0
    return result.summary


@pytest.fixture(scope="module")
def driven(lab1: Lab) -> Iterator[Driven]:
    """A table (TWCS 1 minute, TTL 2 h), its meters settled at zero, then 30 s of load at
    200 ops/s with 30 % reads (lesrow: one read request per operation)."""
    _load(lab1, drop=True, ops=1, mix="lesrow=1", **{"table-ttl-s": 7200,
                                                     "compaction": "twcs:1:MINUTES"})
    with lab1.cql() as cql:
        # Reading the rate ticks the meter; two reads > 2 ticks apart leave its EWMA
        # initialised from an (almost) idle 5 s, so the load below starts from ~0.
        read_rates(cql, _hosts(lab1), KS)
        time.sleep(2 * TICK_S + 1)
        before = read_rates(cql, _hosts(lab1), KS)
        t0 = time.monotonic()
        summary = _load(lab1, duration=f"{LOAD_S:g}s", rate=RATE_OPS_S,
                        mix="insert=0.7,lesrow=0.3")
        after = read_rates(cql, _hosts(lab1), KS)
        load_s = time.monotonic() - t0
    yield Driven(summary, before, after, load_s)
    with lab1.cql() as cql:
        cql.execute(f"DROP KEYSPACE IF EXISTS {KS}", timeout_s=60)


def _ops(s: RunSummary, name: str) -> int:
    return next(o.ops for o in s.by_op if o.name == name)


def test_rates_match_load(driven: Driven) -> None:
    s = driven.summary
    before = driven.before.by_table[TABLE]
    after = driven.after.by_table[TABLE]
    # Counts are exact: every insert is one single-partition write, every lesrow one read.
    assert after.read_count - before.read_count == _ops(s, "lesrow")
    assert after.write_count - before.write_count == _ops(s, "insert")
    reads_s = _ops(s, "lesrow") / s.elapsed_s
    writes_s = _ops(s, "insert") / s.elapsed_s
    assert reads_s + writes_s == pytest.approx(RATE_OPS_S, rel=0.05)
    # per_second is an EWMA with a 300 s time constant ticked every 5 s, started from ~0:
    # after t seconds of a constant rate r it is r * (1 - exp(-k*5/300)) with k the whole
    # ticks so far. The load ran `elapsed_s` and the read came `load_s` after its start
    # (client start-up included); one tick either way covers where the ticks fell.
    lo = 1 - math.exp(-(s.elapsed_s - TICK_S) / WINDOW_S)
    hi = 1 - math.exp(-(driven.load_s + TICK_S) / WINDOW_S)
    assert 0.05 < lo < hi < 0.15  # after ~30 s the five-minute rate shows ~10 % of the load
    prime = max(driven.before.by_table[TABLE].reads_s, driven.before.by_table[TABLE].writes_s)
    for got, rate in ((after.reads_s, reads_s), (after.writes_s, writes_s)):
        assert rate * lo * 0.9 - prime <= got <= rate * hi * 1.1 + prime, (got, rate, lo, hi)
    # Both rates lag alike, so their ratio, the read share the tuner uses, is already right.
    share = after.reads_s / (after.reads_s + after.writes_s)
    assert share == pytest.approx(0.3, abs=0.03)


def test_dry_run_then_alter_on_every_node(lab1: Lab, driven: Driven, tmp_path: Path) -> None:
    hosts = _hosts(lab1)
    with lab1.cql() as cql:
        start = {h: schema_compaction(cql, h, KS, TABLE) for h in hosts}
        assert all(m["compaction_window_size"] == "1" for m in start.values())
        with AuditLog(tmp_path / "dry.jsonl") as log:
            (dry,) = Tuner(cql, hosts, KS, seed003_rules(), dry_run=True, audit=log).step()
        assert dry.decision.action == "change" and dry.statement and not dry.applied
        assert {h: schema_compaction(cql, h, KS, TABLE) for h in hosts} == start
        assert (tmp_path / "dry.jsonl").read_text().count('"dry_run": true') == 1

        with AuditLog(tmp_path / "live.jsonl") as log:
            (live,) = Tuner(cql, hosts, KS, seed003_rules(), audit=log).step()
        # TTL 2 h, 30 % reads: Table 2 says 35 minutes, the rule min_threshold 8.
        assert live.applied and live.decision.target is not None
        want = {"class": TWCS, "compaction_window_size": "35",
                "compaction_window_unit": "MINUTES", "max_threshold": "32",
                "min_threshold": "8"}
        assert live.decision.target == want
        for h in hosts:
            assert schema_compaction(cql, h, KS, TABLE) == want
        (again,) = Tuner(cql, hosts, KS, seed003_rules()).step()
        assert again.decision.action == "keep"


def test_cli_iterations_and_bad_input(lab1: Lab, driven: Driven, tmp_path: Path) -> None:
    audit = tmp_path / "cli.jsonl"
    r = casslab("tune", "--name", LAB1, "--keyspace", KS, "--iterations", "2", "--interval",
                "1s", "--dry-run", "--audit", str(audit), timeout_s=120)
    assert r.returncode == 0, r.stderr
    assert "#1 tune_it.sensor_data" in r.stdout and "#2 tune_it.sensor_data" in r.stdout
    assert "stopped after 2 iteration(s)" in r.stderr
    assert len(audit.read_text().splitlines()) == 2

    # --hosts: any cluster, CQL client in the current namespace; run inside the lab's
    # namespace, where the node's address exists, the nodes are found via system.peers_v2.
    ns = lab1.state().netns
    assert ns
    r = subprocess.run(["ip", "netns", "exec", ns, CASSLAB, "tune", "--hosts",
                        f"{_hosts(lab1)[0]}:9042", "--keyspace", KS, "--once", "--dry-run"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ),
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "on 1 node(s)" in r.stderr and "#1 tune_it.sensor_data" in r.stdout

    r = casslab("tune", "--name", LAB1, "--keyspace", "no_such_ks", "--once", timeout_s=120)
    assert r.returncode == 2  # a usage error: the keyspace named does not exist
    assert "error: keyspace 'no_such_ks' does not exist" in r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("twcs:\n  - {ttl_s: 60, read_share: 2, min_threshold: 4}\n")
    r = casslab("tune", "--name", LAB1, "--keyspace", KS, "--rules", str(bad), "--once")
    assert r.returncode == 2
    err_lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(err_lines) == 1 and "read_share must be a fraction in 0..1" in err_lines[0]


def test_cli_stops_on_sigterm(lab1: Lab, driven: Driven) -> None:
    proc = subprocess.Popen([CASSLAB, "tune", "--name", LAB1, "--keyspace", KS, "--interval",
                             "1s", "--dry-run"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the first iteration printed
        assert line.startswith("#1 ")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert "(signal)" in stderr
