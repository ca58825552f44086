"""A compact campaign on a real 3-node lab, then its report (`make demo` runs this).

3 nodes (Raspberry Pi 3 profile), YCSB A and I at RF 3, Ethernet vs Wi-Fi links,
5 kept trials per cell after 1 warm-up, 1,000 operations each, in a seeded random
order (so warming caches do not favour whichever cell runs last). Prints the report's
path and a summary table. About 5 minutes on 2 cores.

Usage: .venv/bin/python scripts/demo_campaign.py [--results DIR] [--lab NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console

from casslab.cli.report import print_cells
from casslab.core.errors import CasslabError
from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec
from casslab.report.html import build_report

SPEC = """\
name: demo
lab: {{nodes: 3, profile: rpi3}}
workload:
  name: ycsb-a
  records: 1000
  options: {{in-flight: 4, rf: 3}}
factors:
  - {{name: workload, levels: [ycsb-a, ycsb-i]}}
  - {{name: network, levels: [ethernet, wifi]}}
design: {{trials: 5, warmup_trials: 1, randomize: true, seed: 1}}
stop: {{ops: 1000, timeout_s: 120}}
analysis: {{response: runtime_s}}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path,
                    default=Path("results") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}")
    ap.add_argument("--lab", default="demo-exp")
    args = ap.parse_args()
    console = Console()
    spec = parse_spec(SPEC.format(), source="demo")
    t0 = time.monotonic()

    def on_event(e: Event) -> None:
        if e.kind in ("plan", "lab", "trial-end", "message", "prepare"):
            done = f"[{e.done}/{e.total}] " if e.total else ""
            console.print(f"{done}{e.message}", highlight=False, markup=False)

    try:
        outcome = CampaignRunner(spec, args.results, home=default_home(),
                                 cache=default_cache(), lab_name=args.lab,
                                 on_event=on_event).run()
        report = build_report(args.results)
    except CasslabError as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False)
        return 1
    print_cells(report.analysis)
    console.print(f"{outcome.done} trials in {time.monotonic() - t0:.0f} s "
                  f"({outcome.failed} failed)")
    console.print(f"report: {report.path.resolve()}")
    return 0 if outcome.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
