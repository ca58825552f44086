"""`tune learn` sweeps TWCS and UCS on a real lab of its own and writes rules from what
its trials measured; the tuner then applies the learned UCS point to a table of lab1."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.lab import Lab
from casslab.load import LoadSpec, run_load
from casslab.tune.apply import schema_compaction

from conftest import LAB1
from labtools import casslab

pytestmark = pytest.mark.integration

TABLE = "sensor_data"


def _hosts(lab: Lab) -> list[str]:
    return [n.address for n in lab.state().nodes]


def test_learn_sweeps_twcs_and_ucs_then_the_tuner_applies_the_learned_ucs_point(
        lab1: Lab, tmp_path: Path) -> None:
    """`tune learn` runs a real (tiny) sweep on its own lab and writes twcs and ucs points
    from what the trials measured; the tuner then moves a UCS table of lab1 to the
    learned scaling parameter."""
    import yaml

    rules = tmp_path / "rules.yaml"
    r = casslab("tune", "learn", "--windows", "1m", "--ucs", "T4,L4", "--ttls", "120s",
                "--read-shares", "0.1", "--duration", "4s", "--warmup", "1s", "--devices", "20",
                "--lab", "it-learn", "--results", str(tmp_path / "res"), "-o", str(rules),
                timeout_s=900)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = yaml.safe_load(rules.read_text())
    (twcs,) = doc["twcs"]
    (ucs,) = doc["ucs"]
    assert (twcs["ttl_s"], twcs["compaction_window_size"]) == (120, 1)
    # Labelled by the reads the node counted (the tuner's input), the 10 % mix kept beside.
    assert twcs["measurements"]["mix_read_share"] == 0.1
    assert "coordinator" in twcs["measurements"]["read_share"]
    assert 0.05 < twcs["read_share"] < 0.5
    measured = {a["scaling_parameters"]: a["ops_s"] for a in ucs["measurements"]["alternatives"]}
    assert set(measured) == {"T4", "L4"} and all(v > 0 for v in measured.values())
    assert ucs["scaling_parameters"] == max(measured, key=lambda k: measured[k])
    assert "UCS scaling_parameters" in r.stdout

    ks = "tune_ucs"
    hosts = [f"{a}:9042" for a in _hosts(lab1)]
    run_load(LoadSpec.of("iot", {"keyspace": ks, "drop": True, "ops": 1, "mix": "lesrow=1",
                                 "table-ttl-s": 120, "compaction": "{'class': "
                                 "'UnifiedCompactionStrategy', 'scaling_parameters': 'T8'}"}),
             hosts=hosts, prefix=lab1.exec_prefix())
    try:
        # Traffic for the five-minute rates (a table without any is skipped as noise).
        run_load(LoadSpec.of("iot", {"keyspace": ks, "devices": 20, "duration": "12s",
                                     "rate": 100, "mix": "insert=0.9,lesrow=0.1"}),
                 hosts=hosts, prefix=lab1.exec_prefix())
        r = casslab("tune", "--name", LAB1, "--keyspace", ks, "--rules", str(rules), "--once",
                    timeout_s=120)
        assert r.returncode == 0, r.stderr
        assert "scaling_parameters T8->" in r.stdout, r.stdout
        with lab1.cql() as cql:
            for host in _hosts(lab1):
                comp = schema_compaction(cql, host, ks, TABLE)
                assert comp["class"].endswith("UnifiedCompactionStrategy")
                assert comp["scaling_parameters"] == ucs["scaling_parameters"], comp
    finally:
        with lab1.cql() as cql:
            cql.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout_s=60)
