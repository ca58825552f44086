"""Save the figures of a casslab report.html as PNG files (for docs/reproductions).

The report embeds each figure as <figure id='fig-ID'><img src='data:image/png;base64,...'>;
this writes PREFIX-ID.png per figure, or only the ids named.

Usage: python scripts/report_pngs.py results/x/report.html docs/reproductions/img PREFIX [ID ...]
"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

FIGURE = re.compile(r"<figure id='fig-([^']+)'><img alt='[^']*' src='data:image/png;base64,"
                    r"([A-Za-z0-9+/=]+)'>")


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    page, out, prefix, wanted = Path(argv[0]), Path(argv[1]), argv[2], set(argv[3:])
    out.mkdir(parents=True, exist_ok=True)
    found = 0
    for fid, b64 in FIGURE.findall(page.read_text()):
        if wanted and fid not in wanted:
            continue
        (out / f"{prefix}-{fid}.png").write_bytes(base64.b64decode(b64))
        print(out / f"{prefix}-{fid}.png")
        found += 1
    if wanted and found < len(wanted):
        print(f"error: {page}: found {found} of the figures {', '.join(sorted(wanted))}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
