"""The integration tests' scheduling rule (tests/scheduling.py): every stand-in hosts
module in one unit, every other module its own."""

from __future__ import annotations

from pathlib import Path

from scheduling import HOSTS_SCOPE, is_hosts_module, scope_of

INTEGRATION = Path(__file__).resolve().parents[1] / "integration"


def test_the_hosts_modules_share_one_scope_and_others_keep_their_module() -> None:
    assert scope_of("tests/integration/test_hosts_campaign.py::test_a") == HOSTS_SCOPE
    assert scope_of("tests/integration/test_sshhosts.py::test_b[x::y]") == HOSTS_SCOPE
    assert scope_of("tests/integration/test_lab_up.py::test_c") == \
        "tests/integration/test_lab_up.py"


def test_every_module_that_uses_the_stand_in_hosts_is_named_as_one() -> None:
    """The scheduler sees only test ids, so a module that uses the shared hosts fixture
    must carry a hosts name (conftest also refuses such a test at collection)."""
    users = [p.stem for p in INTEGRATION.glob("test_*.py")
             if "stand_in_hosts" in p.read_text() or "ssh_hosts" in p.read_text()]
    assert users and all(is_hosts_module(stem) for stem in users), users
