"""Print the findings of campaigns as a Markdown table (for docs/reproductions).

Each results folder's verdicts are the report's Reproduction section (casslab.analysis.
findings, the one verdict engine: each finding's effect with its interval, simultaneous
over a spec's findings); the report is written to a temporary file, the results are not
changed.

Usage: python scripts/verdicts_md.py RESULTS [RESULTS ...]
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

from casslab.analysis.findings import Verdict
from casslab.report.html import build_report


def _p(v: float) -> str:
    return "-" if math.isnan(v) else (f"{v:.2g}" if v < 0.001 else f"{v:.3f}")


def _effect(v: Verdict) -> str:
    ratio = "" if math.isnan(v.ratio) or v.fit else f"; medians x {v.ratio:.2f}"
    return f"{v.interval()}{ratio}"


def rows(results: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        rep = build_report(results, Path(tmp) / "report.html")
    out = []
    for v in rep.reproduction.verdicts:
        n = f"{v.fit.n} (line)" if v.fit else f"{v.n_low} / {v.n_high}"
        out.append(f"| {v.finding.claim} (`{results.name}`) | **{v.label}** | {v.test} | "
                   f"{_p(v.p)} | {_p(v.p_adj)} | {_effect(v)} | {n} |")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    print("| finding (results) | verdict | interval (method, family) | p | p (Bonferroni) | "
          "effect [interval] (coverage) | n |")
    print("|---|---|---|---|---|---|---|")
    for arg in argv:
        for line in rows(Path(arg)):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
