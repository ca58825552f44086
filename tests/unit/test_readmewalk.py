"""The README walk's rules (tests/readmewalk.py): which lines are taken, how they are
rewritten to run here, and that a broken line is reported, on planted lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer

from casslab.cli.main import app

sys.path.insert(0, str(Path(__file__).parent.parent))

import readmewalk as rw

ADDRESSES = ("127.0.1.1", "127.0.1.2", "127.0.1.3")
README = """\
# tool

    make test    # not a casslab line

## Commands

    casslab lab up --nodes 6 --profile rpi2 --node-profile node6=rpi3   # mixed
    casslab lab stop 3 --name edge [--kill]                 # fault experiments
    casslab schema experiment|plan > s.json
    casslab run stress-read --name edge --duration 60s --threads 150

```python
    casslab lab list   # inside a fenced block: code, not a command line
```
Text with `casslab run ycsb-a` inline is not a line.
"""
HELP = """Run a thing.

    Example: casslab run ycsb-a --name edge --phase both --records 10000 --ops 10000

    Example (real hosts): casslab lab up --name pis --inventory hosts.yaml

    Examples: casslab experiment run a.yaml --results results/rpi
              casslab experiment run a.yaml --scale smoke
    (then open the report)
"""


@pytest.fixture(scope="module")
def root() -> object:
    return typer.main.get_command(app)


def _steps(line: str, root: object) -> list[rw.Step]:
    return rw.rewrite(rw.DocLine(line, "planted"), "walk", ADDRESSES, rw.takes_name(root))


def test_readme_lines_are_the_indented_casslab_lines_without_comments() -> None:
    lines = rw.readme_lines(README)
    assert [d.text for d in lines] == [
        "casslab lab up --nodes 6 --profile rpi2 --node-profile node6=rpi3",
        "casslab lab stop 3 --name edge [--kill]",
        "casslab schema experiment|plan > s.json",
        "casslab run stress-read --name edge --duration 60s --threads 150",
    ]
    assert lines[0].source == "README.md:7"


def test_help_examples_are_taken_with_their_continuation_lines() -> None:
    assert [d.text for d in rw.example_lines(HELP, "h")] == [
        "casslab run ycsb-a --name edge --phase both --records 10000 --ops 10000",
        "casslab lab up --name pis --inventory hosts.yaml",
        "casslab experiment run a.yaml --results results/rpi",
        "casslab experiment run a.yaml --scale smoke",
    ]


def test_every_casslab_command_with_an_example_is_found_in_the_real_help(
        root: object) -> None:
    sources = {d.source for d in rw.help_lines(root)}
    for cmd in ("casslab lab up", "casslab run", "casslab tune learn", "casslab k8s render"):
        assert f"`{cmd} --help`" in sources


def test_lab_names_durations_and_counts_are_rewritten(root: object) -> None:
    [step] = _steps("casslab run ycsb-a --name edge --phase both --records 10000 "
                    "--ops 10000 --warmup 10s", root)
    assert step.args == ("run", "ycsb-a", "--name", "walk", "--phase", "both", "--records",
                         "500", "--ops", "500", "--warmup", "1s")
    [stress] = _steps("casslab stress write n=100000 cl=ONE -rate threads=50 -pop "
                      "seq=1..100000", root)
    assert stress.args == ("stress", "write", "no-warmup", "n=500", "cl=ONE", "-rate",
                           "threads=50",
                           "-pop", "seq=1..500", "--name", "walk")


def test_stress_without_a_rate_runs_one_thread_count_not_cassandra_stress_steps(
        root: object) -> None:
    [step] = _steps("casslab stress write n=100000 --name edge", root)
    assert step.args == ("stress", "write", "no-warmup", "n=500", "-rate", "threads=4",
                         "--name", "walk")


def test_a_link_check_without_counts_measures_fewer_packets(root: object) -> None:
    [check] = _steps("casslab net check --name edge", root)
    assert check.args == ("net", "check", "--name", "walk", "--pings", "50",
                          "--loss-packets", "500", "--bandwidth-seconds", "1")
    [given] = _steps("casslab net check --name edge --pings 10 --loss-packets 10000", root)
    assert given.args == ("net", "check", "--name", "walk", "--pings", "10",
                          "--loss-packets", "500", "--bandwidth-seconds", "1")
    [hosts] = _steps("casslab net check --inventory hosts.yaml", root)
    assert hosts.args == ("net", "check", "--inventory", "hosts.yaml", "--pings", "50")


def test_link_lines_run_after_every_other_line_on_the_lab(root: object) -> None:
    """A `net set` line leaves its conditions (a 4G link, 1 % loss) on the shared lab:
    the lines that only use the lab run before any of them, in document order."""
    set_, run, show, status = (_steps(line, root)[0] for line in (
        "casslab net set --name edge --link client-to-node3:profile=4g",
        "casslab run ycsb-a --name edge --ops 500",
        "casslab net show --name edge",
        "casslab lab status --name edge"))
    down = _steps("casslab lab down --name edge --wipe", root)[0]
    assert rw.order([down, set_, run, show, status]) == [run, status, set_, show, down]
    profiles = _steps("casslab net profiles", root)[0]
    assert profiles.phase == rw.OFFLINE


def test_a_study_reproduction_writes_its_tables_without_running_the_study(root: object) -> None:
    [step] = _steps("casslab reproduce 002 --scale smoke", root)
    assert step.args == ("reproduce", "002", "--scale", "smoke", "--no-run")


def test_a_real_clusters_addresses_become_the_labs_and_run_in_its_namespace(
        root: object) -> None:
    [step] = _steps("casslab tune --keyspace iot --hosts 10.0.0.5,10.0.0.6 --rules r.yaml",
                    root)
    assert step.args[:5] == ("tune", "--keyspace", "iot", "--hosts", "127.0.1.1,127.0.1.2")
    assert step.in_lab_namespace and step.until_signal
    assert "--name" not in step.args  # tune refuses --name with --hosts


def test_alternatives_optional_parts_and_redirects(root: object) -> None:
    steps = _steps("casslab schema experiment|plan > s.json", root)
    assert [(s.args, s.stdout_to) for s in steps] == [
        (("schema", "experiment"), "s.json"), (("schema", "plan"), "s.json")]
    [stop] = _steps("casslab lab stop 3 --name edge [--kill]", root)
    assert stop.args == ("lab", "stop", "3", "--name", "walk", "--kill")


def test_lab_up_lines_rebuild_a_smaller_lab_but_the_shared_labs_line_runs_as_written(
        root: object) -> None:
    [mixed] = _steps("casslab lab up --nodes 6 --profile rpi2 --node-profile node6=rpi3",
                     root)
    assert mixed.rebuilds_lab
    assert mixed.args == ("lab", "up", "--nodes", "1", "--profile", "rpi2",
                          "--node-profile", "node1=rpi3", "--name", "walk")
    [shared] = _steps(rw.SHARED_LAB_LINE, root)
    assert not shared.rebuilds_lab and "3" in shared.args
    down = _steps("casslab lab down --name edge --wipe", root)[0]
    ordered = rw.order([down, shared, mixed])
    assert ordered == [mixed, shared, down]


def test_the_same_run_from_the_readme_and_a_help_example_runs_once(root: object) -> None:
    a = _steps("casslab lab stop 3 --name edge [--kill]", root)[0]
    b = _steps("casslab lab stop 3 --name edge --kill", root)[0]
    assert rw.order([a, b]) == [a]


# ---- a planted break is reported ----------------------------------------------------------

@pytest.mark.parametrize(("line", "reported"), [
    ("casslab lab frobnicate --name edge", "No such command 'frobnicate'"),
    ("casslab run ycsb-a --name edge --no-such-option 3", None),  # run passes it on
    ("casslab lab status --name edge --no-such-option", "No such option: --no-such-option"),
    ("casslab experiment run a.yaml --scal smoke", "No such option: --scal"),
    ("casslab lab logs --name edge", "Missing argument"),
    ("casslab lab up --nodes three", "Invalid value for '--nodes'"),
])
def test_a_broken_line_is_reported_before_anything_runs(root: object, line: str,
                                                        reported: str | None) -> None:
    [step] = _steps(line, root)
    problem = rw.static_problem(root, step.args)
    if reported is None:
        assert problem is None
    else:
        assert problem is not None and reported in problem, problem


def test_a_readme_with_a_removed_command_and_a_renamed_option_fails_the_walk(
        root: object) -> None:
    planted = README.replace("casslab lab stop 3", "casslab lab halt 3").replace(
        "--threads 150", "--thread 150")
    names = rw.takes_name(root)
    steps = [s for d in rw.readme_lines(planted)
             for s in rw.rewrite(d, "walk", ADDRESSES, names)]
    assert rw.static_problems(root, rw.order(steps)) == [
        "README.md:8: casslab lab halt 3 --name edge [--kill]: No such command 'halt'.",
    ]
    # `run` passes unknown options on to casslab-load: the run itself refuses them.
    assert rw.judge(2, "", "error: casslab-load: unexpected argument '--thread'") is not None


def test_every_real_readme_line_passes_the_static_check(root: object) -> None:
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    names = rw.takes_name(root)
    steps = [s for d in rw.readme_lines(text)
             for s in rw.rewrite(d, "walk", ADDRESSES, names)]
    assert len(steps) > 40
    assert [s.doc.text for s in steps if rw.static_problem(root, s.args)] == []


@pytest.mark.parametrize(("code", "out", "err", "until", "failed"), [
    (0, "ok", "", False, None),
    (1, "", "error: lab 'walk' has no running node", False, "exit 1: error: lab 'walk'"),
    (0, "", "Traceback (most recent call last):\n  File x\nKeyError: 1", False, "traceback"),
    (2, "", "Error: No such command 'frobnicate'.", False, "exit 2"),
    (130, "", "interrupted", True, None),  # a server stopped with Ctrl-C
    (130, "", "interrupted", False, "exit 130"),
])
def test_a_run_fails_on_a_non_zero_exit_or_a_traceback(code: int, out: str, err: str,
                                                         until: bool,
                                                         failed: str | None) -> None:
    problem = rw.judge(code, out, err, until_signal=until)
    if failed is None:
        assert problem is None
    else:
        assert problem is not None and failed in problem, problem
