"""Hardware profiles and their enforcement with cgroups."""

from casslab.hardware.profiles import (
    BUILTIN_PROFILES,
    LIVE_FIELDS,
    RESTART_FIELDS,
    HardwareProfile,
    cassandra_default_heap_mib,
    describe,
    load_profiles_file,
    resolve_profile,
    with_fields,
)

__all__ = [
    "BUILTIN_PROFILES",
    "LIVE_FIELDS",
    "RESTART_FIELDS",
    "HardwareProfile",
    "cassandra_default_heap_mib",
    "describe",
    "load_profiles_file",
    "resolve_profile",
    "with_fields",
]
