"""Chaos Mesh's admission checks of string fields, which its CRD does not carry.

Chaos Mesh types some string fields (`webhook:"Duration"`, `"FloatStr"`, `"Rate"` struct
tags in its api module's v1alpha1/*.go) and its admission webhook parses them; the CRD
says only `type: string`, so a cluster refuses "5 ms" at admission, not by schema. Which
fields carry which tag is read from the Go source by `make k8s-schemas` and recorded in
the schema file (`webhook.fields`); the parsers below follow the webhook's Go code
(api/v1alpha1/common_webhook.go and networkchaos_webhook.go):
- Duration: Go's time.ParseDuration; an empty string passes (the webhook allows it);
- FloatStr: Go's strconv.ParseFloat (decimal, exponent, inf, nan; hex floats, which Go
  also takes, are refused here);
- Rate: a whole number and one of the units bit, kbit, mbit, gbit, tbit, bps, kbps,
  mbps, gbps, tbps (case and surrounding blanks ignored).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_DURATION = re.compile(r"[-+]?(0|((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)")
_FLOAT = re.compile(r"[-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|inf|infinity|nan)",
                    re.IGNORECASE)
# Longest first, as the webhook tries them: "kbps" before "bps", "kbit" before "bit".
_RATE_UNITS = ("kbit", "mbit", "gbit", "tbit", "tbps", "gbps", "mbps", "kbps", "bps", "bit")


def _duration(value: str) -> str | None:
    if value == "" or _DURATION.fullmatch(value):
        return None
    return "is not a Go duration (a number and ns, us, ms, s, m or h, e.g. 5ms)"


def _float(value: str) -> str | None:
    return None if _FLOAT.fullmatch(value) else "is not a decimal number (e.g. 0.5)"


def _rate(value: str) -> str | None:
    s = value.strip().lower()
    unit = next((u for u in _RATE_UNITS if s.endswith(u)), None)
    if unit is not None and s.removesuffix(unit).strip().isdigit():
        return None
    return f"is not a whole number and a unit ({', '.join(sorted(_RATE_UNITS))})"


CHECKS = {"Duration": _duration, "FloatStr": _float, "Rate": _rate}


def problems(obj: dict[str, Any], fields: dict[str, str]) -> list[tuple[list[Any], str]]:
    """(path, problem) for each tagged field of `obj` its webhook would refuse; `fields`
    maps a dotted path (`spec.delay.latency`, `[]` for a list's items) to its tag."""
    out: list[tuple[list[Any], str]] = []
    for dotted, tag in sorted(fields.items()):
        check = CHECKS.get(tag)
        if check is None:
            continue
        for path, value in _at(obj, dotted.split(".")):
            problem = check(value) if isinstance(value, str) else None
            if problem is not None:
                out.append((path, f"{value!r} {problem} (Chaos Mesh's {tag} webhook check)"))
    return out


def _at(node: Any, parts: list[str], path: list[Any] | None = None
        ) -> Iterator[tuple[list[Any], Any]]:
    path = path or []
    if not parts:
        yield path, node
        return
    name, rest = parts[0], parts[1:]
    items = name.endswith("[]")
    key = name.removesuffix("[]")
    if not isinstance(node, dict) or key not in node:
        return
    child = node[key]
    if items:
        for i, item in enumerate(child if isinstance(child, list) else []):
            yield from _at(item, rest, [*path, key, i])
    else:
        yield from _at(child, rest, [*path, key])
