"""ansible-playbook's report becomes one line naming the first failed host and step."""

from __future__ import annotations

from casslab.testbed.hosts.provision import failure_line


def test_the_first_failed_host_of_a_playbook_run_is_one_line() -> None:
    out = "\n".join([
        "TASK [Install root] ******",
        'failed: [pi1] (item=bin) => {"item": "bin", "msg": "cannot\\ncreate /x"}',
        'failed: [pi1] (item=node) => {"item": "node", "msg": "cannot create /x/node"}',
        "TASK [Java runs] ******",
        'fatal: [pi2]: FAILED! => {"changed": false, "msg": "no java"}',
        'fatal: [pi3]: UNREACHABLE! => {"msg": "Failed to connect"}',
    ])
    assert failure_line(out, "", 2) == "pi1: Install root: cannot create /x (and 2 more)"
    assert failure_line("", "[ERROR]: bad\ninventory\n", 1) == "provisioning failed: inventory"
