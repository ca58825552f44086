"""Pure parts of the stand-in hosts: names that fit interface names, sshd settings that
admit only the run's key, and the ssh command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.system import sshhosts


@pytest.mark.parametrize("name", ["", "a-b", "elevenchars", "x y"])
def test_names_that_would_not_fit_an_interface_name_are_refused(name: str) -> None:
    with pytest.raises(UsageError, match="use 1-10 letters or digits"):
        sshhosts.check_name(name)


def test_sshd_listens_on_the_host_only_and_takes_keys_only(tmp_path: Path) -> None:
    host = sshhosts.SshHost("th1", "10.98.3.10", "casslab-t-h1", tmp_path / "root")
    text = sshhosts._sshd_config(host, tmp_path, tmp_path / "authorized_keys")
    lines = set(text.splitlines())
    assert "ListenAddress 10.98.3.10" in lines
    assert "PasswordAuthentication no" in lines
    assert f"AuthorizedKeysFile {tmp_path / 'authorized_keys'}" in lines
    assert f"SetEnv CASSLAB_INSTALL_ROOT={tmp_path / 'root'}" in lines


def test_the_ssh_command_pins_the_key_and_the_known_host(tmp_path: Path) -> None:
    host = sshhosts.SshHost("th1", "10.98.3.10", "casslab-t-h1", tmp_path / "root")
    hosts = sshhosts.SshHosts("t", (host,), tmp_path / "id", tmp_path / "kh", tmp_path,
                              "casslab-t-hub", "t-c")
    argv = hosts.ssh_command(host, "uname", "-a")
    assert argv[:3] == ["ssh", "-i", str(tmp_path / "id")]
    assert "StrictHostKeyChecking=yes" in argv and "BatchMode=yes" in argv
    assert argv[-3:] == ["root@10.98.3.10", "uname", "-a"]
