"""Levels relative to a peak (`'66%'` of the throughput a `search:` finds), the one bit of
the factor grammar both the spec reader and the factor registry need.

It sits below both `casslab.experiment.spec` and `casslab.experiment.factors`, so
neither has to import the other to read a level (the layers contract in pyproject.toml
keeps it so).
"""

from __future__ import annotations

import re
from typing import Any

from casslab.core.units import parse_fraction


def is_relative(value: Any) -> bool:
    return isinstance(value, str) and bool(re.fullmatch(r"\d+(\.\d+)?%", value.strip()))


def relative_fraction(value: str) -> float:
    return parse_fraction(value, "relative level", at_most=None)
