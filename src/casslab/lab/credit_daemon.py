"""`python -m casslab.lab.credit_daemon LAB_DIR`: the CPU credit controller process.

A module of its own so `-m` does not run casslab.lab.credits a second time (the lab
package imports that one).
"""

from __future__ import annotations

import sys
from pathlib import Path

from casslab.lab.credits import run


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m casslab.lab.credit_daemon LAB_DIR", file=sys.stderr)
        return 2
    return run(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
