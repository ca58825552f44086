"""cassandra-stress user profiles with the CQL types c-s users write: Cassandra's own
`tools/cqlstress-example.yaml`, run unchanged on a real 1-node lab, and a profile of our
own with collections, a user type and a counter table."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

import pytest

from casslab.lab import Lab

from conftest import LAB1
from csparse import parse_results
from labtools import casslab

pytestmark = pytest.mark.integration
EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "cqlstress-example.yaml"

COLLECTIONS = """\
keyspace: it_user_types
keyspace_definition: |
  CREATE KEYSPACE it_user_types WITH replication = {'class': 'SimpleStrategy',
    'replication_factor': 1};
extra_definitions:
  - CREATE TYPE address (street text, zip int, at inet)
table: people
table_definition: |
  CREATE TABLE people (id bigint PRIMARY KEY, born date, tags set<text>,
    visits list<timestamp>, scores map<text, int>, home frozen<address>, wake time,
    pair tuple<tinyint, varint>, balance decimal)
columnspec:
  - name: tags
    size: fixed(3)
  - name: scores
    size: uniform(1..2)
queries:
  one:
    cql: select * from people where id = ?
"""

COUNTERS = """\
keyspace: it_user_types
table: hits
table_definition: |
  CREATE TABLE hits (page text PRIMARY KEY, views counter, likes counter)
columnspec:
  - name: page
    population: uniform(1..5)
  - name: views
    population: fixed(1)
"""


def _rows(lab: Lab, cql: str) -> list[list[object]]:
    with lab.cql() as c:
        return list(c.execute(cql, timeout_s=30).rows)


def _stress(*words: str) -> tuple[dict[str, float], str]:
    res = casslab("stress", "--name", LAB1, "--format", "cassandra-stress", "user",
                  "no-warmup", *words, "-rate", "threads=4", timeout_s=300)
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    return parse_results(res.stdout), res.stdout


def test_cassandras_cqlstress_example_runs_unchanged(lab1: Lab) -> None:
    # The example's insert is one LOGGED batch of uniform(1..50) partitions with a share
    # uniform(1..10)/10 of their 20..160 rows each: most batches are over Cassandra's
    # default batch_size_fail_threshold (50 KiB), which refuses them "Batch too large"
    # (cassandra-stress, too, sends one batch per insert). So the run ignores errors, and
    # the test checks those are the only ones and that the batches within the limit wrote
    # the example's rows.
    got, out = _stress(f"profile={EXAMPLE}", "ops(insert=1,simple1=1)", "n=200",
                       "-errors", "ignore")
    assert got["op rate"] > 0 and got["Total errors"] < 100
    failed = [ln for ln in out.splitlines() if " failed: " in ln]
    assert all("Batch too large" in ln for ln in failed), failed
    types = dict((str(n), str(t)) for n, t in _rows(
        lab1, "SELECT column_name, type FROM system_schema.columns "
              "WHERE keyspace_name = 'stresscql' AND table_name = 'typestest'"))
    assert types == {"name": "text", "choice": "boolean", "date": "timestamp",
                     "address": "inet", "dbl": "double", "lval": "bigint", "ival": "int",
                     "uid": "timeuuid", "value": "blob"}
    rows = _rows(lab1, "SELECT name, choice, address, lval, value FROM stresscql.typestest "
                       "LIMIT 2000")
    assert len(rows) > 20
    names = {str(r[0]) for r in rows}
    # name: size uniform(1..10), population uniform(1..10): at most 10 distinct names.
    assert 1 < len(names) <= 10 and all(1 <= len(n) <= 10 for n in names), names
    assert {r[1] for r in rows} <= {True, False}
    for r in rows:
        assert isinstance(ipaddress.ip_address(str(r[2])), ipaddress.IPv4Address)
        # lval: population gaussian(1..1000); value: the default size uniform(4..8) bytes.
        assert 1 <= int(str(r[3])) <= 1000
        assert 4 <= (len(str(r[4])) - 2) // 2 <= 8, r[4]


def test_collections_user_types_and_counters_are_written(lab1: Lab, tmp_path: Path) -> None:
    people = tmp_path / "people.yaml"
    people.write_text(COLLECTIONS)
    got, _ = _stress(f"profile={people}", "ops(insert=3,one=1)", "n=200")
    assert got["Total errors"] == 0
    # As JSON, so that each CQL type reads back as what it is (a set as a list).
    rows = [json.loads(str(r[0])) for r in _rows(
        lab1, "SELECT JSON tags, visits, scores, home, wake, pair, balance, born "
              "FROM it_user_types.people LIMIT 50")]
    assert len(rows) == 50
    for row in rows:
        assert len(row["tags"]) == 3  # size: fixed(3) elements
        assert 4 <= len(row["visits"]) <= 8  # the default size, uniform(4..8)
        assert isinstance(row["scores"], dict) and 1 <= len(row["scores"]) <= 2
        assert set(row["home"]) == {"street", "zip", "at"}
        assert all(v is not None for v in row["home"].values()), row["home"]
        assert isinstance(ipaddress.ip_address(row["home"]["at"]), ipaddress.IPv4Address)
        assert len(row["pair"]) == 2 and all(isinstance(v, int) for v in row["pair"])
        assert isinstance(row["balance"], float | int)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["born"]), row["born"]
        assert re.fullmatch(r"\d{2}:\d{2}:\d{2}(\.\d+)?", row["wake"]), row["wake"]
    counters = tmp_path / "hits.yaml"
    counters.write_text(COUNTERS)
    got, _ = _stress(f"profile={counters}", "ops(insert=1)", "n=100")
    assert got["Total errors"] == 0
    pages = _rows(lab1, "SELECT page, views FROM it_user_types.hits")
    # page: population uniform(1..5), so at most 5 partitions; views += fixed(1) per write.
    assert 1 <= len(pages) <= 5
    assert sum(int(str(v)) for _, v in pages) == 100
