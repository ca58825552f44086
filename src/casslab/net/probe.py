"""Probe worker: runs INSIDE a lab's namespace (`python -m casslab.net.probe`), reads one
JSON job on stdin, writes one JSON result on stdout. Every socket is bound to the
link's source address, and the socket that opens a flow is created in the cgroup of
the endpoint that owns the flow (packet rules tell links apart by the opener's cgroup:
see casslab.net.rules), so packets travel exactly the emulated directed links.

Job: {"delay": {"pairs": [[a, b, owner], ...], "count": 200, "interval_ms": 5},
      "loss": {"links": [[src, dst, owner], ...], "count": 2000, "rate_pps": 5000},
      "bandwidth": {"links": [[src, dst, owner], ...], "duration_s": 2.0, "warmup_s": 0.5},
      "flows": {"links": [[src, dst, owner], ...], "duration_s": 3.0, "warmup_s": 0.5},
      "cgroup_fds": {"home": 5, "node1": 6, ...},
      "netns_fds": {"10.99.1.1": 7, "10.99.1.254": 8, ...},
      "wait_s": 1.0}
`owner` (optional, may be null) names an entry of `cgroup_fds`: open `cgroup.procs`
descriptors the parent passed in (/sys/fs/cgroup is not visible inside the namespace).
The worker joins that cgroup to create the opening socket, then returns to "home".
`netns_fds` (runtimes netns and lxc, where every endpoint has a network stack of its
own): address -> open network namespace descriptor of the endpoint that owns the
address. Every socket bound to that address is created inside that namespace (a socket
keeps the namespace it was made in), so a probe's packets start where the endpoint's
own packets start and cross its veth, the bridge and the router like them.
`bandwidth` measures one flow at a time, `flows` all of its flows at once.
One event loop, no threads: timestamps are taken when the loop sees a packet.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import socket
import struct
import sys
import time
from collections.abc import Iterator
from typing import Any

_PING = struct.Struct("!IIdd")  # pair index, sequence, sent at, reflected at
_SEQ = struct.Struct("!II")  # link index, sequence
PAYLOAD = 64


_CGROUP_FDS: dict[str, int] = {}
_NETNS_FDS: dict[str, int] = {}
_CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    # os.setns is Python 3.12+; this is its system call.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextlib.contextmanager
def _stack_of(addr: str) -> Iterator[None]:
    """Create sockets in the network namespace of the endpoint owning `addr` (when the
    job names one), then move back to the worker's own."""
    fd = _NETNS_FDS.get(addr)
    if fd is None:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _setns(fd)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(home)


@contextlib.contextmanager
def _owned_by(owner: str | None) -> Iterator[None]:
    """Create sockets inside the owner's cgroup (a socket keeps the cgroup it was made
    in), then move back home."""
    fd = _CGROUP_FDS.get(owner) if owner else None
    if fd is None:
        yield
        return
    os.write(fd, str(os.getpid()).encode())
    try:
        yield
    finally:
        os.write(_CGROUP_FDS["home"], str(os.getpid()).encode())


def _owner(entry: list[Any]) -> str | None:
    return str(entry[2]) if len(entry) > 2 and entry[2] else None


