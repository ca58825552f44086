"""A YCSB load split across client machines on a real 1-node lab: two `casslab run ycsb`
loads given halves of the key numbers by insertstart/insertcount, run at the same time as
two machines would, write every record once and no other, and a run phase over the whole
key space afterwards finds every key it reads. With --clients K, the K clients split the
range they are given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from casslab.lab import Lab

from conftest import LAB1
from labtools import CASSLAB

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
RECORDS = 1000
KEYSPACE = "it_ycsb_split"


def _ycsb_key(keynum: int) -> str:
    """YCSB's key of a key number, insertorder=hashed: "user" + Utils.fnvhash64, the
    absolute value of the signed 64-bit FNV-1a hash of the number's eight bytes."""
    h, val = 0xCBF29CE484222325, keynum
    for _ in range(8):
        h = ((h ^ (val & 0xFF)) * 1099511628211) & 0xFFFF_FFFF_FFFF_FFFF
        val >>= 8
    return f"user{abs(h - (1 << 64) if h >= 1 << 63 else h)}"


def _command(*props: str, phase: str, keyspace: str = KEYSPACE) -> list[str]:
    args = [CASSLAB, "run", "ycsb", "-P", str(REPO / "workloads" / "workloadc"),
            "-p", f"recordcount={RECORDS}", "-p", f"cassandra.keyspace={keyspace}",
            "-p", "threadcount=4"]
    for p in props:
        args += ["-p", p]
    return [*args, "--phase", phase, "--name", LAB1, "--format", "json"]


def _summary(stdout: str) -> dict[str, Any]:
    lines = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
    assert lines and lines[-1]["type"] == "summary", stdout[-500:]
    summary: dict[str, Any] = lines[-1]
    return summary


def test_two_half_loads_write_every_record_once_and_a_run_finds_them(lab1: Lab) -> None:
    half = RECORDS // 2
    loads = [subprocess.Popen(_command(f"insertstart={start}", f"insertcount={half}",
                                       phase="load"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for start in (0, half)]
    outputs = [p.communicate(timeout=300) for p in loads]
    for proc, (_, err) in zip(loads, outputs, strict=True):
        assert proc.returncode == 0, err[-2000:]
    inserted = [_summary(out)["by_op"]["insert"] for out, _ in outputs]
    assert [(i["ops"], i["errors"]) for i in inserted] == [(half, 0), (half, 0)]

    with lab1.cql() as cql:
        rows = cql.execute(f"SELECT y_id FROM {KEYSPACE}.usertable", timeout_s=30).rows
    # Exactly the keys of key numbers 0..RECORDS-1: disjoint halves that cover them.
    assert len(rows) == RECORDS
    assert {r[0] for r in rows} == {_ycsb_key(k) for k in range(RECORDS)}

    # The run phase, without the properties, chooses from all RECORDS keys.
    run = subprocess.run(_command("operationcount=2000", "requestdistribution=uniform",
                                  phase="run"),
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    read = _summary(run.stdout)["by_op"]["read"]
    assert (read["ops"], read["not_found"], read["errors"]) == (2000, 0, 0)



def test_clients_of_one_run_split_the_insert_range_they_are_given(lab1: Lab) -> None:
    keyspace = f"{KEYSPACE}_clients"
    res = subprocess.run([*_command("insertstart=250", "insertcount=500", phase="load",
                                    keyspace=keyspace), "--clients", "2"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert _summary(res.stdout)["by_op"]["insert"]["ops"] == 500
    with lab1.cql() as cql:
        rows = cql.execute(f"SELECT y_id FROM {keyspace}.usertable", timeout_s=30).rows
    assert len(rows) == 500
    assert {r[0] for r in rows} == {_ycsb_key(k) for k in range(250, 750)}
