"""Errors of network emulation: bad input (NetSpecError) and failed steps (NetError)."""

from __future__ import annotations

from casslab.core.errors import CasslabError, UsageError


class NetError(CasslabError):
    """Applying, changing, measuring or removing link conditions failed."""


class NetSpecError(NetError, UsageError):
    """A link profile, link name or condition value is invalid; the message names it."""
