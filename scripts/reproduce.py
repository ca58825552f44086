"""`make reproduce`: `casslab reproduce STUDY` for one study or all five, in turn.

Each study's specs run (resumable) and its doc's generated blocks are written from the
results databases by the package (casslab.report.reproduce); this only loops over the
studies. `make reproduce STUDY=002 SCALE=smoke` runs one.

Usage: .venv/bin/python scripts/reproduce.py [--study 002] [--scale here|paper|smoke|...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

STUDIES = ("000", "001", "002", "003", "004")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=STUDIES, help="one study (default: all five)")
    ap.add_argument("--scale", default="here", help="here (default), paper, smoke or another "
                    "size the study's specs offer (002: paper-rounds)")
    args = ap.parse_args()
    casslab = str(Path(sys.executable).with_name("casslab"))
    for study in [args.study] if args.study else list(STUDIES):
        argv = [casslab, "reproduce", study, "--scale", args.scale]
        print("+ " + " ".join(argv), flush=True)
        code = subprocess.run(argv, check=False).returncode
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
