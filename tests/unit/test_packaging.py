"""Packaging: the optional parts' packages are imported only where those parts run, a
missing one is one line naming the extra, the dev extra holds every extra, and the lock
file pins (with hashes) everything the project asks for."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from casslab.core.errors import PrerequisiteError, require_extra

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# extra -> the top-level modules its packages provide
EXTRA_MODULES = {"hosts": ("asyncssh", "ansible"), "parquet": ("pyarrow",),
                 "k8s": ("kubernetes_validate", "jsonschema")}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _top_level_imports(path: Path) -> set[str]:
    """Modules imported at module level, outside `if TYPE_CHECKING:`."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_extras_are_imported_only_inside_functions() -> None:
    optional = {m for modules in EXTRA_MODULES.values() for m in modules}
    eager = {str(p.relative_to(ROOT)): sorted(_top_level_imports(p) & optional)
             for p in (ROOT / "src" / "casslab").rglob("*.py")}
    assert {p: m for p, m in eager.items() if m} == {}


def test_no_extra_package_is_a_base_dependency() -> None:
    base = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert set(EXTRA_MODULES) <= set(extras)
    for extra in EXTRA_MODULES:
        assert not base & {_name(r) for r in extras[extra]}, extra


def test_the_dev_extra_includes_every_extra() -> None:
    dev = PYPROJECT["project"]["optional-dependencies"]["dev"]
    assert f"casslab[{','.join(sorted(EXTRA_MODULES))}]" in dev


def test_the_build_backend_reads_the_spdx_licence() -> None:
    # PEP 639 `license = "SPDX"`: setuptools 77.0.0 is the first to accept it.
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    (setuptools,) = [r for r in PYPROJECT["build-system"]["requires"]
                     if _name(r) == "setuptools"]
    floor = re.search(r">=\s*([\d.]+)", setuptools)
    assert floor and tuple(int(x) for x in floor.group(1).split(".")) >= (77, 0, 0)


def test_a_missing_extra_is_one_line_naming_it() -> None:
    with pytest.raises(PrerequisiteError) as info:
        require_extra("casslab_no_such_module", "hosts", "connecting to real hosts")
    assert str(info.value) == ("connecting to real hosts needs casslab_no_such_module, which "
                               "is not installed: pip install 'casslab[hosts]'")


def test_reading_an_inventory_without_ansible_names_the_hosts_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from casslab.testbed.hosts.inventory import parse
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ansible" else real(name, *a))
    with pytest.raises(PrerequisiteError, match=r"reading inventory h\.yaml needs ansible.*"
                       r"pip install 'casslab\[hosts\]'"):
        parse("all:\n  children:\n    nodes:\n      hosts: {a: {}}\n", "h.yaml")


def test_the_lock_pins_every_requirement_with_hashes() -> None:
    lock = (ROOT / "requirements.lock").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", lock, re.M))
    pinned = {n.lower().replace("_", "-").replace(".", "-") for n in pins}
    wanted = {_name(r).replace(".", "-")
              for r in [*PYPROJECT["project"]["dependencies"],
                        *[r for rs in PYPROJECT["project"]["optional-dependencies"].values()
                          for r in rs]] if not r.startswith("casslab[")}
    assert wanted <= pinned, sorted(wanted - pinned)
    blocks = re.split(r"\n(?=[A-Za-z0-9])", lock.split("\n", 2)[2])
    assert all("--hash=sha256:" in b for b in blocks if "==" in b)
