"""The CQL worker reports the cluster's verdict, not the driver's wrapper around it, and
speaks the protocol version the pinned driver reads reliably."""

from __future__ import annotations

import io
from typing import Any

from cassandra import ConsistencyLevel, InvalidRequest, Unavailable
from cassandra.cluster import NoHostAvailable
from cassandra.connection import Connection, ConnectionException, _ConnectionIOBuffer
from cassandra.segment import SegmentCodec

from casslab.cassandra.cql_worker import PROTOCOL_VERSION, cluster_verdict, error_reply


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


class _Reader(Connection):
    """The driver's read path alone: its buffers and v5 segment decoding, no socket."""

    def __init__(self) -> None:  # not Connection.__init__: it would open a socket
        self._io_buffer = _ConnectionIOBuffer(self)
        self._current_frame = None
        self.endpoint = "reader"
        self.is_defunct = False
        self.protocol_version = 5
        self.streams: list[int] = []
        self.error: str | None = None
        self._enable_checksumming()

    def process_msg(self, header: Any, body: Any) -> None:
        self.streams.append(header.stream)

    def defunct(self, exc: Exception) -> None:
        self.error = str(exc)
        self.is_defunct = True


def _v5_reads(cut: int) -> _Reader:
    """Two v5 segments of one CQL frame each (READY, streams 1 and 2), as two reads split
    at byte `cut`."""
    wire = io.BytesIO()
    for stream in (1, 2):
        SegmentCodec().encode(wire, bytes([0x85, 0, 0, stream, 0x02, 0, 0, 0, 0]))
    data = wire.getvalue()
    reader = _Reader()
    for chunk in (data[:cut], data[cut:]):
        reader._io_buffer.io_buffer.write(chunk)
        reader.process_io_buffer()
    return reader


def test_the_pinned_driver_loses_a_split_v5_header_so_the_worker_speaks_v4() -> None:
    """cassandra-driver 3.30.1 drops the first bytes of a v5 segment header that a read
    splits (1-5 of its 6 bytes): "CRC mismatch on header". When a new driver passes
    this, PROTOCOL_VERSION can go back to v5."""
    segment = 19  # 6 bytes of header, 9 of frame, 4 of CRC
    for cut in (segment - 2, segment, segment + 6, segment + 8):
        reader = _v5_reads(cut)
        assert (reader.streams, reader.error) == ([1, 2], None), cut
    for cut in (segment + 1, segment + 5):
        reader = _v5_reads(cut)
        assert reader.streams == [1] and "CRC mismatch on header" in (reader.error or "")
    assert PROTOCOL_VERSION == 4
