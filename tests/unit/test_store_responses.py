"""Response names: every form reads to what it names, anything else is refused with the
valid forms in the message."""

from __future__ import annotations

import pytest

from casslab.store.responses import Response, parse_response


@pytest.mark.parametrize(("name", "expected"), [
    ("read.mean_ms", Response("read.mean_ms", "summary", "mean_ms", op="read")),
    ("all.p999_ms", Response("all.p999_ms", "summary", "p999_ms", op="ALL")),
    ("insert.ops_s", Response("insert.ops_s", "summary", "ops_s", op="insert")),
    ("p99_ms", Response("p99_ms", "summary", "p99_ms")),
    ("runtime_s", Response("runtime_s", "summary", "runtime_s")),
    ("node_cpu_pct", Response("node_cpu_pct", "node", "node_cpu_pct", how="mean")),
    ("disk_write_kib_s.sum", Response("disk_write_kib_s.sum", "node", "disk_write_kib_s",
                                      how="sum")),
    ("rss_mib.node2", Response("rss_mib.node2", "node", "rss_mib", how="node2")),
    ("host_cpu_pct", Response("host_cpu_pct", "host", "host_cpu_pct")),
    ("stage.stage2.ops_s", Response("stage.stage2.ops_s", "stage", "ops_s", stage="stage2")),
    ("stage.warm-up_1.p99_ms", Response("stage.warm-up_1.p99_ms", "stage", "p99_ms",
                                        stage="warm-up_1")),
])
def test_each_form_reads_to_what_it_names(name: str, expected: Response) -> None:
    assert parse_response(name) == expected


@pytest.mark.parametrize("name", ["speed", "read.speed", "node_cpu_pct.max", "READ.mean_ms",
                                  "host_cpu_pct.sum", "node_cpu_pct.ops_s", ".mean_ms", "",
                                  "stage.s1.runtime_s", "stage..ops"])
def test_an_invalid_name_is_refused_with_the_valid_forms(name: str) -> None:
    with pytest.raises(ValueError, match=r"is not a valid response \(valid: <op>\.<metric>.*"
                                         r"node_cpu_pct"):
        parse_response(name)


def test_units_follow_the_metric() -> None:
    assert parse_response("update.p99_ms").unit == "ms"
    assert parse_response("node_cpu_pct.sum").unit == "% of one core"
    assert parse_response("disk_read_kib_s").unit == "KiB/s"
    assert parse_response("stage.stage1.ops_s").unit == "ops/s"
    assert parse_response("stage.stage1.max_ms").unit == "ms"
