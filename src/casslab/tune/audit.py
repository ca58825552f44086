"""The audit log: one JSON object per line for every decision the tuner makes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

from casslab.core.errors import UsageError


class AuditLog:
    """Appends records to `path` (None: keeps them in memory only, in `records`)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self._fh: TextIO | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = path.open("a")
            except OSError as exc:
                raise UsageError(f"audit log {path}: cannot open: "
                                 f"{exc.strerror or exc}") from None

    def write(self, record: dict[str, Any]) -> None:
        rec = {"ts": round(time.time(), 3), **record}
        self.records.append(rec)
        if self._fh is not None:
            self._fh.write(json.dumps(rec, default=str) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
