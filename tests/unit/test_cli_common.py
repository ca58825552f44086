"""casslab.cli.common: the pieces of the one error path."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.cli import common
from casslab.core.errors import LabStateError, ProfileError, UsageError


def test_one_line_shows_newlines_as_typed() -> None:
    assert common.one_line("unknown profile 'a\nb'\n") == "unknown profile 'a\\nb'"
    assert common.one_line("x\r\ny") == "x\\r\\ny"


def test_exit_code_is_2_for_usage_and_1_for_failures() -> None:
    assert common.exit_code(UsageError("bad")) == 2
    assert common.exit_code(ProfileError("bad")) == 2  # a UsageError subclass
    assert common.exit_code(LabStateError("busy")) == 1


def test_print_error_never_reads_markup(capsys: pytest.CaptureFixture[str]) -> None:
    common.print_error("lab name '[/]' and [bold]x[/bold]")
    assert capsys.readouterr().err.strip() == "error: lab name '[/]' and [bold]x[/bold]"


def test_os_errors_name_their_paths(tmp_path: Path) -> None:
    try:
        (tmp_path / "missing" / "f").read_text()
    except OSError as exc:
        assert common.describe_os_error(exc) == (
            f"{tmp_path / 'missing' / 'f'}: No such file or directory")
    afile = tmp_path / "afile"
    afile.write_text("x")
    try:
        afile.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        assert common.describe_os_error(exc) == (
            f"{afile}: is a file, where a directory is needed")


def test_debug_is_on_for_any_value_but_empty_and_0(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, on in (("1", True), ("yes", True), ("0", False), ("", False)):
        monkeypatch.setenv(common.DEBUG_ENV, value)
        assert common.debug_enabled() is on
    monkeypatch.delenv(common.DEBUG_ENV)
    assert common.debug_enabled() is False
