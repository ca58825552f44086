"""The tuner loop against a fake CQL session: dry run, apply, audit, errors, learn spec."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from casslab.cassandra.cql import CqlResult
from casslab.core.errors import CqlError, UsageError
from casslab.tune.audit import AuditLog
from casslab.tune.decide import Policy
from casslab.tune.learn import LearnSpec, build_spec, mix_for, share_of
from casslab.tune.loop import SignalStop, Tuner, stop_on_signals
from casslab.tune.observe import KeyspaceError
from casslab.tune.rules import seed003_rules

TWCS = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"


class FakeCql:
    """One keyspace `iot` with one TWCS table; two nodes with given rates."""

    def __init__(self, ttl_s: int = 7200, rates: dict[str, tuple[float, float]] | None = None,
                 down: tuple[str, ...] = ()) -> None:
        self.compaction = {"class": TWCS, "compaction_window_size": "10",
                           "compaction_window_unit": "MINUTES", "max_threshold": "32",
                           "min_threshold": "6"}
        self.ttl_s = ttl_s
        self.rates = rates or {"n1": (15.0, 35.0), "n2": (15.0, 35.0)}
        self.down = down
        self.statements: list[str] = []
        self.rate_hosts: list[str | None] = []

    def execute(self, query: str, params: list[Any] | None = None, *, consistency: str = "ONE",
                host: str | None = None, timeout_s: float = 10.0) -> CqlResult:
        if host in self.down:
            raise CqlError("NoHostAvailable", f"{host} is down")
        if "system_schema.keyspaces" in query:
            return CqlResult(["keyspace_name"], [["system"], ["iot"]])
        if "FROM system_schema.tables" in query and "table_name =" in query:
            return CqlResult(["compaction"], [[str(self.compaction)]])
        if "FROM system_schema.tables" in query:
            return CqlResult([], [["sensor_data", str(self.compaction), self.ttl_s]])
        if "system_views.coordinator" in query:
            self.rate_hosts.append(host)
            r = self.rates[str(host)][0 if "read" in query else 1]
            return CqlResult([], [["sensor_data", int(r * 100), r]])
        if query.startswith("ALTER TABLE"):
            self.statements.append(query)
            body = query.split("compaction = ", 1)[1].replace("'", '"')
            self.compaction = json.loads(body)
            return CqlResult([], [])
        raise AssertionError(query)


def test_rates_summed_over_every_node_and_applied(tmp_path: Path) -> None:
    cql = FakeCql()
    with AuditLog(tmp_path / "a.jsonl") as log:
        t = Tuner(cql, ["n1", "n2"], "iot", seed003_rules(), audit=log)
        (out,) = t.step()
    assert sorted(h for h in cql.rate_hosts if h) == ["n1", "n1", "n2", "n2"]
    assert out.decision.inputs["reads_s"] == 30 and out.decision.inputs["writes_s"] == 70
    assert out.applied and cql.statements
    assert cql.compaction["compaction_window_size"] == "35"
    assert cql.compaction["min_threshold"] == "8"
    rec = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert rec["action"] == "change" and rec["applied"] and rec["statement"].startswith("ALTER")
    assert rec["inputs"]["read_share"] == 0.3 and rec["rule"]["point"]["ttl_s"] == 7200


def test_dry_run_changes_nothing() -> None:
    cql = FakeCql()
    log = AuditLog(None)
    t = Tuner(cql, ["n1", "n2"], "iot", seed003_rules(), dry_run=True, audit=log,
              policy=Policy(min_interval_s=0))
    t.step()
    t.step()
    assert cql.statements == []
    assert [r["action"] for r in log.records] == ["change", "change"]
    assert all(r["dry_run"] and not r["applied"] and r["statement"] for r in log.records)


def test_node_down_is_recorded() -> None:
    cql = FakeCql(down=("n2",))
    log = AuditLog(None)
    (out,) = Tuner(cql, ["n1", "n2"], "iot", seed003_rules(), audit=log).step()
    assert out.decision.inputs["nodes_read"] == 1 and out.decision.inputs["nodes_total"] == 2
    assert "n2" in log.records[0]["node_errors"]
    assert out.decision.action == "hold" and "rates from 1 of 2 nodes" in out.decision.reason
    assert cql.statements == []


def test_unknown_keyspace() -> None:
    with pytest.raises(KeyspaceError, match="keyspace 'nope' does not exist"):
        Tuner(FakeCql(), ["n1"], "nope", seed003_rules()).step()


def test_delta_rate_source() -> None:
    cql = FakeCql()
    clock = iter([0.0, 10.0])
    t = Tuner(cql, ["n1", "n2"], "iot", seed003_rules(), rate_source="delta",
              clock=lambda: next(clock))
    (first,) = t.step()
    assert first.decision.action == "skip" and "first snapshot" in first.decision.reason
    cql.rates = {"n1": (25.0, 35.0), "n2": (15.0, 35.0)}  # counts +1000 reads on n1
    (second,) = t.step()
    assert second.decision.inputs["reads_s"] == pytest.approx(100.0)
    assert second.decision.inputs["writes_s"] == pytest.approx(0.0)


def test_run_stops_on_event() -> None:
    stop = threading.Event()
    t = Tuner(FakeCql(), ["n1", "n2"], "iot", seed003_rules(), dry_run=True)
    seen: list[int] = []

    def on_step(_out: object) -> None:
        seen.append(1)
        if len(seen) == 2:
            stop.set()

    assert t.run(interval_s=0.01, stop=stop, on_step=on_step) == 2
    assert t.run(interval_s=0.01, stop=threading.Event(), iterations=3) == 3


def test_learn_spec_and_mix() -> None:
    assert share_of(mix_for(0.3)) == 0.3
    assert mix_for(0.1) == "insert=0.9000,devdat=0.0400,lesrow=0.0300,avgdat=0.0300"
    spec = build_spec(LearnSpec())
    assert [f.name for f in spec.factors] == ["compaction", "option.table-ttl-s", "option.mix"]
    assert len(spec.factors[0].levels) == 2
    with pytest.raises(UsageError, match=r"--read-shares: 1\.5"):
        LearnSpec(read_shares=(1.5,))
    with pytest.raises(UsageError, match="--trials: 0"):
        LearnSpec(trials=0)


def test_learn_workload_options_are_checked_when_the_sweep_is_made() -> None:
    with pytest.raises(UsageError, match=r"^tune learn workload_options\.in-flite: unknown "
                       r"casslab-load option for iot .*did you mean 'in-flight'"):
        LearnSpec(workload_options={"in-flite": 8})
    with pytest.raises(UsageError, match=r"workload_options\.series: 9 must be an integer "
                       r"in 1\.\.=5"):
        LearnSpec(workload_options={"series": 9})
    spec = build_spec(LearnSpec(workload_options={"in-flight": 8}))
    assert spec.workload.options == {"devices": 100, "warmup": "10s", "in-flight": 8}


def test_learn_sweep_is_shuffled_and_warms_each_trial_up() -> None:
    """In spec order all trials of one compaction setting would run in one stretch of
    time, so a drift of the machine (JIT, disk) would pass for that setting's effect."""
    from casslab.experiment.design import plan

    spec = build_spec(LearnSpec(windows_min=(1, 2, 3), ttls_s=(60, 120), read_shares=(0.1,)))
    order = [t.cell.params["compaction"] for t in plan(spec)]
    assert order != sorted(order, key=spec.factors[0].levels.index)
    assert spec.workload.options["warmup"] == "10s"
    assert "warmup" not in build_spec(LearnSpec(warmup_s=0)).workload.options
    with pytest.raises(UsageError, match="--warmup"):
        LearnSpec(warmup_s=-1)


