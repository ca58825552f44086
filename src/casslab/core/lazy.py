"""Package exports resolved on first use (PEP 562), so importing one module of a package
does not import all of it.

`casslab lab list` imports casslab.lab.state, and with eager package imports that pulled in
the whole lab (cluster, runtimes, profiles, cgroups) and the start-up budget with it.
Packages keep their short public names (`from casslab.net import apply`); type checkers
see the real imports under TYPE_CHECKING.
"""

from __future__ import annotations

import importlib
import sys
import types
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


def keep_exports_over_submodules(package: str, names: tuple[str, ...]) -> None:
    """Importing a submodule binds it on its package under its own name: `casslab.net.check`
    (the module) would hide `casslab.net.check` (the function) once anything imports the
    module. For `names`, the package ignores that binding, so the export resolves through
    `__getattr__` and the module stays reachable through `sys.modules` and `from ... import`.
    """
    module = sys.modules[package]

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in names and isinstance(value, types.ModuleType):
                return
            super().__setattr__(name, value)

    module.__class__ = _Package
