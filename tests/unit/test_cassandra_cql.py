"""CqlClient: a worker that dies or hangs is reported with its stderr, never waited on
forever. Real worker processes: the real cql_worker, and small Python workers that
misbehave on purpose."""

from __future__ import annotations

import sys
import time

import pytest

from casslab.cassandra.cql import (
    CqlClient,
    check_consistency,
    check_keyspace_name,
    parse_contact_points,
)
from casslab.core.errors import CqlError, UsageError


def _worker(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_worker_that_dies_is_reported_with_its_stderr() -> None:
    worker = _worker("import sys; sys.stderr.write('driver exploded: libev missing\\n'); "
                     "sys.exit(3)")
    with pytest.raises(CqlError) as info, CqlClient(["127.0.0.1"], netns=None, worker=worker):
        pass
    assert info.value.kind == "WorkerExited"
    assert "code 3" in str(info.value) and "driver exploded: libev missing" in str(info.value)


def test_a_worker_that_never_gets_ready_times_out() -> None:
    worker = _worker("import sys, time; sys.stderr.write('still connecting\\n'); "
                     "sys.stderr.flush(); time.sleep(60)")
    t0 = time.monotonic()
    with pytest.raises(CqlError) as info, CqlClient(["127.0.0.1"], netns=None, worker=worker,
                                                    ready_timeout_s=0.5):
        pass
    assert time.monotonic() - t0 < 10
    assert info.value.kind == "WorkerTimeout"
    assert "within 0.5 s" in str(info.value) and "still connecting" in str(info.value)


def test_a_worker_that_hangs_on_a_statement_times_out_and_is_killed() -> None:
    worker = _worker("import sys, time; print('{\"ready\": true}', flush=True); "
                     "sys.stdin.readline(); time.sleep(60)")
    with CqlClient(["127.0.0.1"], netns=None, worker=worker, response_margin_s=0.3) as cql:
        t0 = time.monotonic()
        with pytest.raises(CqlError) as info:
            cql.execute("SELECT 1", timeout_s=0.2)
        assert time.monotonic() - t0 < 10
        assert info.value.kind == "WorkerTimeout"
        # The hung worker is gone: the next request fails at once instead of reading a
        # late answer to the previous one.
        with pytest.raises(CqlError) as again:
            cql.execute("SELECT 1", timeout_s=0.2)
        assert again.value.kind == "WorkerExited"


def test_answers_split_across_reads_are_joined_into_lines() -> None:
    worker = _worker("import sys, time\n"
                     "sys.stdout.write('{\"rea'); sys.stdout.flush(); time.sleep(0.2)\n"
                     "print('dy\": true}', flush=True)\n"
                     "for line in sys.stdin:\n"
                     "    print('{\"columns\": [\"a\"], \"rows\": [[1]]}', flush=True)\n")
    with CqlClient(["127.0.0.1"], netns=None, worker=worker) as cql:
        assert cql.execute("SELECT a FROM t").rows == [[1]]
        assert cql.execute("SELECT a FROM t").columns == ["a"]


def test_the_real_worker_reports_a_refused_connection() -> None:
    # Port 1 on loopback: nothing listens, the driver is refused at once.
    with pytest.raises(CqlError) as info, CqlClient(
            ["127.0.0.1"], netns=None,
            worker=[sys.executable, "-m", "casslab.cassandra.cql_worker", "--port", "1"]):
        pass
    assert info.value.kind == "NoHostAvailable"
    assert "cannot connect to 127.0.0.1" in str(info.value)


def test_contact_points_take_the_native_port_unless_given() -> None:
    assert parse_contact_points("10.0.0.5, db1:9142,[::1]:9043") == [
        ("10.0.0.5", 9042), ("db1", 9142), ("[::1]", 9043)]


@pytest.mark.parametrize(("text", "named"), [
    ("", "'' names no contact point"), (",,", "',,' names no contact point"),
    ("a,,b", "empty contact point"), ("exa mple:9042", "'exa mple' is not a host"),
    ("127.0.0.1:99999", "port '99999'"), ("127.0.0.1:0", "port '0'"),
    ("h:x", "port 'x'"),
])
def test_a_bad_contact_point_is_named_with_the_option(text: str, named: str) -> None:
    with pytest.raises(UsageError, match=r"^--hosts: ") as exc:
        parse_contact_points(text)
    assert named in str(exc.value)


def test_keyspace_names_follow_cassandras_rule() -> None:
    assert check_keyspace_name("iot_1") == "iot_1"
    for bad in ("a b", "", "x" * 49, "ks;DROP"):
        with pytest.raises(UsageError, match="--keyspace"):
            check_keyspace_name(bad)


def test_consistency_levels_are_checked_and_upper_cased() -> None:
    assert check_consistency("quorum") == "QUORUM"
    with pytest.raises(UsageError, match="--cl: 'MOST' is not a consistency level"):
        check_consistency("MOST")
