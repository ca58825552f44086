"""Seed 003's four-stage scenario in compressed time, static compaction (the rules'
optimum for stage 1) against the online tuner: operations, mean and p99 latency and disk
peak per stage. The comparison itself is casslab.tune.paired_run (see its docstring);
this script parses arguments, runs it and prints the table.

Every arm's stage is a trial in the results store (--results, default a new directory
beside --out), the tuners' audit logs in its audit/; --out is the JSON document that
scripts/bench_tune.py --from reads.

    .venv/bin/python scripts/tune_compare.py --reps 1 --out results/tune-compare.json
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

from casslab.core.errors import CasslabError, UsageError
from casslab.core.paths import default_cache, default_home
from casslab.tune.paired import check_modes, table
from casslab.tune.paired_run import CompareOptions, run_comparison
from casslab.tune.rules import RulesError, RulesTable, load_rules, seed003_rules

__all__ = ["compare", "exit_on_sigterm", "load_options", "rules_arg", "table"]


def load_options(*, devices: int = 100, in_flight: int = 16) -> dict[str, Any]:
    """casslab-load options of every run of a comparison (the one place they are put
    together, so a typed options object can take their place)."""
    return {"devices": devices, "in-flight": in_flight}


def default_results(out: Path) -> Path:
    """A new results directory beside `out` per comparison (a store holds one)."""
    return out.parent / f"{out.stem}-{time.strftime('%Y%m%d-%H%M%S')}"


def compare(ap: argparse.ArgumentParser, rules: RulesTable, *, results: Path | None,
            out: Path, **options: Any) -> dict[str, Any]:
    """Runs the comparison with progress on stdout; a casslab error ends the script in
    one line (the labs are down by then)."""
    opts = CompareOptions(results=results or default_results(out), out=out,
                          home=default_home(), cache=default_cache(), **options)
    print(f"results store: {opts.results}", flush=True)
    try:
        return run_comparison(opts, rules, on_message=lambda m: print(m, flush=True))
    except CasslabError as e:
        ap.exit(1, f"{ap.prog}: error: {e}\n")


def exit_on_sigterm() -> None:
    """SIGTERM ends a comparison as Ctrl-C does, through the finally blocks that take the
    labs down (the default action killed the script alone and left both labs running);
    the load clients then end by themselves once their node is gone (--unreachable-after)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def rules_arg(ap: argparse.ArgumentParser, path: Path | None, time_scale: float) -> RulesTable:
    """The --rules file, or seed 003's rules scaled by `time_scale`; a bad file ends the
    script with the rules error in one line."""
    try:
        return load_rules(path) if path else seed003_rules(time_scale=time_scale)
    except RulesError as e:
        ap.error(str(e))


def modes_arg(ap: argparse.ArgumentParser, text: str, parallel: bool) -> tuple[str, str]:
    try:
        modes = check_modes(tuple(text.split(",")))
    except UsageError as e:
        ap.error(f"--{e}")
    if not parallel and modes != ("static", "dynamic"):
        ap.error("--modes needs --parallel (the sequential comparison runs static and dynamic)")
    return modes


def main() -> int:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--time-scale", type=float, default=0.05)
    ap.add_argument("--stage-scale", type=float, default=0.01)
    ap.add_argument("--lab", default="tunecmp")
    ap.add_argument("--profile", default="host")
    ap.add_argument("--keep-lab", action="store_true")
    ap.add_argument("--devices", type=int, default=100)
    ap.add_argument("--in-flight", type=int, default=16)
    ap.add_argument("--out", type=Path, default=Path("results/tune-compare.json"))
    ap.add_argument("--results", type=Path,
                    help="results store directory (default: OUT's name and the start time)")
    ap.add_argument("--warmup-s", type=int, default=90, help="unrecorded load first (JIT)")
    ap.add_argument("--parallel", action="store_true",
                    help="run static and dynamic at once on two 1-node labs, one core each")
    ap.add_argument("--modes", default="static,dynamic",
                    help="with --parallel: the two modes (static, dynamic, observe = dry run)")
    ap.add_argument("--rules", type=Path,
                    help="rules file for the tuner and the static start (e.g. from `casslab "
                         "tune learn`; its TTLs in the scenario's compressed seconds); "
                         "default: seed 003's, scaled by --time-scale")
    a = ap.parse_args()
    modes = modes_arg(ap, a.modes, a.parallel)
    rules = rules_arg(ap, a.rules, a.time_scale)
    doc = compare(ap, rules, results=a.results, out=a.out, reps=a.reps,
                  time_scale=a.time_scale, stage_scale=a.stage_scale, modes=modes,
                  side_by_side=a.parallel, lab_name=a.lab, profile=a.profile,
                  keep_lab=a.keep_lab, warmup_s=a.warmup_s,
                  load_options=load_options(devices=a.devices, in_flight=a.in_flight))
    print("\n".join(table(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
