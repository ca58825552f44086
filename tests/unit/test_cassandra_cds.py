"""The class-data-sharing archive: named per JDK and jars, written by one JVM, adopted
only when the JVM accepts it (a real JVM, a tiny classpath)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from casslab.cassandra import cds
from casslab.cassandra.distribution import Distribution, find_java


@pytest.fixture
def dist(tmp_path: Path) -> Distribution:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "a.jar").write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip
    return Distribution("5.0.6", lib, find_java())


def test_the_archive_is_named_for_the_version_and_changes_with_the_jars(
        dist: Distribution) -> None:
    first = cds.archive_path(dist)
    assert first.parent == dist.lib_dir and first.name.startswith("casslab-cds-5.0.6-")
    assert cds.archive_path(dist) == first
    os.utime(dist.lib_dir / "a.jar", ns=(1, 1))
    assert cds.archive_path(dist) != first


def test_without_an_archive_only_the_chosen_jvm_writes_one_under_a_partial_name(
        dist: Distribution) -> None:
    assert cds.jvm_options(dist, may_dump=False) == []
    opts = cds.jvm_options(dist, may_dump=True)
    assert opts[:2] == cds.AGENT_OPTIONS
    target = opts[2].removeprefix("-XX:ArchiveClassesAtExit=")
    assert target.startswith(str(cds.archive_path(dist)) + ".")
    assert target.endswith(".partial")


def _dump(dist: Distribution, to: Path) -> None:
    subprocess.run([dist.java, f"-XX:ArchiveClassesAtExit={to}", "-cp", dist.classpath,
                    "-version"], capture_output=True, check=True, timeout=60)


def test_a_written_archive_is_adopted_and_used_and_a_truncated_one_never(
        dist: Distribution, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    archive = cds.archive_path(dist)
    truncated = archive.with_name(archive.name + ".1.1.partial")
    _dump(dist, truncated)
    truncated.write_bytes(truncated.read_bytes()[:4096])
    assert cds.jvm_options(dist, may_dump=False) == []
    assert not archive.exists() and truncated.exists()  # fresh: maybe still being written
    _dump(dist, archive.with_name(archive.name + ".2.2.partial"))
    assert cds.jvm_options(dist, may_dump=True) == [*cds.AGENT_OPTIONS,
                                                    f"-XX:SharedArchiveFile={archive}"]
    assert archive.exists()
    os.utime(truncated, (0, 0))  # long abandoned: removed on the next look
    archive.unlink()
    cds.jvm_options(dist, may_dump=False)
    assert not truncated.exists()
    # The JVM that crashed on the truncated file left no crash report here.
    assert list(tmp_path.glob("hs_err*")) == []
