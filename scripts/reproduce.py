"""Run the studies' reproductions end to end: every spec of a study, then its report.

`make reproduce` runs all five (hours); `make reproduce STUDY=002` one; `SCALE=paper`
runs the studies' own sizes (for a bigger machine or remote hosts), `SCALE=smoke` a few
short trials of each spec. A study's specs are `examples/<study>-*/*.yaml` (one per
experiment the study ran) or, for a study not split yet, `examples/<study>-*.yaml`.
Results go to results/reproduce/<spec name>[-<scale>]/, each with its report.html; a
rerun resumes.

Usage: .venv/bin/python scripts/reproduce.py [--study 002] [--scale paper] [--dry-run]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ("000", "001", "002", "003", "004")


def specs_of(study: str) -> list[Path]:
    """The study's specs in name order: a folder of them, or the single file."""
    found = sorted(ROOT.glob(f"examples/{study}-*/*.yaml"))
    return found or sorted(ROOT.glob(f"examples/{study}-*.yaml"))


def run(argv: list[str]) -> int:
    print("+ " + " ".join(argv), flush=True)
    return subprocess.run(argv, check=False).returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=STUDIES, help="one study (default: all five)")
    ap.add_argument("--scale", help="a size the specs declare (paper) or smoke")
    ap.add_argument("--dry-run", action="store_true", help="list the specs and stop")
    args = ap.parse_args()
    casslab = str(Path(sys.executable).with_name("casslab"))
    failed: list[str] = []
    for study in [args.study] if args.study else list(STUDIES):
        specs = specs_of(study)
        if not specs:
            print(f"error: study {study}: no spec in examples/{study}-*", file=sys.stderr)
            return 2
        for spec in specs:
            results = ROOT / "results" / "reproduce" / (
                spec.stem if spec.parent.name == "examples" else f"{spec.parent.name}-"
                f"{spec.stem}")
            if args.scale:
                results = results.with_name(f"{results.name}-{args.scale}")
            if args.dry_run:
                print(f"{study}: {spec.relative_to(ROOT)} -> {results.relative_to(ROOT)}")
                continue
            t0 = time.monotonic()
            scale = ["--scale", args.scale] if args.scale else []
            code = run([casslab, "experiment", "run", str(spec), "--results", str(results),
                        *scale])
            if code == 0:
                code = run([casslab, "report", str(results)])
            print(f"{spec.relative_to(ROOT)}: {'done' if code == 0 else f'FAILED ({code})'} "
                  f"in {(time.monotonic() - t0) / 60:.1f} min", flush=True)
            if code != 0:
                failed.append(str(spec.relative_to(ROOT)))
                if code == 130:
                    return 130
    if failed:
        print(f"error: {len(failed)} spec(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
