"""A lab's live metrics for Prometheus: each node's CPU, disk I/O, memory and data size
(what the metrics sampler reads, as counters and gauges) and the link conditions in
force, served as Prometheus text on /metrics (`casslab lab metrics --serve ADDR`).

Counters are the processes' own cumulative counts, not the sampler's rates: Prometheus
takes rates itself (`rate(casslab_node_cpu_seconds_total[30s])`), and a scrape then
needs no state of its own. Each scrape reads the lab's state afresh, so nodes that
restart and conditions that `casslab net set` changes show at the next scrape.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from casslab.core.errors import UsageError
from casslab.lab import Lab
from casslab.lab.state import LabState
from casslab.metrics.sampler import du_mib, read_proc
from casslab.net import emulator
from casslab.net.emulator import NetState

MIB = 1024 * 1024

_HELP = {
    "casslab_node_cpu_seconds_total": ("counter", "CPU time of the node's JVM, by mode."),
    "casslab_node_disk_read_bytes_total": ("counter", "Bytes the node's JVM read from the "
                                           "block layer (/proc/<pid>/io read_bytes)."),
    "casslab_node_disk_written_bytes_total": ("counter", "Bytes the node's JVM wrote to the "
                                              "block layer (/proc/<pid>/io write_bytes)."),
    "casslab_node_rss_bytes": ("gauge", "Resident memory of the node's JVM."),
    "casslab_node_data_bytes": ("gauge", "Size of the node's data directory."),
    "casslab_node_up": ("gauge", "1 when the node's process runs."),
    "casslab_link_delay_seconds": ("gauge", "Configured one-way delay of a link."),
    "casslab_link_jitter_seconds": ("gauge", "Configured jitter of a link."),
    "casslab_link_loss_ratio": ("gauge", "Configured packet loss of a link (0..1)."),
    "casslab_link_rate_bytes_per_second": ("gauge", "Configured rate of a link "
                                           "(absent: unlimited)."),
}


def _labels(**kv: str) -> str:
    body = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                    for k, v in kv.items())
    return "{" + body + "}"


def render(state: LabState, net: NetState | None) -> str:
    """Prometheus text (format 0.0.4) of a lab's nodes and links now."""
    samples: dict[str, list[str]] = {name: [] for name in _HELP}

    def add(name: str, labels: str, value: float) -> None:
        samples[name].append(f"{name}{labels} {float(value)!r}")

    for n in state.nodes:
        node = f"node{n.index}"
        base = {"lab": state.name, "node": node}
        proc = read_proc(n.pid) if n.pid else None
        add("casslab_node_up", _labels(**base), 0 if proc is None else 1)
        if proc is not None:
            add("casslab_node_cpu_seconds_total", _labels(**base, mode="user"), proc.cpu_user_s)
            add("casslab_node_cpu_seconds_total", _labels(**base, mode="system"),
                proc.cpu_sys_s)
            add("casslab_node_disk_read_bytes_total", _labels(**base), proc.read_bytes)
            add("casslab_node_disk_written_bytes_total", _labels(**base), proc.write_bytes)
            add("casslab_node_rss_bytes", _labels(**base), proc.rss_mib * MIB)
        data = du_mib(Path(n.directory) / "data")
        if data is not None:
            add("casslab_node_data_bytes", _labels(**base), data * MIB)
    for (src, dst), c in sorted((net.table if net else {}).items()):
        link = _labels(lab=state.name, src=src, dst=dst)
        add("casslab_link_delay_seconds", link, c.delay_ms / 1000)
        add("casslab_link_jitter_seconds", link, c.jitter_ms / 1000)
        add("casslab_link_loss_ratio", link, c.loss_pct / 100)
        if c.rate_mbit is not None:
            add("casslab_link_rate_bytes_per_second", link, c.rate_mbit * 1e6 / 8)
    lines = []
    for name, rows in samples.items():
        kind, text = _HELP[name]
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *rows]
    return "\n".join(lines) + "\n"


def lab_text(lab: Lab) -> str:
    """render() of `lab` as its state files say now."""
    state = lab.state()
    return render(state, emulator.load(Path(state.directory)))


def serve(lab: Lab, addr: str) -> ThreadingHTTPServer:
    """Starts serving `lab`'s metrics on HOST:PORT `addr` in a daemon thread; stop it with
    .shutdown(). Raises UsageError (one line naming the address) when it cannot listen."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--serve {addr!r}: give HOST:PORT, e.g. 127.0.0.1:9471")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "casslab serves /metrics")
                return
            body = lab_text(lab).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # a scrape every few seconds is not news

    try:
        server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    except OSError as exc:
        raise UsageError(f"--serve {addr}: cannot listen there ({exc.strerror}); "
                         "give a free HOST:PORT") from exc
    threading.Thread(target=server.serve_forever, name="casslab-exporter", daemon=True).start()
    return server
