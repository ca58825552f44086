from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.core.paths import default_home
from casslab.lab.state import lab_lock


def test_a_casslab_home_that_is_a_file_is_named_as_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "home").write_text("x")
    monkeypatch.setenv("CASSLAB_HOME", str(tmp_path / "home"))
    with pytest.raises(UsageError, match=r"CASSLAB_HOME=.*home: is a file"):
        default_home()


def test_a_lab_folder_that_cannot_be_made_names_casslab_home(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="set CASSLAB_HOME to a writable directory"), \
            lab_lock(tmp_path / "file" / "labs" / "bat"):
        pass
