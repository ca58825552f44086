"""Where casslab keeps lab state and downloaded artifacts.

Both roots can be moved with environment variables so tests and CI can use
throw-away state while sharing one artifact cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from casslab.core.errors import UsageError


def default_home() -> Path:
    """Lab state root: $CASSLAB_HOME, else ~/.casslab.

    UsageError naming the variable when it points at a file: without it a lab listing
    would silently show nothing.
    """
    env = os.environ.get("CASSLAB_HOME")
    home = Path(env) if env else Path.home() / ".casslab"
    if home.exists() and not home.is_dir():
        raise UsageError(f"CASSLAB_HOME={home}: is a file, where a directory is needed")
    return home


def default_cache() -> Path:
    """Artifact cache root (Cassandra jars): $CASSLAB_CACHE, else ~/.cache/casslab."""
    env = os.environ.get("CASSLAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "casslab"
