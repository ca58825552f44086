"""Where casslab keeps lab state and downloaded artifacts.

Both roots can be moved with environment variables so tests and CI can use
throw-away state while sharing one artifact cache.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


def default_home() -> Path:
    """Lab state root: $CASSLAB_HOME, else ~/.casslab.

    NotADirectoryError naming the variable when it points at a file: without it a lab
    listing would silently show nothing.
    """
    env = os.environ.get("CASSLAB_HOME")
    home = Path(env) if env else Path.home() / ".casslab"
    if home.exists() and not home.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "CASSLAB_HOME is not a directory", str(home))
    return home


def default_cache() -> Path:
    """Artifact cache root (Cassandra jars): $CASSLAB_CACHE, else ~/.cache/casslab."""
    env = os.environ.get("CASSLAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "casslab"
