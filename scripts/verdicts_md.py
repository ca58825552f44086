"""Print the findings of campaigns as a Markdown table (for docs/reproductions).

Each results folder's verdicts are the report's Reproduction section (casslab.analysis.
findings: the spec's declared findings, two-sided tests Holm-corrected over a spec's
findings); the report is written to a temporary file, the results are not changed.

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
    if v.fit is not None:
        return f"slope {v.fit.slope:.3g} [{v.fit.low:.3g}, {v.fit.high:.3g}]"
    ratio = "-" if math.isnan(v.ratio) else f"x {v.ratio:.2f}"
    return f"{ratio}, {v.effect_name} {v.effect:.2f}"


def rows(results: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        rep = build_report(results, Path(tmp) / "report.html")
    out = []
    for v in rep.reproduction.verdicts:
        n = f"{v.fit.n} (line)" if v.fit else f"{v.n_low} / {v.n_high}"
        out.append(f"| {v.finding.claim} (`{results.name}`) | **{v.verdict}** | {v.test} | "
                   f"{_p(v.p)} | {_p(v.p_holm)} | {_effect(v)} | {n} |")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    print("| finding (results) | verdict | test | p | p (Holm) | effect (to / from) | n |")
    print("|---|---|---|---|---|---|---|")
    for arg in argv:
        for line in rows(Path(arg)):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