def _summary(ops_s: float, mean_us: float) -> dict[str, Any]:
    lat = {"mean_us": mean_us, "p50_us": 1000, "p95_us": 2000, "p99_us": 3000,
           "p999_us": 4000, "max_us": 5000}
    return {"elapsed_s": 10.0, "ops": int(ops_s * 10), "ops_s": ops_s, "errors": 0,
            "ended_by": "completed",
            "by_op": {"insert": {"ops": int(ops_s * 10), "ops_s": ops_s, "errors": 0,
                                 "latency": lat, "service": lat}}}


def test_rules_from_results(tmp_path: Path) -> None:
    from casslab.metrics.samples import NodeSample, TrialMetrics
    from casslab.store.db import Store
    from casslab.tune.learn import rules_from_results, twcs_map
    from casslab.tune.rules import dump_rules, parse_rules

    cells = [  # (window, ttl, share, ops/s, mean us, disk MiB)
        (1, 120, 0.03, 500.0, 2000.0, 10.0), (3, 120, 0.03, 450.0, 1500.0, 12.0),
        (1, 120, 0.3, 300.0, 3000.0, 8.0), (3, 120, 0.3, 350.0, 2500.0, 9.0)]
    store = Store(tmp_path)
    cid, _ = store.open_campaign(name="t", digest="d", spec_yaml="", response="ops_s",
                                 factors=[])
    plan = [(i, i, f"c{i}", {"compaction": twcs_map(w, 4), "option.table-ttl-s": ttl,
                             "option.mix": mix_for(share)}, 1, False, "recreate")
            for i, (w, ttl, share, *_rest) in enumerate(cells)]
    status = store.ensure_plan(cid, plan)
    for i, (*_p, ops_s, mean_us, disk) in enumerate(cells):
        tid = status[i][0]
        store.mark_running(tid, {}, "recreate")
        node = NodeSample(1.0, "node1", 0.0, 0.0, 0.0, 0.0, 0.0, disk)
        store.commit_trial(tid, summary=_summary(ops_s, mean_us), intervals=[],
                           metrics=TrialMetrics(nodes=[node]), command=["x"])
    store.close()
    rules = rules_from_results(tmp_path)
    (p3, p30) = rules.points["twcs"]
    assert (p3.read_share, p3.options["compaction_window_size"]) == (0.03, "1")
    assert (p30.read_share, p30.options["compaction_window_size"]) == (0.3, "3")
    assert p30.measurements["best"]["ops_s"] == 350.0
    assert p30.measurements["best"]["disk_peak_mib"] == 9.0
    assert len(p30.measurements["alternatives"]) == 2
    again = parse_rules(dump_rules(rules))
    assert again.choose("twcs", 120, 0.25).options["compaction_window_size"] == "3"


