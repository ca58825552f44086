"""A CQL session serving JSON-line requests on stdin; run inside the lab namespace.

The lab's addresses exist only inside its network namespace, so the Python
driver runs in a child process started in that namespace. Protocol, one JSON
object per line:
  request:  {"query": str, "consistency": "ONE", "host": "127.0.1.2"|null,
             "timeout_s": 10, "params": [..]|null}
  response: {"columns": [...], "rows": [[...]]} or {"error": {"kind", "message"}}
The first line written is {"ready": true} or {"error": ...} when no node answered.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import ipaddress
import json
import sys
import uuid
from typing import Any

# CQL protocol v4, not the v5 the driver would negotiate with Cassandra 5. The Python
# driver (cassandra-driver 3.30.1) drops the bytes of a v5 segment header that arrives
# split, 1-5 of its 6 bytes in one read (_process_segment_buffer leaves the buffer at its
# end, and the reset after it keeps only what lies beyond): the next read then fails with
# "CRC mismatch on header" and the connection dies. A delayed or lossy link splits reads
# where a LAN does not; a Wi-Fi lab did once (2026-11-27). v4 has no segment layer, and
# nothing casslab sends through this worker needs v5. test_cql_worker.py keeps a
# reproduction of the driver's behaviour: when a new driver passes it, v5 can come back.
PROTOCOL_VERSION = 4


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    if isinstance(value, uuid.UUID | decimal.Decimal | ipaddress.IPv4Address):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    return str(value)


def error_reply(exc: BaseException) -> dict[str, Any]:
    """The JSON line answering a request that failed: the exception's kind and message."""
    return {"error": {"kind": type(exc).__name__, "message": str(exc)}}


def cluster_verdict(exc: BaseException) -> BaseException:
    """The cluster's own answer inside a NoHostAvailable, if one host gave one.

    The driver retries an Unavailable on the next host; when that host's pool is
    down (a CPU-starved lab) the retry fails to connect and the caller sees
    NoHostAvailable, which hides that a replica count was the real reason.
    """
    from cassandra import RequestExecutionException, RequestValidationException
    from cassandra.cluster import NoHostAvailable

    if isinstance(exc, NoHostAvailable) and isinstance(exc.errors, dict):
        for inner in exc.errors.values():
            if isinstance(inner, RequestExecutionException | RequestValidationException):
                verdict: BaseException = inner
                return verdict
    return exc


def _pinned_host(cluster: Any, session: Any, address: str) -> Any:
    """The driver's Host for `address`, with a connection pool to it.

    A node that was slow to answer while the session connected (a CPU-starved
    lab) is marked down and gets no pool; a request pinned to it would fail
    with "Host has been marked down or removed" although the node is fine now.
    """
    host = cluster.metadata.get_host(address)
    if host is None:
        raise LookupError(f"no node {address} in the cluster's metadata")
    pool = session._pools.get(host)  # the driver exposes no public pool lookup
    if pool is None or pool.is_shutdown:
        session.add_or_renew_pool(host, is_host_addition=False).result()
    return host


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contact", required=True, help="comma-separated node addresses")
    parser.add_argument("--port", type=int, default=9042)
    args = parser.parse_args()

    # Imported here so `--help` works without the driver's import cost.
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import RoundRobinPolicy
    from cassandra.query import SimpleStatement, tuple_factory

    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(),
                               row_factory=tuple_factory, request_timeout=10.0)
    cluster = Cluster(
        contact_points=args.contact.split(","),
        port=args.port,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=15,
        control_connection_timeout=15,
        protocol_version=PROTOCOL_VERSION,
    )
    out = sys.stdout
    try:
        session = cluster.connect()
    except Exception as exc:
        out.write(json.dumps(error_reply(exc)) + "\n")
        out.flush()
        return 1
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                req = json.loads(line)
                level = getattr(ConsistencyLevel, req.get("consistency") or "ONE")
                stmt = SimpleStatement(req["query"], consistency_level=level)
                host = None
                if req.get("host"):
                    host = _pinned_host(cluster, session, req["host"])
                result = session.execute(stmt, req.get("params"), host=host,
                                         timeout=float(req.get("timeout_s") or 10.0))
                rows = [[_plain(v) for v in row] for row in result]
                resp: dict[str, Any] = {"columns": list(result.column_names or []), "rows": rows}
            except Exception as exc:
                resp = error_reply(cluster_verdict(exc))
            out.write(json.dumps(resp) + "\n")
            out.flush()
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
