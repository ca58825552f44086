"""Shared by the bench scripts: describe the machine, replace a section of BENCHMARKS.md."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text()
                .splitlines() if ln.startswith("model name")), platform.processor())
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB, {platform.platform()}"


def today() -> str:
    return datetime.date.today().isoformat()


def write_section(key: str, title: str, lines: list[str]) -> None:
    """Replace the text between `<!-- bench:KEY:begin/end -->` (append the section if new)."""
    begin, end = f"<!-- bench:{key}:begin -->", f"<!-- bench:{key}:end -->"
    body = "\n".join([begin, *lines, end])
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text:
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = head + body + tail
    else:
        text = text.rstrip("\n") + f"\n\n## {title}\n\n{body}\n"
    path.write_text(text)
