"""`casslab reproduce` for seeds 000 and 004 (as 002's tests do for 002): fabricated
campaign databases of their real specs, no lab; the doc's verdicts are the engine's, the
paper size's own findings (000's patterns over 1..6 nodes) reach the report through the
stored spec's digest, and 004's interleaved rounds pair its arms."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from repro_fixture import ROOT, fabricate

from casslab.report.reproduce import begin_marker, campaigns, end_marker, write_doc

EXAMPLES = ROOT / "examples"


def _docs(tmp_path: Path, study: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(ROOT / "docs" / "reproductions" / f"{study}.md", docs / f"{study}.md")
    return docs


def _rows(text: str, campaign: str) -> list[str]:
    m = re.search(re.escape(begin_marker("verdicts")) + r"\n(.*?)\n" +
                  re.escape(end_marker("verdicts")), text, re.S)
    assert m is not None
    return [ln for ln in m.group(1).splitlines() if f"| `{campaign}` |" in ln]


def pi_runtime(p: dict[str, Any]) -> float:
    """Run time growing 5 % per node; Wi-Fi 30 % slower, and under Wi-Fi for A, C, E
    even node counts a further 15 % (the thesis' zig-zag)."""
    wifi = p["network"] == "wifi"
    zig = wifi and p["workload"] != "ycsb-i" and p["nodes"] % 2 == 0
    return 2.0 * 1.05 ** p["nodes"] * (1.3 if wifi else 1.0) * (1.15 if zig else 1.0)


def test_000_at_paper_size_decides_its_patterns_over_six_node_counts(tmp_path: Path) -> None:
    camps = [c for c in campaigns("000", EXAMPLES, tmp_path / "r", "paper")
             if c.spec.stem == "links"]
    fabricate(camps[0].results, camps[0].spec, pi_runtime, scale="paper")
    text = write_doc("000", camps, _docs(tmp_path, "000"))[0].read_text()
    rows = _rows(text, "000-rpi-iot-links-paper")
    assert len(rows) == 5  # the paper size's findings (its override), not the here-size's 3
    trend = next(r for r in rows if r.startswith("| run time grows with node count, 1..6"))
    zig = next(r for r in rows if r.startswith("| under Wi-Fi, 1, 3, 5 nodes beat 2, 4, 6"))
    assert "**holds**" in trend and "slope of log runtime_s per unit of nodes" in trend
    assert "**holds**" in zig and "the claimed parity's excess over the line" in zig
    assert "simultaneous over 5 findings" in zig


def test_000_as_written_leaves_the_patterns_to_the_paper_size(tmp_path: Path) -> None:
    camps = [c for c in campaigns("000", EXAMPLES, tmp_path / "r", "here")
             if c.spec.stem == "links"]
    # 20 rounds: the spec adds rounds until decisive (its sequence is finite from round 9)
    fabricate(camps[0].results, camps[0].spec, pi_runtime, trials=20)
    rows = _rows(write_doc("000", camps, _docs(tmp_path, "000"))[0].read_text(),
                 "000-rpi-iot-links")
    # its two Wi-Fi findings; the 1 -> 2 node step is nodes.yaml's
    assert len(rows) == 2 and all("**holds**" in r for r in rows), rows


def container_runtime(p: dict[str, Any]) -> float:
    """LXC 10 % slower than a plain process; netns between them."""
    return {"lxc": 1.10, "netns": 1.04, "process": 1.0}[p["runtime"]] * (
        1.5 if p["threads"] == 450 else 1.0)


FIXED_ROUNDS = "design: {trials: 3, warmup_trials: 1, order: interleaved, seed: 4}\n"


def _fixed_rounds(tmp_path: Path, stem: str) -> Path:
    """A copy of the 004 examples whose `stem` runs 3 fixed interleaved rounds (every
    004 spec now adds rounds until decisive)."""
    out = tmp_path / "examples"
    shutil.copytree(EXAMPLES / "004-containers", out / "004-containers")
    path = out / "004-containers" / f"{stem}.yaml"
    text = re.sub(r"^design: \{.*?\}\n", FIXED_ROUNDS, path.read_text(),
                  count=1, flags=re.M | re.S)
    assert FIXED_ROUNDS in text
    path.write_text(text)
    return out


@pytest.mark.parametrize(("stem", "rounds", "method"), [
    # A fixed number of rounds: a paired t interval.
    ("3-read", 3, "paired t on per-round log-ratios (interleaved rounds)"),
    # Rounds added until the verdicts are decisive: the anytime-valid sequence.
    ("1-mixed", 12, "anytime-valid, running intersection on per-round log-ratios"),
])
def test_004s_interleaved_rounds_pair_its_arms(tmp_path: Path, stem: str, rounds: int,
                                               method: str) -> None:
    examples = _fixed_rounds(tmp_path, stem) if "paired t" in method else EXAMPLES
    camps = [c for c in campaigns("004", examples, tmp_path / "r", "here")
             if c.spec.stem == stem]
    fabricate(camps[0].results, camps[0].spec, container_runtime, trials=rounds)
    rows = _rows(write_doc("004", camps, _docs(tmp_path, "004"))[0].read_text(),
                 f"004-containers-{stem}")
    kind = stem.split("-")[1]
    latency = next(r for r in rows if r.startswith(f"| {kind}: bare metal has less latency"))
    # one log-ratio per round (both thread counts averaged in it)
    assert method in latency
    assert "**holds**" in latency and latency.endswith(f"| {rounds} / {rounds} |")
