"""`casslab.cli.main`: what importing the command costs (the light commands' start-up)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "matplotlib", "highspy", "pyarrow", "numpy", "statsmodels", "pandas")


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=60)
    return set(json.loads(res.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_library() -> None:
    loaded = _modules_after("import casslab.cli.main")
    assert "casslab.cli.main" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY) == []


def test_the_cli_does_not_import_the_campaign_or_lab_stack_for_help() -> None:
    loaded = _modules_after("import casslab.cli.main")
    # Report, planner and campaign runner are loaded by their own commands only.
    for mod in ("casslab.report.html", "casslab.plan.milp", "casslab.analysis.stats",
                "casslab.experiment.runner", "casslab.store.db", "casslab.testbed"):
        assert mod not in loaded, mod

