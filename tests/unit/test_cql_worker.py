"""The CQL worker reports the cluster's verdict, not the driver's wrapper around it."""

from __future__ import annotations

from cassandra import ConsistencyLevel, InvalidRequest, Unavailable
from cassandra.cluster import NoHostAvailable
from cassandra.connection import ConnectionException

from casslab.cassandra.cql_worker import cluster_verdict, error_reply


def test_unavailable_retried_onto_a_down_host_is_reported_as_unavailable() -> None:
    unavailable = Unavailable("Cannot achieve consistency level ALL",
                              consistency=ConsistencyLevel.ALL, required_replicas=3,
                              alive_replicas=2)
    exc = NoHostAvailable("Unable to complete the operation against any hosts", {
        "127.0.1.2": unavailable,
        "127.0.1.1": ConnectionException("Host has been marked down or removed"),
    })
    err = error_reply(cluster_verdict(exc))["error"]
    assert err["kind"] == "Unavailable"
    assert "ALL" in err["message"] and "alive_replicas" in err["message"]


def test_no_host_available_without_a_server_answer_stays_as_it_is() -> None:
    exc = NoHostAvailable("Unable to connect", {
        "127.0.1.1": ConnectionException("refused")})
    assert cluster_verdict(exc) is exc
    assert cluster_verdict(InvalidRequest("bad")).__class__ is InvalidRequest
