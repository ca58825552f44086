"""An option the user did not give is not a value: it is neither passed on nor mistaken
for one the user typed (issue 28's audit of unset CLI options).

Classes, one test each:
- None passed on: `casslab run` handed its unset options (None) to the typed casslab-load
  options, and a family without that option refused it (`run iot`: "--records: unknown
  casslab-load option for iot workloads", on every invocation).
- A default standing for "not given": `lab up --inventory` refused `--nodes` only when it
  differed from the default 3, so `--nodes 3` was silently ignored; `net check|set|clear
  --inventory` ignored the lab's options they cannot apply (`--loss-packets`, `--name`...).
(The third class, YCSB's operationcount=0 passed on as `--ops 0`, is pure:
tests/unit/test_ycsbprops.py.) No lab is started: each command stops at the first thing
it cannot find, after its options were read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args", [
    ["iot"],
    ["iot", "--duration", "60s", "--", "--devices", "1000", "--compaction", "twcs:1:MINUTES"],
    ["iot-full-latest", "--ops", "10"],
    [str(ROOT / "crates/load/profiles/sensor-readings.yaml"), "--records", "10"],
    ["ycsb", "-P", str(ROOT / "workloads/workloada"), "-p", "recordcount=100"],
])
def test_run_passes_on_only_the_options_given(args: list[str]) -> None:
    # The options are built before the lab is looked up: reaching the lab means none of
    # the unset ones was refused.
    res = casslab("run", args[0], "--name", "no-such-lab", *args[1:], timeout_s=60)
    assert res.returncode != 0, res.stdout + res.stderr
    assert res.stderr.strip().splitlines() == [
        "error: no lab named 'no-such-lab' (see `casslab lab list`)"]


@pytest.mark.parametrize(("args", "named"), [
    (["lab", "up", "--nodes", "3"], "--nodes"),  # 3 is the default: still given
    (["lab", "up", "--nodes", "2"], "--nodes"),
    (["lab", "up", "--netns"], "--netns/--no-netns"),
    (["net", "check", "--loss-packets", "2000"], "--loss-packets"),  # the default again
    (["net", "check", "--name", "edge"], "--name"),
    (["net", "set", "--replace", "--link", "pi1-pi2:delay=5ms"], "--replace/--no-replace"),
    (["net", "clear", "--name", "default"], "--name"),
])
def test_an_option_that_cannot_apply_with_inventory_is_refused_even_at_its_default(
        tmp_path: Path, args: list[str], named: str) -> None:
    inventory = tmp_path / "hosts.yaml"  # never read: the refusal comes first
    res = casslab(*args, "--inventory", str(inventory), timeout_s=60)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {named}: not with --inventory"), \
        lines


def test_tune_refuses_a_time_scale_with_a_rules_file_even_at_its_default(
        tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("twcs:\n  - {ttl_s: 180, read_share: 0.1, compaction_window_size: 1,\n"
                     "     compaction_window_unit: MINUTES, min_threshold: 6}\n")
    res = casslab("tune", "--keyspace", "iot", "--name", "no-such-lab", "--rules", str(rules),
                  "--time-scale", "1", timeout_s=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.startswith("error: --time-scale scales the default rules only"), \
        res.stderr
