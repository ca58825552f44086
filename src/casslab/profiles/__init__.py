"""Hardware profiles and their enforcement with cgroups."""

from casslab.profiles.hardware import (
    BUILTIN_PROFILES,
    HardwareProfile,
    cassandra_default_heap_mib,
    load_profiles_file,
    resolve_profile,
)

__all__ = [
    "BUILTIN_PROFILES",
    "HardwareProfile",
    "cassandra_default_heap_mib",
    "load_profiles_file",
    "resolve_profile",
]
