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


def test_a_systemd_host_takes_no_session_path(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="systemd hosts have their own"):
        sshhosts.start("sdx", 1, tmp_path, systemd=True, cache=tmp_path,
                       session_path="/nowhere")


def test_a_systemd_hosts_machine_boots_systemd_in_the_hosts_namespace(tmp_path: Path) -> None:
    text = sshhosts.machine_config(
        name="sdh1", rootfs=Path("/c/rootfs"), upper=tmp_path / "upper",
        binds=[(tmp_path / "h1", True), (Path("/usr/lib/jvm/java-17"), False)],
        log=tmp_path / "lxc.log")
    lines = set(text.splitlines())
    assert "lxc.init.cmd = /lib/systemd/systemd" in lines
    assert "lxc.net.0.type = none" in lines  # shares the namespace it is started in
    assert "lxc.mount.auto = proc:mixed sys:mixed cgroup:rw:force" in lines
    assert "lxc.signal.halt = SIGRTMIN+3" in lines
    assert (f"lxc.mount.entry = {tmp_path / 'h1'} {str(tmp_path / 'h1').lstrip('/')} none "
            "rw,bind,create=dir 0 0") in lines
    assert ("lxc.mount.entry = /usr/lib/jvm/java-17 usr/lib/jvm/java-17 none "
            "ro,bind,create=dir 0 0") in lines


def test_a_systemd_hosts_inventory_names_the_bind_mounted_jdk(tmp_path: Path) -> None:
    plain = sshhosts.SshHost("th1", "10.98.3.10", "casslab-t-h1", tmp_path / "r1")
    machine = sshhosts.SshHost("th2", "10.98.3.11", "casslab-t-h2", tmp_path / "r2",
                               java_home=Path("/usr/lib/jvm/java-17"), container="th2")
    hosts = sshhosts.SshHosts("t", (plain, machine), tmp_path / "id", tmp_path / "kh",
                              tmp_path, "casslab-t-hub", "t-c", systemd=True)
    groups = hosts.ansible_inventory(nodes=2)["all"]["children"]["nodes"]["hosts"]
    assert "casslab_java_home" not in groups["th1"]
    assert groups["th2"]["casslab_java_home"] == "/usr/lib/jvm/java-17"
