"""LXC parts shared by the `lxc` node runtime and the systemd stand-in hosts: Debian root
filesystems built once with mmdebstrap and cached, this machine's JDK bind-mounted at its
own path, and removing the cgroups an LXC container leaves behind."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from casslab.core.errors import CommandError, PrerequisiteError
from casslab.system.process import run

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
CGROUP_ROOT = Path("/sys/fs/cgroup")

Say = Callable[[str], None]


def rootfs_dir(cache: Path, flavour: str = "") -> Path:
    suffix = f"-{flavour}" if flavour else ""
    return cache / "lxc" / f"rootfs-{SUITE}{suffix}"


def ensure_rootfs(cache: Path, say: Say, packages: tuple[str, ...], *, flavour: str = "",
                  purpose: str = "--runtime lxc") -> Path:
    """The cached root filesystem (Debian minbase plus `packages`), built with mmdebstrap
    when it is not there yet.

    Built in a temporary directory and renamed, so an interrupted build is never
    mistaken for a finished one. Raises PrerequisiteError without mmdebstrap/lxc.
    """
    target = rootfs_dir(cache, flavour)
    if (target / "etc" / "debian_version").exists():
        return target
    for tool in ("mmdebstrap", "lxc-start"):
        if shutil.which(tool) is None:
            raise PrerequisiteError(f"{purpose}: `{tool}` not found; install it: "
                                    "apt-get install lxc mmdebstrap")
    say(f"building an LXC root filesystem (Debian {SUITE}, once) in {target}")
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        run(["mmdebstrap", "--variant=minbase", f"--include={','.join(packages)}",
             SUITE, str(tmp), MIRROR], timeout_s=900)
    except CommandError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise PrerequisiteError(f"cannot build the LXC root filesystem: {exc}") from exc
    os.replace(tmp, target)
    return target


def jdk_binds(java_home: Path) -> list[tuple[Path, bool]]:
    """(path, writable) that a JVM in a container needs from this machine, read-only: the
    JDK and the /etc files Debian's JDK keeps its conf and security files in (links)."""
    out = [(java_home, False)]
    out += [(p, False) for p in sorted(Path("/etc").glob("java-*-openjdk"))]
    certs = Path("/etc/ssl/certs/java")
    if certs.is_dir():
        out.append((certs, False))
    return out


def mount_entries(binds: list[tuple[Path, bool]]) -> list[str]:
    """`lxc.mount.entry` lines that bind each (path, writable) at the same path inside."""
    return [f"lxc.mount.entry = {src} {str(src).lstrip('/')} none "
            f"{'rw' if writable else 'ro'},bind,create=dir 0 0" for src, writable in binds]


def container_cgroups(name: str) -> list[Path]:
    """LXC's cgroup dirs of container `name` that exist now (payload and monitor)."""
    out: list[Path] = []
    for ctrl in CGROUP_ROOT.iterdir() if CGROUP_ROOT.is_dir() else []:
        for kind in ("lxc.payload", "lxc.monitor"):
            for d in (ctrl / f"{kind}.{name}", ctrl / "lxc.pivot" / f"{kind}.{name}"):
                if d.is_dir():
                    out.append(d)
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        out += [d for d in (CGROUP_ROOT / f"lxc.payload.{name}",
                            CGROUP_ROOT / f"lxc.monitor.{name}") if d.is_dir()]
    return out


def remove_container_cgroups(name: str, timeout_s: float = 10.0) -> list[str]:
    """Remove what a killed LXC monitor left; returns error messages (none: all gone)."""
    errors: list[str] = []
    for d in container_cgroups(name):
        # Children first (LXC nests e.g. `ns/` under the payload dir, systemd its slices).
        for sub in sorted((p for p in d.rglob("*") if p.is_dir()), reverse=True):
            _rmdir(sub, timeout_s, errors)
        _rmdir(d, timeout_s, errors)
    return errors


def _rmdir(d: Path, timeout_s: float, errors: list[str]) -> None:
    deadline = time.monotonic() + timeout_s
    while d.exists():
        try:
            d.rmdir()
        except OSError as exc:
            if time.monotonic() > deadline:
                errors.append(f"cannot remove cgroup {d}: {exc.strerror}")
                return
            time.sleep(0.05)
