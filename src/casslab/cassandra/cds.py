"""A class-data-sharing archive of Cassandra's classes, built once per version and JDK.

Most of a node's start-up on a small machine is loading and verifying Cassandra's
classes; a dynamic CDS archive (Java 13+) maps them ready-made instead (a 3-node lab
started in 0.84 of the time, side by side on this machine).

The archive is a by-product of an ordinary lab: when none exists, the first node of a
lab is started with `-XX:ArchiveClassesAtExit`, so the JVM writes the classes it
loaded when it stops (a few seconds added to `lab down`), under a name of its own
(`.partial`). The next start checks such a file with the JVM itself and keeps it as
the archive, so neither a killed JVM's half-written file nor a concurrent writer is
ever used. The archive sits in the distribution's jar directory, which every runtime
sees at its host path (lxc bind-mounts it read-only).

An archive is valid only for the exact JDK and classpath it was made with: its name
carries a digest of both, so another JDK makes (and uses) its own.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import time
from pathlib import Path

from casslab.cassandra.distribution import Distribution

SUFFIX = ".jsa"
PARTIAL = ".partial"
# A partial file this old is no JVM's dump in progress (a dump takes seconds).
STALE_S = 300.0
# Cassandra runs with the jamm agent; an archive made or used with an agent needs these.
AGENT_OPTIONS = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+AllowArchivingWithJavaAgent"]


def archive_path(dist: Distribution) -> Path:
    """Where the archive for this distribution and its JDK is (or will be)."""
    java = Path(dist.java).resolve()
    modules = java.parent.parent / "lib" / "modules"
    digest = hashlib.sha256()
    digest.update(str(java).encode())
    for path in [modules, *sorted(dist.lib_dir.glob("*.jar"))]:
        try:
            st = path.stat()
        except OSError:
            continue
        digest.update(f"{path.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return dist.lib_dir / f"casslab-cds-{dist.version}-{digest.hexdigest()[:12]}{SUFFIX}"


def jvm_options(dist: Distribution, *, may_dump: bool) -> list[str]:
    """JVM options that use the archive; when there is none yet and `may_dump`, options
    that make this JVM write one when it exits; else none."""
    archive = archive_path(dist)
    if not archive.exists():
        _adopt_partial(dist, archive)
    if archive.exists():
        return [*AGENT_OPTIONS, f"-XX:SharedArchiveFile={archive}"]
    if may_dump and os.access(archive.parent, os.W_OK):
        partial = archive.with_name(f"{archive.name}.{os.getpid()}.{time.time_ns()}{PARTIAL}")
        return [*AGENT_OPTIONS, f"-XX:ArchiveClassesAtExit={partial}"]
    return []


def _adopt_partial(dist: Distribution, archive: Path) -> None:
    """Rename the first partial file that the JVM accepts to `archive`; remove stale
    ones that it refuses."""
    for partial in sorted(archive.parent.glob(f"{archive.name}.*{PARTIAL}")):
        try:
            age_s = time.time() - partial.stat().st_mtime
        except OSError:
            continue  # taken by a concurrent start
        if _accepted(dist, partial):
            os.replace(partial, archive)
            return
        if age_s > STALE_S:
            partial.unlink(missing_ok=True)


def _accepted(dist: Distribution, archive: Path) -> bool:
    """True when the JVM maps `archive` with Cassandra's classpath (-Xshare:on fails
    on a truncated file or a classpath mismatch)."""
    # A truncated archive can crash the JVM rather than fail: its crash report (written
    # to the working directory) goes with a temporary one.
    with tempfile.TemporaryDirectory(prefix="casslab-cds-") as scratch:
        try:
            proc = subprocess.run([dist.java, *AGENT_OPTIONS, "-XX:-CreateCoredumpOnCrash",
                                   "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp",
                                   dist.classpath, "-version"], capture_output=True,
                                  timeout=60, check=False, cwd=scratch)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return proc.returncode == 0
