"""The README walk: every `casslab` command line of README.md and every `Example` of every
`casslab ... --help`, run as a user would, against one shared lab.

The lines, their rewriting (lab names -> the shared lab `walk`, a real cluster's
10.0.0.N -> its nodes, shorter durations and counts, other `lab up` lines at 1 node),
their order and how a run is judged are the pure rules of tests/readmewalk.py (unit
tests: tests/unit/test_readmewalk.py). The shared lab is the README's own 3-node `edge`
(readmewalk.SHARED_LAB_LINE), built by that line after the other `lab up` lines each
rebuilt it once; every later line runs against it, and `lab down` ends the walk. The
campaigns' labs are their own (a campaign builds what its spec says).

Set-up a line needs, and where it comes from:
- examples/, workloads/ and crates/ (specs, YCSB files, a load profile): the walk runs
  in a scratch directory where they link to the checkout's, so what a line writes
  (results/, k8s/, rules.yaml, tune.jsonl...) lands there, not in the checkout.
- boards.yaml, my-boards.yaml (hardware profiles): README's `pi4` example profile;
  my-links.yaml (link profiles): one profile, written by the fixture.
- results/rpi (report, compare, export): written by the README's `experiment run ...
  --results results/rpi` line, run before them; results/rpi2 (`compare results/rpi
  results/rpi2`): a copy of results/rpi, made just before that line (a second campaign
  of the same spec would cost another minute and show the same path).
- results/rpi-iot-links-smoke (the README's `experiment run ... --scale smoke`, whose
  default results directory it is): a link to results/rpi, which the line before filled
  with the same spec at the same size; the line resumes it and finds every trial done,
  the documented resume, instead of running the same two cells again (~2 min here).
- rules.yaml (`tune --rules rules.yaml`): written by `tune rules ... > rules.yaml` and
  the `tune learn ... -o rules.yaml` lines, run before.
- keyspace iot (`tune --keyspace iot`): made by the README's `run iot` line before it.

Steps depend on the ones before them (one lab, one scratch directory): run the module
whole; `-k` on one step is not supported.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml

from casslab.cli.main import app

sys.path.insert(0, str(Path(__file__).parent.parent))

import readmewalk as rw

from labtools import CASSLAB, leftovers

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LAB = "walk"
# The shared lab's nodes: node i listens on 127.0.1.i in the lab's namespace (README).
ADDRESSES = ("127.0.1.1", "127.0.1.2", "127.0.1.3")
STEP_TIMEOUT_S = 900
# How long a line that runs until Ctrl-C may take to stop after it.
SIGINT_GRACE_S = 120
MAX_SKIPS = 10
# Lines that cannot run here, each with the reason. Keys are lines as documented (the
# comment dropped); each must still be a README or help line (checked below).
SKIP = {
    "casslab lab up --name pis --inventory hosts.yaml":
        "needs real hosts (an Ansible inventory); tests/integration/test_hosts_* run it "
        "on stand-in hosts",
    "casslab net set --inventory hosts.yaml --link pi1-pi2:delay=20ms":
        "needs real hosts (an inventory's pi1, pi2); test_hosts_net runs it on stand-ins",
    "casslab net check --inventory hosts.yaml": "needs real hosts (see test_hosts_net)",
    "casslab net clear --inventory hosts.yaml": "needs real hosts (see test_hosts_net)",
    "casslab net show --inventory hosts.yaml": "needs real hosts (see test_hosts_net)",
}
PI4 = """\
pi4:
  base: rpi3          # optional: start from a built-in profile
  cpu_cores: 1.5
  memory_mib: 4096
  disk_read_mb_s: 40
  disk_write_mb_s: 30
"""
LINKS = """\
profiles:
  lora-ish: {delay_ms: 40, jitter_ms: 10, loss_pct: 2, rate_mbit: 0.3}
"""


def _root() -> object:
    return typer.main.get_command(app)


def documented() -> list[rw.DocLine]:
    return rw.readme_lines((ROOT / "README.md").read_text()) + rw.help_lines(_root())


def planned() -> list[rw.Step]:
    names = rw.takes_name(_root())
    steps = [s for d in documented() for s in rw.rewrite(d, LAB, ADDRESSES, names)]
    return rw.order(steps)


STEPS = planned()
RUN = [s for s in STEPS if s.doc.text not in SKIP]


def _id(i: int, step: rw.Step) -> str:
    return f"{i:02d}-" + re.sub(r"[^a-z0-9]+", "-", " ".join(step.args[:3]).lower())


def test_the_skip_list_is_short_and_names_only_documented_lines() -> None:
    texts = {d.text for d in documented()}
    assert len(SKIP) <= MAX_SKIPS, f"{len(SKIP)} lines skipped: run them or fix the docs"
    stale = [line for line in SKIP if line not in texts]
    assert not stale, f"skip entries that match no README or help line: {stale}"


def test_every_documented_line_is_a_command_with_options_that_exist() -> None:
    # Skipped lines too: a line that cannot run here must still be a valid command.
    problems = rw.static_problems(_root(), STEPS)
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def walk_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The scratch directory the lines run in; at the end the shared lab is down and
    wiped, whatever happened, with nothing left of it."""
    work = tmp_path_factory.mktemp("walk")
    for name in ("examples", "workloads", "crates"):
        (work / name).symlink_to(ROOT / name)
    # A copy: `casslab reproduce` writes into its docs, which must not touch the repo's.
    shutil.copytree(ROOT / "docs" / "reproductions", work / "docs" / "reproductions")
    for name in ("boards.yaml", "my-boards.yaml"):
        (work / name).write_text(PI4)
    (work / "my-links.yaml").write_text(LINKS)
    try:
        yield work
    finally:
        _lab_down(work)
        assert not leftovers(LAB), f"the walk left: {leftovers(LAB)}"


