import re
from pathlib import Path

import pytest

from casslab.core.errors import ProfileError
from casslab.hardware import (
    BUILTIN_PROFILES,
    cassandra_default_heap_mib,
    load_profiles_file,
    resolve_profile,
)


@pytest.mark.parametrize(
    ("memory_mib", "heap_mib"),
    [(1024, 512), (2048, 1024), (4096, 1024), (16384, 4096), (65536, 8192), (512, 256)],
)
def test_heap_follows_cassandras_rule(memory_mib: int, heap_mib: int) -> None:
    assert cassandra_default_heap_mib(memory_mib) == heap_mib


def test_every_issue_profile_is_built_in_with_a_source() -> None:
    wanted = {"rpi2", "rpi3", "t2.micro", "t2.small", "t2.medium", "vm-1g", "vm-2g", "vm-4g",
              "container", "host"}
    assert wanted <= set(BUILTIN_PROFILES)
    assert all(p.source for p in BUILTIN_PROFILES.values())


def test_pi_profile_heap_is_half_of_one_gib() -> None:
    assert BUILTIN_PROFILES["rpi3"].effective_heap_mib(host_memory_mib=24576) == 512


def test_host_profile_has_no_limits_and_no_cgroup() -> None:
    host = BUILTIN_PROFILES["host"]
    assert not host.has_limits and not host.isolated
    assert BUILTIN_PROFILES["container"].isolated


def test_user_profile_file_extends_a_builtin(tmp_path: Path) -> None:
    f = tmp_path / "boards.yaml"
    f.write_text("pi4:\n  base: rpi3\n  cpu_cores: 1.5\n  memory_mib: 4096\n")
    pi4 = load_profiles_file(f)["pi4"]
    assert pi4.cpu_cores == 1.5 and pi4.memory_mib == 4096
    assert pi4.disk_read_mb_s == BUILTIN_PROFILES["rpi3"].disk_read_mb_s
    assert resolve_profile("pi4", f) == pi4


@pytest.mark.parametrize(("text", "read_mb_s", "write_mb_s"), [
    ("pi:\n  disk_read_mb_s: 40\n  disk_write_mb_s: 30\n", 40, 30),
    ("pi:\n  disk_read: 40MB/s\n  disk_write: 240Mbit\n", 40, 30),
    ("pi:\n  disk_read: 1MiB/s\n", 1.048576, None),
])
def test_disk_bandwidth_in_mb_s_or_with_a_unit(tmp_path: Path, text: str, read_mb_s: float,
                                               write_mb_s: float | None) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(text)
    pi = load_profiles_file(f)["pi"]
    assert pi.disk_read_mb_s == pytest.approx(read_mb_s)
    assert pi.disk_write_mb_s == pytest.approx(write_mb_s)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pi:\n  cpu_cores: -1\n", "pi.cpu_cores: -1 is out of range (valid: > 0"),
        ("pi:\n  cpu_cores: many\n", "pi.cpu_cores: 'many' is not a number"),
        ("pi:\n  cpus: 2\n", "pi.cpus: unknown key (did you mean cpu_cores?)"),
        ("pi:\n  base: rpi9\n", "pi.base: 'rpi9' is not a valid built-in profile"),
        ("- a\n- b\n", "expected a mapping of profile names"),
        ("pi: [1, 2]\n", "pi: expected a mapping of fields"),
        ("pi: {a: [\n", "not valid YAML"),
        ("pi:\n  disk_read_mbps: 40\n", "pi.disk_read_mbps: ambiguous (megabits or "
         "megabytes?): write disk_read_mb_s: 40 or disk_read: 40MB/s for megabytes/s, or "
         "disk_read: 40Mbit for megabits/s"),
        ("pi:\n  disk_write: 40\n", "pi.disk_write: bare number 40 is ambiguous: add a "
         "unit, e.g. 40Mbit or 40MB/s"),
        ("pi:\n  disk_write: 40mbps\n", "write Mbit for bits/s or MB/s for bytes/s"),
        ("pi:\n  disk_read: 0MB/s\n", "pi.disk_read: '0MB/s' must be > 0"),
    ],
)
def test_bad_profile_files_are_rejected_with_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(ProfileError, match=re.escape(message)):
        load_profiles_file(f)


def test_unknown_profile_lists_the_valid_ones() -> None:
    with pytest.raises(ProfileError, match=r"unknown profile 'rpi9' \(valid: rpi2, rpi3"):
        resolve_profile("rpi9")


# (file text, start of the message after the file name): booleans, fractions, NaN
PROFILE_FILE_BAD = [
    ("pi:\n  memory_mib: true\n", ":2: pi.memory_mib: True is a boolean, not an integer"),
    ("pi:\n  memory_mib: 512.5\n", ":2: pi.memory_mib: 512.5 is a fraction, not an integer"),
    ("pi:\n  heap_mib: 0\n", ":2: pi.heap_mib: 0 is out of range (valid: >= 1"),
    ("pi:\n  cpu_cores: .nan\n", ":2: pi.cpu_cores: .nan is not a finite number"),
    ("pi:\n  cpu_cores: 1.0e+9\n", ":2: pi.cpu_cores: 1000000000.0 is out of range"),
    ("pi:\n  isolated: no-thanks\n", ":2: pi.isolated: 'no-thanks' is not a boolean"),
    ("pi:\n  cpu_cores: 1\npi:\n  cpu_cores: 2\n", ":3: pi: is given twice"),
    ("pi:\n  base: !board rpi3\n", ":2: pi.base: unknown YAML tag '!board'"),
]


@pytest.mark.parametrize(("text", "message"), PROFILE_FILE_BAD)
def test_profile_file_errors_name_file_line_and_field(tmp_path: Path, text: str,
                                                      message: str) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(ProfileError) as info:
        load_profiles_file(f)
    assert str(info.value).startswith(f"{f}{message}"), str(info.value)
    assert "\n" not in str(info.value)


def test_profile_file_not_utf8(tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_bytes("pi:\n  source: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ProfileError, match=rf"^{f}:2: not UTF-8 text"):
        load_profiles_file(f)


def test_fields_set_over_a_profile_keep_its_name_and_other_fields() -> None:
    from casslab.hardware import describe, with_fields

    p = with_fields(BUILTIN_PROFILES["rpi2"], {"memory_mib": 2048, "cpu_cores": 1})
    assert (p.name, p.memory_mib, p.cpu_cores, p.disk_read_mb_s) == ("rpi2", 2048, 1.0, 18.0)
    assert isinstance(p.memory_mib, int) and isinstance(p.cpu_cores, float)
    assert describe("rpi2", {"memory_mib": 2048}) == "rpi2 (memory_mib=2048)"
    assert describe("rpi2", {}) == "rpi2"


def test_a_field_that_is_not_a_profile_field_is_refused() -> None:
    from casslab.hardware import with_fields

    with pytest.raises(ProfileError, match=r"'memory' is not a field .*valid: memory_mib"):
        with_fields(BUILTIN_PROFILES["rpi2"], {"memory": 1})
