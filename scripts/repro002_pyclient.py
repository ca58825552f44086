"""Seed 002's own client, run inside a lab: the DataStax Python driver, one request at a
time, unprepared query strings, as in the study's read.py and write.py (Screenshots 7-9).

It writes 1,000 rows, then reads one row 1,000 times, at the consistency level given,
and prints one JSON line: each loop's mean per-request RTT timed around
session.execute (what casslab-load measures), and the study's own figure, (connect +
loop) / 1,000, which also spreads the connection time over the requests. Used by
docs/reproductions/002.md to measure how much of the gap to the paper is the client.

Usage (inside the lab's namespace):
    casslab lab exec --name NAME -- python scripts/repro002_pyclient.py --cl TWO
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid

from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile

HOSTS = ["127.0.1.1", "127.0.1.2", "127.0.1.3"]
N = 1000  # the study's rows written and reads done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cl", default="TWO", choices=["ONE", "TWO", "THREE"])
    ap.add_argument("--n", type=int, default=N, help="writes, then reads (study: 1000)")
    args = ap.parse_args()
    profile = ExecutionProfile(consistency_level=getattr(ConsistencyLevel, args.cl),
                               request_timeout=30)
    setup = Cluster(HOSTS, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    s = setup.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS edgedb WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    s.execute("CREATE TABLE IF NOT EXISTS edgedb.prizes (id uuid PRIMARY KEY, year int, "
              "category text, laureates text)")
    setup.shutdown()
    out: dict[str, object] = {"cl": args.cl}
    n = args.n
    ids = [uuid.uuid4() for _ in range(n)]
    for phase in ("write", "read"):
        cluster = Cluster(HOSTS, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        t0 = time.time()
        session = cluster.connect("edgedb")
        t_mid = time.time()
        per_op = []
        for i in range(n):
            # The study built each query as a string (no prepared statements).
            q = (f"INSERT INTO prizes (id, year, category, laureates) VALUES ({ids[i]}, "
                 f"{1900 + i % 122}, 'physics', 'laureate {i}')" if phase == "write" else
                 f"SELECT * FROM prizes where id={ids[0]}")
            a = time.perf_counter()
            session.execute(q)
            per_op.append((time.perf_counter() - a) * 1000)
        t_end = time.time()
        cluster.shutdown()
        out[f"{phase}_mean_ms"] = round(sum(per_op) / n, 3)
        out[f"{phase}_p50_ms"] = round(sorted(per_op)[n // 2], 3)
        out[f"{phase}_study_ms"] = round((t_end - t0) * 1000 / n, 3)
        out[f"{phase}_connect_ms"] = round((t_mid - t0) * 1000, 1)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
