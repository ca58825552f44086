"""The test tiers' times (issue 28): `make test` (everything, as CI runs it) and then
`make check` (what a developer runs before every commit, on the now warm tree), each
timed as a whole, with the 20 slowest tests; the section goes to BENCHMARKS.md.

    python scripts/bench_tests.py            # in this tree (venv and builds as they are)
    python scripts/bench_tests.py --fresh    # make test in a fresh clone of HEAD, as CI

A test's time is its setup, call and teardown together (pytest --durations): a shared
lab's or stand-in hosts' start-up is charged to the first test that uses it. The
machine's load average is recorded before and after: with other work running, times
grow, so compare runs made on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchmd import ROOT, machine, today, write_section

BUDGET_S = {"check": 180, "test": 1200}
_DURATION = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(\S+)")
_SUMMARY = re.compile(r"\b(\d+) passed\b.* in ([\d.]+)s\b")


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def run_make(target: str, cwd: Path, log: Path) -> tuple[float, int]:
    """Run `make target` in `cwd`, output to `log`: (wall seconds, exit code)."""
    env = {**os.environ, "PYTEST_ADDOPTS": "--durations=0 -p no:cacheprovider"}
    # The venv's pytest, not this script's environment's, and no inherited test home.
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "CASSLAB_HOME", "CASSLAB_TEST_HOME_SET"):
        env.pop(name, None)
    start = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(["make", target], cwd=cwd, env=env, stdout=out,
                              stderr=subprocess.STDOUT, check=False).returncode
    return time.monotonic() - start, code


def slowest(log: Path, top: int) -> list[tuple[float, str]]:
    """The `top` slowest tests of every pytest run in `log` (setup + call + teardown)."""
    per_test: dict[str, float] = defaultdict(float)
    for line in log.read_text(errors="replace").splitlines():
        m = _DURATION.match(line)
        if m:
            per_test[m.group(3)] += float(m.group(1))
    return sorted(((s, t) for t, s in per_test.items()), reverse=True)[:top]


def pytest_runs(log: Path) -> list[str]:
    """Each pytest run's summary: tests passed and its own wall time."""
    return [f"{m.group(1)} passed in {float(m.group(2)):.0f} s"
            for m in map(_SUMMARY.search, log.read_text(errors="replace").splitlines()) if m]


def main() -> int:
    ap = argparse.ArgumentParser(description="Time make test and make check; record them.")
    ap.add_argument("--fresh", action="store_true",
                    help="run make test in a fresh clone of HEAD (venv and builds from scratch)")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="bench-tests-"))
    cwd = ROOT
    if args.fresh:
        cwd = logs / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(cwd)], check=True)
    load_before = loadavg()
    times: dict[str, float] = {}
    for target in ("test", "check"):
        times[target], code = run_make(target, cwd, logs / f"{target}.log")
        print(f"make {target}: {times[target]:.0f} s, exit {code} (log {logs / target}.log)")
        if code != 0:
            return code
    load_after = loadavg()
    where = "a fresh clone of HEAD" if args.fresh else "this tree, venv and builds in place"
    lines = [
        f"Machine: {machine()}; {today()}; load average {load_before} before, "
        f"{load_after} after; `make test` in {where}, then `make check` on the warm tree "
        "(`scripts/bench_tests.py`).",
        "",
        "| tier | what it runs | wall (s) | budget (s) | pytest runs |",
        "|---|---|---:|---:|---|",
        f"| `make test` | setup, check, cargo test, every `integration` test | "
        f"{times['test']:.0f} | {BUDGET_S['test']} | "
        f"{'; '.join(pytest_runs(logs / 'test.log'))} |",
        f"| `make check` | lint, unit and CLI tests (2 xdist workers) | {times['check']:.0f} | "
        f"{BUDGET_S['check']} | {'; '.join(pytest_runs(logs / 'check.log'))} |",
        "",
        f"The {args.top} slowest tests of `make test` (setup + call + teardown; a shared "
        "lab's start is charged to its first user):",
        "",
        "| s | test |",
        "|---:|---|",
        *(f"| {s:.1f} | `{t}` |" for s, t in slowest(logs / "test.log", args.top)),
    ]
    write_section("tests", "Test tiers (`make check`, `make test`)", lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
