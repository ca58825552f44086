"""Lazily exported package names resolve to what they name, also after every submodule
of the package has been imported (importing a submodule binds its name on the package,
which would hide an exported function of the same name)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = ("casslab.lab", "casslab.load", "casslab.net")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_is_the_named_object_after_all_submodules_load(package: str) -> None:
    code = f"""
import importlib, pkgutil, types
pkg = importlib.import_module({package!r})
for m in pkgutil.iter_modules(pkg.__path__):
    if not m.name.endswith('_daemon'):
        importlib.import_module(f"{package}.{{m.name}}")
bad = [n for n in pkg.__all__ if isinstance(getattr(pkg, n), types.ModuleType)]
print(bad)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    pkg = importlib.import_module("casslab.lab")
    with pytest.raises(AttributeError, match=r"module 'casslab\.lab' has no attribute 'Nope'"):
        _ = pkg.Nope