def test_learned_points_carry_the_read_share_the_nodes_served_not_the_mix(
        tmp_path: Path) -> None:
    """The tuner looks rules up by the share of read requests the coordinators counted,
    which is not the mix, so a point learned from a 10 % mix that the nodes served as
    13 % reads must sit at 0.13; the mix is kept beside it."""
    from casslab.metrics.samples import TableSample, TrialMetrics
    from casslab.store.db import Store
    from casslab.tune.learn import rules_from_results, twcs_map

    # (window, ttl, node1 reads/writes, node2 reads/writes) over the trial
    cells = [(1, 120, (100, 700), (50, 150)), (3, 120, (120, 800), (30, 50)),
             (1, 300, (200, 900), (0, 0))]
    store = Store(tmp_path)
    cid, _ = store.open_campaign(name="t", digest="d", spec_yaml="", response="ops_s",
                                 factors=[])
    plan = [(i, i, f"c{i}", {"compaction": twcs_map(w, 4), "option.table-ttl-s": ttl,
                             "option.mix": mix_for(0.1)}, 1, False, "recreate")
            for i, (w, ttl, *_n) in enumerate(cells)]
    status = store.ensure_plan(cid, plan)
    for i, (_w, _ttl, *per_node) in enumerate(cells):
        tables = [TableSample(t, f"node{n}", "iot", "sensor_data", kind, 1000 + round(c * t),
                              0.0, 0.0, 0.0)
                  for n, counts in enumerate(per_node, 1)
                  for kind, c in zip(("read", "write"), counts, strict=True)
                  for t in (0.0, 0.5, 1.0)]
        store.mark_running(status[i][0], {}, "recreate")
        store.commit_trial(status[i][0], summary=_summary(300.0 + i, 2000.0), intervals=[],
                           metrics=TrialMetrics(nodes=[], tables=tables), command=["x"])
    store.close()
    rules = rules_from_results(tmp_path)
    served = (100 + 50 + 120 + 30 + 200) / (100 + 700 + 50 + 150 + 120 + 800 + 30 + 50 + 200
                                           + 900)
    assert [p.read_share for p in rules.points["twcs"]] == [round(served, 4)] * 2
    assert {p.measurements["mix_read_share"] for p in rules.points["twcs"]} == {0.1}
    assert "coordinator" in rules.points["twcs"][0].measurements["read_share"]


