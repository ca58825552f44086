"""Resolve Cassandra's jars from Maven Central with Maven, into a versioned cache.

No binary tarball of Cassandra 5 can be fetched here, so the server runs from
`cassandra-all` and its dependencies on a classpath, as ccm does from a build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from casslab.core.errors import DistributionError, PrerequisiteError, UsageError

DEFAULT_VERSION = "5.0.6"
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>casslab</groupId>
  <artifactId>cassandra-distribution</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


@dataclass(frozen=True)
class Distribution:
    """A resolved Cassandra: its version, jar directory and the java to run it."""

    version: str
    lib_dir: Path
    java: str

    @property
    def classpath(self) -> str:
        return f"{self.lib_dir}/*"

    @property
    def jamm_jar(self) -> Path | None:
        jars = sorted(self.lib_dir.glob("jamm-*.jar"))
        return jars[0] if jars else None


def find_java() -> str:
    """Path of a Java 17+ `java`; PrerequisiteError when none is found."""
    java = shutil.which("java")
    if java is None:
        raise PrerequisiteError("java not found on PATH: Cassandra 5 needs Java 17 (apt-get "
                                "install openjdk-17-jre-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)', out)
    if match is None or int(match.group(1)) < 11:
        raise PrerequisiteError(f"{java} is not Java 11+ ({out.splitlines()[0] if out else '?'}):"
                                " Cassandra 5 needs Java 17")
    return java


def check_version(version: str) -> None:
    """UsageError unless `version` has the form X.Y.Z (checked before anything is made)."""
    if not _VERSION_RE.match(version):
        raise UsageError(f"cassandra version '{version}' is not of the form X.Y.Z "
                         f"(e.g. {DEFAULT_VERSION})")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of `path` that does not exist yet (what mkdir will make)."""
    missing = None
    while not path.exists() and path != path.parent:
        missing, path = path, path.parent
    return missing


def resolve(version: str, cache_dir: Path) -> Distribution:
    """Return the distribution for `version`, downloading its jars once through Maven.

    Raises UsageError for a malformed version, DistributionError for an unknown one,
    PrerequisiteError when java or mvn is missing.
    """
    check_version(version)
    java = find_java()
    root = cache_dir / "cassandra" / version
    lib = root / "lib"
    marker = root / ".complete"
    if marker.exists():
        return Distribution(version, lib, java)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise PrerequisiteError("mvn not found on PATH: casslab resolves Cassandra's jars with "
                                "Maven (apt-get install maven)")
    made = _first_missing(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "pom.xml").write_text(_POM.format(version=version))
    tmp = root / "lib.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(root / "pom.xml"),
           "dependency:copy-dependencies", f"-DoutputDirectory={tmp}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        # An unknown version leaves no cache folder behind (nor the cache root we made).
        shutil.rmtree(made or tmp, ignore_errors=True)
        lines = [_ANSI.sub("", ln) for ln in (proc.stdout + proc.stderr).splitlines()
                 if "ERROR" in ln]
        hint = lines[0].removeprefix("[ERROR] ") if lines else "see `mvn` output"
        raise DistributionError(f"Maven could not resolve cassandra-all {version}: {hint}")
    if not any(tmp.glob("cassandra-all-*.jar")):
        raise DistributionError(f"Maven resolved no cassandra-all jar for {version}")
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    marker.write_text(version)
    return Distribution(version, lib, java)
