"""The lab-only walk-through (`make demo` runs the campaign demo, demo_campaign.py).

Brings up a real 3-node lab whose nodes look like Raspberry Pi 3s, writes rows at
consistency ALL, reads them back at ONE through every node, shows `lab status`,
and takes the lab down. Uses the real `casslab` command for the lab's life cycle
and the Python library for the data, as a user script would.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from casslab.core.paths import default_cache, default_home
from casslab.testbed import open_lab

CASSLAB = str(Path(sys.executable).parent / "casslab")
NAME = "demo"
ROWS = 200


def sh(*args: str) -> None:
    print(f"\n$ casslab {' '.join(args)}", flush=True)
    subprocess.run([CASSLAB, *args], check=True)


def main() -> int:
    lab = open_lab(NAME, home=default_home(), cache=default_cache())
    if lab.is_running():
        sh("lab", "down", "--name", NAME, "--wipe")
    try:
        sh("lab", "up", "--nodes", "3", "--name", NAME, "--profile", "rpi3")
        with lab.cql() as cql:
            cql.execute("CREATE KEYSPACE IF NOT EXISTS demo WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 3}", consistency="ALL")
            cql.execute("CREATE TABLE IF NOT EXISTS demo.readings (sensor int, t int, value "
                        "double, PRIMARY KEY (sensor, t))", consistency="ALL")
            started = time.monotonic()
            for i in range(ROWS):
                cql.execute("INSERT INTO demo.readings (sensor, t, value) VALUES (%s, %s, %s)",
                            [i % 10, i, i * 0.5], consistency="ALL")
            took = time.monotonic() - started
            print(f"\nwrote {ROWS} rows at CL ALL in {took:.2f} s "
                  f"({ROWS / took:.0f} rows/s through the Python driver)")
            for node in lab.state().nodes:
                rows = cql.execute("SELECT count(*) FROM demo.readings", consistency="ONE",
                                   host=node.address).rows
                print(f"read at CL ONE through {node.name} ({node.address}): {rows[0][0]} rows")
                if rows[0][0] != ROWS:
                    print(f"error: expected {ROWS} rows", file=sys.stderr)
                    return 1
        sh("lab", "status", "--name", NAME)
        sh("lab", "cql", "--name", NAME, "--node", "3",
           "SELECT sensor, t, value FROM demo.readings WHERE sensor = 7 LIMIT 3")
    finally:
        sh("lab", "down", "--name", NAME, "--wipe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