def _udp(addr: str, owner: str | None = None) -> socket.socket:
    with _owned_by(owner), _stack_of(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((addr, 0))
    s.setblocking(False)
    return s


def probe_delay(pairs: list[list[Any]], count: int, interval_ms: float,
                wait_s: float) -> list[dict[str, Any]]:
    """Ping-pong per pair (a -> b -> a): one-way delays both ways and round trips, ms.

    Pings of one pair go out every interval_ms without waiting for replies.
    """
    sel = selectors.DefaultSelector()
    clients, echoes = [], []
    for i, pair in enumerate(pairs):
        a, b = pair[0], pair[1]
        c, e = _udp(a, _owner(pair)), _udp(b)
        clients.append(c)
        echoes.append(e)
        sel.register(c, selectors.EVENT_READ, ("reply", i))
        sel.register(e, selectors.EVENT_READ, ("echo", i))
    fwd: list[list[float]] = [[] for _ in pairs]
    back: list[list[float]] = [[] for _ in pairs]
    rtt: list[list[float]] = [[] for _ in pairs]
    seen: list[set[int]] = [set() for _ in pairs]
    start = time.perf_counter()
    sent = 0
    total = count * len(pairs)
    end = None
    while True:
        now = time.perf_counter()
        while sent < total and now >= start + (sent // len(pairs)) * interval_ms / 1000:
            i, seq = sent % len(pairs), sent // len(pairs)
            msg = _PING.pack(i, seq, time.perf_counter(), 0.0).ljust(PAYLOAD, b"\0")
            clients[i].sendto(msg, echoes[i].getsockname())
            sent += 1
        if sent == total and end is None:
            end = now + wait_s
        if end is not None and (now >= end or sum(map(len, seen)) == total):
            break
        nxt = start + (sent // len(pairs)) * interval_ms / 1000 if sent < total else end
        timeout = max(0.0, (nxt or now) - now)
        for key, _ in sel.select(min(timeout, 0.05)):
            kind, i = key.data
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            while True:
                try:
                    data, peer = sock.recvfrom(2048)
                except BlockingIOError:
                    break
                t = time.perf_counter()
                idx, seq, t_sent, _ = _PING.unpack_from(data)
                if kind == "echo":
                    sock.sendto(_PING.pack(idx, seq, t_sent, t).ljust(PAYLOAD, b"\0"), peer)
                else:
                    _, _, _, t_echo = _PING.unpack_from(data)
                    if seq in seen[i]:
                        continue
                    seen[i].add(seq)
                    fwd[i].append((t_echo - t_sent) * 1000)
                    back[i].append((t - t_echo) * 1000)
                    rtt[i].append((t - t_sent) * 1000)
    for s in clients + echoes:
        s.close()
    return [{"pair": pairs[i], "sent": count, "received": len(rtt[i]), "forward_ms": fwd[i],
             "backward_ms": back[i], "rtt_ms": rtt[i]} for i in range(len(pairs))]


def probe_loss(links: list[list[Any]], count: int, rate_pps: float,
               wait_s: float) -> list[dict[str, Any]]:
    """Send `count` UDP packets per directed link at `rate_pps` in total; count arrivals
    and packets that arrive after a later one (reordering)."""
    sel = selectors.DefaultSelector()
    senders, sinks = [], []
    for i, link in enumerate(links):
        a, b = link[0], link[1]
        s, k = _udp(a, _owner(link)), _udp(b)
        senders.append(s)
        sinks.append(k)
        sel.register(k, selectors.EVENT_READ, i)
    got = [0] * len(links)
    reordered = [0] * len(links)
    top = [-1] * len(links)
    total = count * len(links)
    sent = 0
    start = time.perf_counter()
    end = None
    while True:
        now = time.perf_counter()
        due = min(total, int((now - start) * rate_pps) + 1)
        while sent < due:
            i, seq = sent % len(links), sent // len(links)
            try:
                senders[i].sendto(_SEQ.pack(i, seq).ljust(PAYLOAD, b"\0"),
                                  sinks[i].getsockname())
            except BlockingIOError:
                break
            sent += 1
        if sent == total and end is None:
            end = now + wait_s
        if end is not None and (now >= end or sum(got) == total):
            break
        for key, _ in sel.select(0.001 if sent < total else 0.05):
            i = key.data
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            while True:
                try:
                    data = sock.recv(2048)
                except BlockingIOError:
                    break
                _, seq = _SEQ.unpack_from(data)
                got[i] += 1
                if seq < top[i]:
                    reordered[i] += 1
                top[i] = max(top[i], seq)
    for s in senders + sinks:
        s.close()
    return [{"link": links[i], "sent": count, "received": got[i], "reordered": reordered[i]}
            for i in range(len(links))]


def probe_bandwidth(src: str, dst: str, duration_s: float, warmup_s: float,
                    owner: str | None = None) -> dict[str, Any]:
    """One TCP flow src -> dst for duration_s; goodput after warmup_s, Mbit/s."""
    return probe_flows([[src, dst, owner]], duration_s, warmup_s)[0]


def probe_flows(links: list[list[Any]], duration_s: float,
                warmup_s: float) -> list[dict[str, Any]]:
    """TCP flows on `links` ([src, dst, owner]) all at once for duration_s (so flows that
    share a medium contend); each one's goodput after warmup_s, Mbit/s."""
    flows = [_Flow(x[0], x[1], _owner(x)) for x in links]
    sel = selectors.DefaultSelector()
    for n, f in enumerate(flows):
        sel.register(f.client, selectors.EVENT_WRITE, (n, "send"))
        sel.register(f.server, selectors.EVENT_READ, (n, "recv"))
    chunk = b"\0" * 65536
    start = time.perf_counter()
    t_warm, t_end = start + warmup_s, start + duration_s
    while time.perf_counter() < t_end:
        for key, _ in sel.select(0.05):
            n, what = key.data
            if what == "send":
                with contextlib.suppress(BlockingIOError):
                    flows[n].client.send(chunk)
            else:
                flows[n].receive(t_warm)
    out = [f.result(x) for f, x in zip(flows, links, strict=True)]
    sel.close()
    return out


class _Flow:
    """One connected TCP pair and the bytes its receiver counted after the warm-up."""

    def __init__(self, src: str, dst: str, owner: str | None) -> None:
        with _stack_of(dst):
            listener = socket.socket()
        listener.bind((dst, 0))
        listener.listen(1)
        with _owned_by(owner), _stack_of(src):
            self.client = socket.socket()
        self.client.bind((src, 0))
        self.client.connect(listener.getsockname())
        self.server, _ = listener.accept()
        listener.close()
        for s in (self.client, self.server):
            s.setblocking(False)
        self.counted = 0
        self.first: float | None = None
        self.last: float | None = None

    def receive(self, t_warm: float) -> None:
        try:
            data = self.server.recv(1 << 20)
        except BlockingIOError:
            return
        t = time.perf_counter()
        if t >= t_warm:
            if self.first is None:
                self.first = t
            else:
                self.counted += len(data)
            self.last = t

    def result(self, link: list[Any]) -> dict[str, Any]:
        mss = self.client.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
        for s in (self.client, self.server):
            s.close()
        window = (self.last - self.first) if self.first is not None and self.last is not None \
            else 0.0
        mbit = self.counted * 8 / window / 1e6 if window > 0 else 0.0
        return {"link": [link[0], link[1], _owner(link)], "mbit": mbit, "window_s": window,
                "mss": mss}


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    _CGROUP_FDS.clear()
    _CGROUP_FDS.update({str(k): int(v) for k, v in (job.get("cgroup_fds") or {}).items()})
    if _CGROUP_FDS and "home" not in _CGROUP_FDS:
        raise ValueError("cgroup_fds needs a 'home' entry to return to")
    _NETNS_FDS.clear()
    _NETNS_FDS.update({str(k): int(v) for k, v in (job.get("netns_fds") or {}).items()})
    wait_s = float(job.get("wait_s", 1.0))
    out: dict[str, Any] = {}
    if job.get("delay"):
        d = job["delay"]
        out["delay"] = probe_delay(d["pairs"], int(d["count"]), float(d["interval_ms"]),
                                   wait_s)
    if job.get("loss"):
        lo = job["loss"]
        out["loss"] = probe_loss(lo["links"], int(lo["count"]), float(lo["rate_pps"]), wait_s)
    if job.get("bandwidth"):
        b = job["bandwidth"]
        out["bandwidth"] = [probe_bandwidth(x[0], x[1], float(b["duration_s"]),
                                            float(b["warmup_s"]), _owner(x))
                            for x in b["links"]]
    if job.get("flows"):
        f = job["flows"]
        out["flows"] = probe_flows(f["links"], float(f["duration_s"]), float(f["warmup_s"]))
    return out


def main() -> None:
    job = json.loads(sys.stdin.read())
    try:
        result = run_job(job)
    except (OSError, ValueError) as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