def _lab_down(cwd: Path) -> None:
    subprocess.run([CASSLAB, "lab", "down", "--name", LAB, "--wipe"], cwd=cwd,
                   capture_output=True, text=True, timeout=300, check=False)


def _set_up(step: rw.Step, cwd: Path) -> None:
    """What a step needs that no earlier line made (see the module docstring)."""
    if step.phase == rw.LAB_UP and "--inventory" not in step.args:
        _lab_down(cwd)  # each `lab up` line builds the shared lab afresh
    if "results/rpi2" in step.args and not (cwd / "results/rpi2").exists():
        shutil.copytree(cwd / "results/rpi", cwd / "results/rpi2")
    if step.args[:2] == ("experiment", "run"):
        spec, results = step.args[2], rw._value_of(step.args, "--results")
        if results is not None:
            CAMPAIGNS.setdefault(spec, cwd / results)
        elif spec in CAMPAIGNS:
            default = cwd / "results" / f"{_spec_name(cwd / spec)}-smoke"
            if not default.exists():
                default.parent.mkdir(parents=True, exist_ok=True)
                default.symlink_to(CAMPAIGNS[spec].resolve())


# Spec -> the results directory an earlier `experiment run --results DIR` line filled (at
# the walk's one size, smoke).
CAMPAIGNS: dict[str, Path] = {}


def _spec_name(spec: Path) -> str:
    name = yaml.safe_load(spec.read_text())["name"]
    assert isinstance(name, str)
    return name


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(step: rw.Step, cwd: Path) -> tuple[str | None, str]:
    """Run a step: (why it failed or None, its output for the failure message)."""
    argv = [CASSLAB, *step.args]
    if step.in_lab_namespace:
        argv = [CASSLAB, "lab", "exec", "--name", LAB, "--", *argv]
    sink = open(cwd / step.stdout_to, "w") if step.stdout_to else None  # noqa: SIM115
    try:
        # Its own session: Ctrl-C reaches the whole process group (lab exec's child too).
        # SIGINT back to its default in the child: a pytest started in the background by
        # a shell without job control has SIGINT ignored, and Python keeps an inherited
        # SIG_IGN, so the line would never see its Ctrl-C.
        proc = subprocess.Popen(argv, cwd=cwd, stdout=sink or subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                preexec_fn=_default_sigint)
        early = False
        # communicate, not wait: the pipes are read while the line runs, so a line that
        # prints more than a pipe holds (64 KiB: a 352-trial plan) does not block on its
        # write until the timeout. After a timeout, communicate again keeps what was read.
        try:
            out, err = proc.communicate(
                timeout=rw.UNTIL_SIGNAL_S if step.until_signal else STEP_TIMEOUT_S)
            early = step.until_signal
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT if step.until_signal else signal.SIGKILL)
            try:
                out, err = proc.communicate(timeout=SIGINT_GRACE_S)
            except subprocess.TimeoutExpired:
                # It outlived its Ctrl-C: killed rather than left running (and holding
                # its port) after the test; the line fails below.
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
    finally:
        if sink is not None:
            sink.close()
    out = out or ""
    text = f"$ {' '.join(argv)}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}"
    problem = rw.judge(proc.returncode, out, err, until_signal=step.until_signal)
    if early and problem is None:
        problem = "ended before it was stopped (it should run until Ctrl-C)"
    if proc.returncode == -signal.SIGKILL and not early:
        problem = (f"still running {SIGINT_GRACE_S} s after its Ctrl-C" if step.until_signal
                   else f"still running after {STEP_TIMEOUT_S} s")
    return problem, text


@pytest.mark.parametrize("step", RUN, ids=[_id(i, s) for i, s in enumerate(RUN)])
def test_a_documented_line_runs(step: rw.Step, walk_dir: Path) -> None:
    _set_up(step, walk_dir)
    problem, output = _run(step, walk_dir)
    assert problem is None, (f"{step.doc.source}: `{step.doc.text}` failed ({problem}); ran "
                             f"with {', '.join(step.notes) or 'no rewrite'}\n{output}")
