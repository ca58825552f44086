"""Which integration tests share a pytest worker: the stand-in hosts' modules.

`make test` runs the integration tests on two xdist workers, a module per worker at a time
(`--dist loadfile`). The stand-in hosts are made once per worker (a session fixture) and
their Cassandra jars unpacked once per set, so every module that uses them goes to the
same worker as one unit: tests/conftest.py's scheduler gives them one scope. (xdist's
own `--dist loadgroup` does not group under pytest 9: it renames `item._nodeid`, which
pytest no longer reads.)
"""

from __future__ import annotations

HOSTS_PREFIXES = ("test_hosts_", "test_sshhosts")
HOSTS_SCOPE = "tests/integration/(the stand-in hosts' modules)"


def is_hosts_module(stem: str) -> bool:
    """A module that makes or shares stand-in hosts, by its file name."""
    return stem.startswith(HOSTS_PREFIXES)


def scope_of(nodeid: str) -> str:
    """The unit a worker takes: the module, or all the hosts modules together."""
    path = nodeid.split("::", 1)[0]
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return HOSTS_SCOPE if is_hosts_module(stem) else path
