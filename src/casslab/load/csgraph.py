"""cassandra-stress's `-graph file=`: an HTML page of the run's intervals.

c-s writes one HTML file holding each run (a "revision") as JSON, drawn in the browser;
a later run with the same file adds its revision. This page does the same without
scripts from the network: the data sit in a `<script type="application/json">` block
(id `casslab-stress-data`, so a later run can read them back) and each revision is
drawn as inline SVG: op rate and the latency percentiles (ms) per interval.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_DATA = re.compile(r'<script type="application/json" id="casslab-stress-data">(.*?)</script>',
                   re.S)
SERIES = (("op/s", "#1f77b4"), ("med", "#2ca02c"), (".95", "#ff7f0e"), (".99", "#d62728"),
          ("max", "#7f7f7f"))


def previous_revisions(path: Path) -> list[dict[str, Any]]:
    """The revisions a page written by this module holds ([] for no or another file)."""
    try:
        m = _DATA.search(path.read_text())
    except OSError:
        return []
    if not m:
        return []
    try:
        data = json.loads(html.unescape(m.group(1)))
    except json.JSONDecodeError:
        return []
    return list(data.get("revisions", [])) if isinstance(data, dict) else []


def revision(name: str, command: str, rows: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """One run: its name, the command line and its interval rows ({time, op/s, med,
    .95, .99, max}, latencies in ms)."""
    return {"revision": name, "command": command, "intervals": [dict(r) for r in rows]}


def _polyline(points: Sequence[tuple[float, float]], xmax: float, ymax: float,
              color: str) -> str:
    w, h = 560.0, 160.0
    coords = " ".join(f"{40 + x / xmax * w:.1f},{10 + h - y / ymax * h:.1f}"
                      for x, y in points)
    return f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{coords}"/>'


def _chart(rows: Sequence[Mapping[str, float]], keys: Sequence[tuple[str, str]],
           title: str) -> str:
    xmax = max((r["time"] for r in rows), default=1.0) or 1.0
    ymax = max((r[k] for r in rows for k, _ in keys), default=1.0) or 1.0
    lines = "".join(_polyline([(r["time"], r[k]) for r in rows], xmax, ymax, c)
                    for k, c in keys)
    legend = " ".join(f'<tspan fill="{c}">{html.escape(k)}</tspan>' for k, c in keys)
    return (f'<svg width="620" height="200" role="img" aria-label="{html.escape(title)}">'
            f'<text x="40" y="195" font-size="11">{html.escape(title)}: {legend} '
            f'(max {ymax:,.1f}; time 0..{xmax:.0f} s)</text>{lines}</svg>')


def page(title: str, revisions: Sequence[Mapping[str, Any]]) -> str:
    """The whole HTML page for these revisions."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>"
             f"{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"]
    for rev in revisions:
        rows = rev["intervals"]
        parts.append(f"<h2>{html.escape(str(rev['revision']))}</h2>"
                     f"<p><code>{html.escape(str(rev['command']))}</code></p>")
        parts.append(_chart(rows, SERIES[:1], "op rate (op/s)"))
        parts.append(_chart(rows, SERIES[1:], "latency (ms)"))
    data = html.escape(json.dumps({"title": title, "revisions": list(revisions)}),
                       quote=False)
    parts.append(f'<script type="application/json" id="casslab-stress-data">{data}</script>'
                 "</body></html>\n")
    return "".join(parts)


def write(path: Path, title: str, new: Sequence[Mapping[str, Any]]) -> None:
    """Write the page: the file's earlier revisions (as c-s appends), then `new`."""
    path.write_text(page(title, [*previous_revisions(path), *new]))
