"""Link probe for real hosts: copied to every host and run there by `python3`, all hosts at
once, one process per host (standard library only: a host has no casslab).

Each process binds one UDP socket to its host's data address and, for the whole run,
echoes every ping it gets; from `start_s` on it also pings its `peers` every
`interval_ms`, `count` times each. Clocks of different hosts are not compared: a ping's
round trip is timed on the host that sent it. The echo side counts the pings it got from
each peer, so loss is known per direction: there (ping -> echo) and back (echo -> reply).

Job (JSON, the first argument, else stdin):
    {"address": "10.0.0.11", "port": 47123, "peers": ["10.0.0.12"],
     "count": 200, "interval_ms": 5, "start_s": 1.0, "duration_s": 4.0}
Result (JSON on stdout):
    {"rtt_ms": {peer: [...]}, "sent": {peer: n}, "echoed": {peer: n}}
    (echoed: pings this host answered)
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import struct
import sys
import time
from typing import Any

_MSG = struct.Struct("!BId")  # kind (0 ping, 1 reply), sequence, sent at (sender's clock)
PAYLOAD = 64


def run(job: dict[str, Any]) -> dict[str, Any]:
    peers = [str(p) for p in job["peers"]]
    port = int(job["port"])
    count, interval_s = int(job["count"]), float(job["interval_ms"]) / 1000
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((str(job["address"]), port))
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    rtt: dict[str, list[float]] = {p: [] for p in peers}
    seen: dict[str, set[int]] = {p: set() for p in peers}
    echoed: dict[str, int] = {}
    t0 = time.perf_counter()
    start, end = t0 + float(job["start_s"]), t0 + float(job["duration_s"])
    sent = 0
    total = count * len(peers)
    while (now := time.perf_counter()) < end:
        while sent < total and now >= start + (sent // len(peers)) * interval_s:
            peer, seq = peers[sent % len(peers)], sent // len(peers)
            msg = _MSG.pack(0, seq, time.perf_counter()).ljust(PAYLOAD, b"\0")
            # An ICMP unreachable may be reported here: the ping counts as lost.
            with contextlib.suppress(OSError):
                sock.sendto(msg, (peer, port))
            sent += 1
        nxt = start + (sent // len(peers)) * interval_s if sent < total else end
        for _ in sel.select(max(0.0, min(nxt - now, 0.05))):
            while True:
                try:
                    data, (addr, _) = sock.recvfrom(2048)
                except (BlockingIOError, ConnectionRefusedError):
                    break
                t = time.perf_counter()
                kind, seq, t_sent = _MSG.unpack_from(data)
                if kind == 0:
                    echoed[addr] = echoed.get(addr, 0) + 1
                    reply = _MSG.pack(1, seq, t_sent).ljust(PAYLOAD, b"\0")
                    with contextlib.suppress(OSError):
                        sock.sendto(reply, (addr, port))
                elif addr in seen and seq not in seen[addr]:
                    seen[addr].add(seq)
                    rtt[addr].append((t - t_sent) * 1000)
    sock.close()
    return {"rtt_ms": rtt, "sent": dict.fromkeys(peers, count), "echoed": echoed}


def main() -> None:
    try:
        result = run(json.loads(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()))
    except (OSError, ValueError, KeyError) as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
