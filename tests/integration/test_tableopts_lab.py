"""A table.compression factor on a real lab: each cell's trial runs on a table whose
system_schema entry has that cell's compression."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec

from labtools import leftovers

LAB = "itexp-tableopts"
SPEC = """
name: itexp-tableopts
lab: {nodes: 1, profile: container}
workload: {name: ycsb-a, records: 200}
factors:
  - {name: table.compression, levels: [zstd, none]}
design: {trials: 1}
stop: {ops: 200, timeout_s: 120}
metrics: {cql: false}
"""

pytestmark = pytest.mark.integration


def test_a_compression_factor_changes_the_table_in_system_schema(tmp_path: Path) -> None:
    seen: dict[str, str] = {}
    runner: CampaignRunner

    def on_event(e: Event) -> None:
        if e.kind != "trial-start":
            return
        with runner.lab.cql() as cql:
            rows = cql.execute("SELECT compression FROM system_schema.tables WHERE "
                               "keyspace_name = 'ycsb' AND table_name = 'usertable'").rows
            seen[e.cell] = str(rows[0][0])

    runner = CampaignRunner(parse_spec(SPEC), tmp_path / "results", home=default_home(),
                            cache=default_cache(), lab_name=LAB, on_event=on_event)
    try:
        outcome = runner.run()
    finally:
        assert not leftovers(LAB)
    assert (outcome.done, outcome.failed) == (2, 0)
    assert "ZstdCompressor" in seen["table.compression=zstd"]
    assert "'enabled': 'false'" in seen["table.compression=none"]
    assert "Compressor" not in seen["table.compression=none"]