def test_rules_from_results_learns_ucs_points_beside_twcs(tmp_path: Path) -> None:
    from casslab.metrics.samples import TrialMetrics
    from casslab.store.db import Store
    from casslab.tune.learn import rules_from_results, twcs_map, ucs_map
    from casslab.tune.rules import dump_rules, parse_rules

    cells = [(twcs_map(1, 4), 400.0), (ucs_map("T4"), 300.0), (ucs_map("L4"), 350.0)]
    store = Store(tmp_path)
    cid, _ = store.open_campaign(name="t", digest="d", spec_yaml="", response="ops_s",
                                 factors=[])
    plan = [(i, i, f"c{i}", {"compaction": comp, "option.table-ttl-s": 300,
                             "option.mix": mix_for(0.1)}, 1, False, "recreate")
            for i, (comp, _ops) in enumerate(cells)]
    status = store.ensure_plan(cid, plan)
    for i, (_comp, ops_s) in enumerate(cells):
        store.mark_running(status[i][0], {}, "recreate")
        store.commit_trial(status[i][0], summary=_summary(ops_s, 2000.0), intervals=[],
                           metrics=TrialMetrics(nodes=[]), command=["x"])
    store.close()
    rules = parse_rules(dump_rules(rules_from_results(tmp_path)))
    assert rules.choose("ucs", 300, 0.1).options == {"scaling_parameters": "L4"}
    assert rules.choose("twcs", 300, 0.1).options["compaction_window_size"] == "1"
    (ucs_point,) = rules.points["ucs"]
    assert [a["scaling_parameters"] for a in ucs_point.measurements["alternatives"]] == [
        "L4", "T4"]


def test_learn_spec_rejects_a_bad_ucs_scaling_parameter() -> None:
    assert LearnSpec(ucs_scaling=("T4", "L10", "N", "-2")).ucs_scaling
    with pytest.raises(UsageError, match="UCS scaling parameter 'X4'"):
        LearnSpec(ucs_scaling=("X4",))
    spec = build_spec(LearnSpec(ucs_scaling=("T4",)))
    assert "UnifiedCompactionStrategy" in str(spec.factors[0].levels[-1])


def test_sigterm_inside_stop_on_signals_ends_a_wait_without_the_event_lock() -> None:
    stop = SignalStop()
    before = signal.getsignal(signal.SIGTERM)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    with stop_on_signals(stop):
        timer.start()
        assert stop.wait(30.0) is True  # returns on the signal, not the 30 s timeout
    timer.join()
    assert signal.getsignal(signal.SIGTERM) is before
    assert SignalStop().wait(0.01) is False


def test_learns_default_results_directory_is_one_per_sweep() -> None:
    # The same sweep resumes in its directory; another sweep (other levels) gets its own,
    # where a fixed default refused it as another spec's results.
    from casslab.tune.learn import default_results

    one = LearnSpec(windows_min=(1, 3), ttls_s=(120, 300))
    assert default_results(one) == default_results(LearnSpec(windows_min=(1, 3),
                                                              ttls_s=(120, 300)))
    other = LearnSpec(windows_min=(1,), ucs_scaling=("T4", "L4"), ttls_s=(300,))
    assert default_results(other) != default_results(one)
    assert default_results(one).parent == Path("results")
