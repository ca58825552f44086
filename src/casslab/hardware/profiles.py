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

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from casslab.core import specio
from casslab.core.errors import ProfileError, UsageError
from casslab.core.units import parse_rate_bit_s
from casslab.hardware.credits import T2_CREDITS

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
    burst: a burstable instance type (casslab.hardware.credits: t2.micro, ...): cpu_cores
      is then the quota while the node has CPU credits, and the lab's credit controller
      drops it to the baseline share when they run out. None: a fixed quota.
    """

    name: str
    cpu_cores: float | None
    memory_mib: int | None
    heap_mib: int | None
    disk_read_mb_s: float | None
    disk_write_mb_s: float | None
    isolated: bool = True
    source: str = ""
    burst: str | None = None

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
            "to 170 GiB deliver up to 128 MB/s (AWS EC2/EBS docs; seed 001); CPU credits: "
            "casslab.hardware.credits",
            burst="t2.micro",
        ),
        HardwareProfile(
            "t2.small", 1.0, 2048, None, 128.0, 128.0,
            source="AWS t2.small: 1 vCPU (burst; 20 % baseline), 2 GiB; EBS gp2 128 MB/s",
            burst="t2.small",
        ),
        HardwareProfile(
            "t2.medium", 2.0, 4096, None, 128.0, 128.0,
            source="AWS t2.medium: 2 vCPU (burst; 20 % baseline each, 40 % of one vCPU in "
            "all), 4 GiB; EBS gp2 128 MB/s",
            burst="t2.medium",
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

# Fields a running node's cgroup takes without a restart (CFS quota, blkio/io throttle);
# the others (memory limit, -Xmx) only take effect when the JVM starts again.
LIVE_FIELDS = ("cpu_cores", "disk_read_mb_s", "disk_write_mb_s")
RESTART_FIELDS = ("memory_mib", "heap_mib")


def with_fields(profile: HardwareProfile, fields: dict[str, float | int]) -> HardwareProfile:
    """The profile with some of its fields replaced (same name; `describe` shows them).

    Raises ProfileError for a name that is not a profile field.
    """
    unknown = [k for k in fields if k not in (*LIVE_FIELDS, *RESTART_FIELDS)]
    if unknown:
        raise ProfileError(f"profile field '{unknown[0]}' is not a field (valid: "
                           f"{', '.join((*RESTART_FIELDS, *LIVE_FIELDS))})")
    # Memory and heap are whole MiB; the others may be fractions.
    values: dict[str, Any] = {k: int(v) if k in RESTART_FIELDS else float(v)
                              for k, v in fields.items()}
    return replace(profile, **values)


def describe(name: str, fields: dict[str, float | int]) -> str:
    """`rpi2` or `rpi2 (memory_mib=2048)`: a profile name with the fields set over it."""
    if not fields:
        return name
    return f"{name} ({', '.join(f'{k}={v:g}' for k, v in sorted(fields.items()))})"


# Field -> (kind, upper bound): bounds far above any machine, so a typo is caught.
_FIELDS: dict[str, tuple[type, float]] = {
    "cpu_cores": (float, 4096.0),
    "memory_mib": (int, 2**30),
    "heap_mib": (int, 2**30),
    "disk_read_mb_s": (float, 1e6),
    "disk_write_mb_s": (float, 1e6),
}
# Disk bandwidth with its unit in the value (`disk_read: 40MB/s`) -> the MB/s field.
_RATE_FIELDS = {"disk_read": "disk_read_mb_s", "disk_write": "disk_write_mb_s"}
# Names that said `mbps`, which people read as megabits as often as megabytes.
_AMBIGUOUS = {"disk_read_mbps": "disk_read", "disk_write_mbps": "disk_write"}
_KEYS = ("base", "source", "isolated", "burst", *_FIELDS, *_RATE_FIELDS)


def load_profiles_file(path: Path) -> dict[str, HardwareProfile]:
    """Read user profiles from YAML: `{name: {cpu_cores: 0.5, memory_mib: 512, ...}}`.

    A user profile may say `base: rpi3` to start from a built-in one, and give disk
    bandwidth as `disk_read_mb_s: 40` or with its unit, `disk_read: 40MB/s`.
    Raises ProfileError as `file:line: name.field: what is valid`.
    """
    text = specio.read_text(path, "profiles file", ProfileError)
    doc = specio.Doc(text, str(path), error=ProfileError, key_lines=True,
                     empty="the profiles file is empty (expected a mapping of profile names)")
    if not isinstance(doc.root, dict):
        raise doc.error((), "expected a mapping of profile names to {cpu_cores, memory_mib, "
                        "...}")
    return {name: _parse_profile(specio.V(doc), path, name, body)
            for name, body in doc.root.items()}


def _parse_profile(v: specio.V, path: Path, name: str, body: Any) -> HardwareProfile:
    if not isinstance(body, dict):
        raise v.doc.error((name,), f"expected a mapping of fields ({', '.join(_KEYS)})")
    for key, value in body.items():
        if key in _AMBIGUOUS:
            short = _AMBIGUOUS[key]
            raise v.doc.error((name, key), f"ambiguous (megabits or megabytes?): write "
                              f"{short}_mb_s: {value} or {short}: {value}MB/s for "
                              f"megabytes/s, or {short}: {value}Mbit for megabits/s")
    v.mapping(body, (name,), _KEYS)
    base_name = body.get("base")
    if base_name is not None:
        base = BUILTIN_PROFILES[v.choice(base_name, (name, "base"), list(BUILTIN_PROFILES),
                                         "built-in profile")]
    else:
        base = HardwareProfile(name, None, None, None, None, None)
    values: dict[str, Any] = {}
    for key, value in body.items():
        if key == "isolated":
            values[key] = v.boolean(value, (name, key))
        elif key == "burst":
            values[key] = None if value is None else v.choice(
                value, (name, key), list(T2_CREDITS), "burstable instance type")
        elif key in _RATE_FIELDS:
            values[_RATE_FIELDS[key]] = _disk_rate_mb_s(v, (name, key), value)
        elif key in _FIELDS:
            values[key] = _positive(v, (name, key), value, *_FIELDS[key])
    source = body.get("source", f"user file {path}")
    return replace(base, name=name, source=str(source), **values)


def _disk_rate_mb_s(v: specio.V, where: specio.Path_, value: Any) -> float | None:
    """MB/s (10^6 bytes/s) from a rate with its unit (`40MB/s`, `320Mbit`)."""
    if value is None:
        return None
    try:
        out = parse_rate_bit_s(value, specio.fmt_path(where)) / 8e6
    except UsageError as exc:
        raise v.doc.error(where, str(exc).split(": ", 1)[-1]) from None
    if not 0 < out <= _FIELDS["disk_read_mb_s"][1]:
        raise v.doc.error(where, f"{value!r} must be > 0 and at most "
                          f"{_FIELDS['disk_read_mb_s'][1]:g} MB/s")
    return out


def _positive(v: specio.V, where: specio.Path_, value: Any, kind: type,
              hi: float) -> float | int | None:
    """None (no limit), or a number > 0; an integer where `kind` is int."""
    if value is None:
        return None
    if kind is int:
        return v.integer(value, where, 1, int(hi))
    return v.number(value, where, 0.0, hi, lo_open=True)


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


def json_schema() -> specio.JsonSchema:
    """A hardware profiles file as JSON Schema for editors."""
    props: dict[str, specio.JsonSchema] = {
        "base": specio.schema_enum(list(BUILTIN_PROFILES), "start from a built-in profile"),
        "source": {"type": "string"}, "isolated": {"type": "boolean"},
        "burst": {"oneOf": [specio.schema_enum(list(T2_CREDITS), "CPU credits as this AWS "
                                               "instance type"), {"type": "null"}]}}
    for key, (kind, hi) in _FIELDS.items():
        limit = (specio.schema_integer(1, int(hi)) if kind is int
                 else specio.schema_number(0, hi, lo_open=True))
        props[key] = {"oneOf": [limit, {"type": "null", "description": "unlimited"}]}
    for key in _RATE_FIELDS:
        props[key] = {"type": "string", "description": "disk bandwidth with its unit, e.g. "
                      "40MB/s or 320Mbit"}
    return specio.schema_document("casslab hardware profiles", specio.schema_map(
        specio.schema_object(props), "profile name -> limits"))
