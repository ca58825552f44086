"""Hardware profiles: what a node may use of this machine.

A profile is a CPU quota in cores of THIS machine, a memory limit, a JVM heap and
disk read/write bandwidth. Values come with their sources below.

How an ARM board maps to a share of an x86 core is an assumption, stated here
once so every result that uses it can point to it:

* Per-core integer throughput is compared with CoreMark/MHz figures published by
  EEMBC and the SoC vendors: Cortex-A7 ~2.9, Cortex-A53 ~3.5, a recent x86
  server core ~5.5 CoreMark/MHz at ~3 GHz (~16,500 CoreMark per core).
* Raspberry Pi 2 (4 x Cortex-A7 @ 900 MHz): 4 x 900 x 2.9 ~ 10,400 CoreMark,
  ~0.63 of one x86 core. We round to 0.6 cores. 32-bit ARM JIT code is slower
  than x86 JIT code, so this flatters the Pi rather than the opposite.
* Raspberry Pi 3 (4 x Cortex-A53 @ 1.2 GHz): 4 x 1200 x 3.5 ~ 16,800 CoreMark,
  ~1.0 x86 core.
A user who measured their own board better should write a profile file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from casslab.core.errors import ProfileError, UsageError
from casslab.core.units import parse_rate_bit_s

MIB = 1024 * 1024


def cassandra_default_heap_mib(memory_mib: int) -> int:
    """Cassandra's own heap rule (cassandra-env.sh): max(min(RAM/2, 1 GiB), min(RAM/4, 8 GiB))."""
    return max(min(memory_mib // 2, 1024), min(memory_mib // 4, 8192))


@dataclass(frozen=True)
class HardwareProfile:
    """Limits applied to one node.

    cpu_cores: CPU quota in cores of this machine (None: unlimited).
    memory_mib: memory limit of the node's cgroup (None: unlimited).
    heap_mib: JVM -Xms/-Xmx; None means Cassandra's rule on memory_mib, or on
      this machine's memory when memory_mib is None.
    disk_read_mb_s / disk_write_mb_s: bandwidth limit in MB/s (10^6 bytes/s); a
      profile file may also write `disk_read: 40MB/s` (or `320Mbit`, `38MiB/s`, ...).
    isolated: give the node a cgroup even without limits (accounting, `container`).
    """

    name: str
    cpu_cores: float | None
    memory_mib: int | None
    heap_mib: int | None
    disk_read_mb_s: float | None
    disk_write_mb_s: float | None
    isolated: bool = True
    source: str = ""

    def effective_heap_mib(self, host_memory_mib: int) -> int:
        """The heap the node gets: the explicit one, else Cassandra's rule."""
        if self.heap_mib is not None:
            return self.heap_mib
        basis = self.memory_mib if self.memory_mib is not None else host_memory_mib
        return cassandra_default_heap_mib(basis)

    @property
    def has_limits(self) -> bool:
        return any(
            v is not None
            for v in (self.cpu_cores, self.memory_mib, self.disk_read_mb_s, self.disk_write_mb_s)
        )


# Sources are kept with the values so `casslab profiles` can show them.
BUILTIN_PROFILES: dict[str, HardwareProfile] = {
    p.name: p
    for p in [
        HardwareProfile(
            "rpi2", 0.6, 1024, None, 18.0, 10.0,
            source="Raspberry Pi 2 Model B: 4x Cortex-A7 900 MHz, 1 GB (raspberrypi.com); "
            "CPU share by CoreMark (see module doc); microSD on the Pi 2 bus reads ~18 MB/s, "
            "writes ~10 MB/s (class 10 cards, community SD benchmarks; seed 000 used C10 U3 cards)",
        ),
        HardwareProfile(
            "rpi3", 1.0, 1024, None, 22.0, 15.0,
            source="Raspberry Pi 3 Model B: 4x Cortex-A53 1.2 GHz, 1 GB (raspberrypi.com); "
            "CPU share by CoreMark (see module doc); microSD ~22 MB/s read, ~15 MB/s write",
        ),
        HardwareProfile(
            "t2.micro", 1.0, 1024, None, 128.0, 128.0,
            source="AWS t2.micro: 1 vCPU (burst; 10 % baseline), 1 GiB; EBS gp2 volumes up "
            "to 170 GiB deliver up to 128 MB/s (AWS EC2/EBS docs; seed 001)",
        ),
        HardwareProfile(
            "t2.small", 1.0, 2048, None, 128.0, 128.0,
            source="AWS t2.small: 1 vCPU (burst; 20 % baseline), 2 GiB; EBS gp2 128 MB/s",
        ),
        HardwareProfile(
            "t2.medium", 2.0, 4096, None, 128.0, 128.0,
            source="AWS t2.medium: 2 vCPU (burst; 40 % baseline each), 4 GiB; EBS gp2 128 MB/s",
        ),
        HardwareProfile(
            "vm-1g", 1.0, 1024, None, None, None,
            source="seed 000: VirtualBox VM, 1 vCPU (VirtualBox default), 1 GB RAM, "
            "virtual disk on the laptop's drive (no stated limit)",
        ),
        HardwareProfile(
            "vm-2g", 1.0, 2048, None, None, None,
            source="seed 000: VirtualBox VM, 1 vCPU, 2 GB RAM",
        ),
        HardwareProfile(
            "vm-4g", 1.0, 4096, None, None, None,
            source="seed 000: VirtualBox VM, 1 vCPU, 4 GB RAM",
        ),
        HardwareProfile(
            "container", None, None, None, None, None, isolated=True,
            source="seed 004: an LXC-style container: own cgroup, no limits",
        ),
        HardwareProfile(
            "host", None, None, None, None, None, isolated=False,
            source="bare process on this machine: no cgroup, no limits",
        ),
    ]
}

_FIELDS = {
    "cpu_cores": float,
    "memory_mib": int,
    "heap_mib": int,
    "disk_read_mb_s": float,
    "disk_write_mb_s": float,
}
# Disk bandwidth with its unit in the value (`disk_read: 40MB/s`) -> the MB/s field.
_RATE_FIELDS = {"disk_read": "disk_read_mb_s", "disk_write": "disk_write_mb_s"}
# Names that said `mbps`, which people read as megabits as often as megabytes.
_AMBIGUOUS = {"disk_read_mbps": "disk_read", "disk_write_mbps": "disk_write"}


def load_profiles_file(path: Path) -> dict[str, HardwareProfile]:
    """Read user profiles from YAML: `{name: {cpu_cores: 0.5, memory_mib: 512, ...}}`.

    A user profile may say `base: rpi3` to start from a built-in one.
    Raises ProfileError naming the file, profile and field on any bad value.
    """
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ProfileError(f"cannot read profiles file {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ProfileError(f"profiles file {path} is not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ProfileError(f"profiles file {path}: expected a mapping of profile names")
    return {str(name): _parse_profile(path, str(name), body) for name, body in raw.items()}


def _parse_profile(path: Path, name: str, body: Any) -> HardwareProfile:
    where = f"profiles file {path}, profile '{name}'"
    if not isinstance(body, dict):
        raise ProfileError(f"{where}: expected a mapping of fields")
    base_name = body.get("base")
    if base_name is not None:
        if base_name not in BUILTIN_PROFILES:
            raise ProfileError(
                f"{where}: base '{base_name}' is not a built-in profile "
                f"(valid: {', '.join(BUILTIN_PROFILES)})"
            )
        base = BUILTIN_PROFILES[base_name]
    else:
        base = HardwareProfile(name, None, None, None, None, None)
    values: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("base", "source"):
            continue
        if key == "isolated":
            values[key] = bool(value)
            continue
        if key in _AMBIGUOUS:
            short = _AMBIGUOUS[key]
            raise ProfileError(
                f"{where}: field '{key}' is ambiguous (megabits or megabytes?): write "
                f"{short}_mb_s: {value} or {short}: {value}MB/s for megabytes/s, or "
                f"{short}: {value}Mbit for megabits/s"
            )
        if key in _RATE_FIELDS:
            values[_RATE_FIELDS[key]] = _disk_rate_mb_s(where, key, value)
            continue
        if key not in _FIELDS:
            raise ProfileError(
                f"{where}: unknown field '{key}' (valid: base, source, isolated, "
                f"{', '.join(_FIELDS)}, {', '.join(_RATE_FIELDS)})"
            )
        values[key] = _positive(where, key, value, _FIELDS[key])
    return replace(base, name=name, source=str(body.get("source", f"user file {path}")), **values)


def _disk_rate_mb_s(where: str, key: str, value: Any) -> float | None:
    if value is None:
        return None
    try:
        out = parse_rate_bit_s(value, f"{where}: field '{key}'") / 8e6
    except UsageError as exc:
        raise ProfileError(str(exc)) from None
    if out <= 0:
        raise ProfileError(f"{where}: field '{key}' must be > 0, got {value!r}")
    return out


def _positive(where: str, key: str, value: Any, kind: type) -> float | int | None:
    if value is None:
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ProfileError(f"{where}: field '{key}' must be a number, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise ProfileError(f"{where}: field '{key}' must be > 0, got {value!r}")
    return number  # type: ignore[no-any-return]


def resolve_profile(name: str, profiles_file: Path | None = None) -> HardwareProfile:
    """Find a profile by name in the user file (if given) then the built-in table."""
    if profiles_file is not None:
        user = load_profiles_file(profiles_file)
        if name in user:
            return user[name]
    if name in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[name]
    known = list(BUILTIN_PROFILES)
    if profiles_file is not None:
        known += list(load_profiles_file(profiles_file))
    raise ProfileError(f"unknown profile '{name}' (valid: {', '.join(known)})")
