"""Package exports resolved on first use (PEP 562), so importing one module of a package
does not import all of it.

`casslab lab list` imports casslab.lab.state, and with eager package imports that pulled in
the whole lab (cluster, runtimes, profiles, cgroups) and the start-up budget with it.
Packages keep their short public names (`from casslab.net import apply`); type checkers
see the real imports under TYPE_CHECKING.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any],
                                                            Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: name -> the module that defines it."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__
