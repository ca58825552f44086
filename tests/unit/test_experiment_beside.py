"""Factor `tuner` at spec time and in the runner, without a lab: level shapes, the
reset after a tuner trial, and a runner that has no tuner to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.experiment.beside import tuner_levels
from casslab.experiment.design import plan, reset_needed
from casslab.experiment.factors.parsers import TUNER_OFF, tuner_level
from casslab.experiment.runner import CampaignRunner
from casslab.experiment.spec import SpecError, parse_spec


def spec_text(levels: str) -> str:
    return f"workload: iot\nfactors:\n  - {{name: tuner, levels: {levels}}}\n"


def test_off_builtin_and_rules_files_are_tuner_levels(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text("twcs: []\n")
    s = parse_spec(spec_text("[off, seed003, rules.yaml]"), base_dir=tmp_path)
    f = s.factor("tuner")
    # A bare YAML `off` is false; it is kept as the level's name.
    assert f.levels == (TUNER_OFF, "seed003", str((tmp_path / "rules.yaml").resolve()))
    assert f.kind == "tuner"
    assert tuner_levels(s) == f.levels[1:]
    assert tuner_levels(parse_spec("workload: iot\n")) == ()


@pytest.mark.parametrize(("levels", "parts"), [
    ("[off, seed004]", ["factors[0].levels[1] (factor tuner): 'seed004' is not a tuner level",
                        "valid: off, seed003, seed003x<N> (its TTLs and windows N times "
                        "shorter, N 2-60) or a rules file"]),
    ("[missing.yaml]", ["factors[0].levels[0] (factor tuner): rules file missing.yaml does "
                        "not exist", "valid: off, seed003"]),
    ("[3]", ["(factor tuner): 3 is not a tuner level"]),
    ("[on]", ["(factor tuner): True is not a tuner level"]),
])
def test_a_bad_tuner_level_is_one_line_naming_factor_level_and_valid(
        tmp_path: Path, levels: str, parts: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(spec_text(levels), source="s.yaml", base_dir=tmp_path)
    msg = str(info.value)
    assert msg.startswith("s.yaml:3: ") and "\n" not in msg, msg
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"


def test_tuner_level_reads_a_relative_file_from_the_spec_directory(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{}")
    assert tuner_level("r.json", tmp_path) == str((tmp_path / "r.json").resolve())
    with pytest.raises(ValueError, match=r"looked at /nonexistent/r\.json"):
        tuner_level("r.json", Path("/nonexistent"))


def test_every_kept_tuner_trial_starts_from_a_recreated_keyspace() -> None:
    s = parse_spec(spec_text("[off, seed003]") + "design: {trials: 2}\n")
    f = s.factors
    off, on = {"tuner": "off"}, {"tuner": "seed003"}
    assert reset_needed(off, on, f, "none") == "recreate"  # a level change is a new block
    assert reset_needed(on, off, f, "none") == "recreate"
    assert reset_needed(off, off, f, "truncate") == "truncate"
    assert reset_needed(on, on, f, "rebuild") == "rebuild"
    assert [(t.cell.key, t.reset) for t in plan(s)] == [
        ("tuner=off", "rebuild"), ("tuner=off", "none"),
        ("tuner=seed003", "recreate"), ("tuner=seed003", "recreate")]


def test_a_tuned_trials_warm_ups_share_its_keyspace() -> None:
    s = parse_spec(spec_text("[seed003]") + "design: {trials: 2, warmup_trials: 1}\n")
    assert [(t.warmup, t.reset) for t in plan(s)] == [
        (True, "rebuild"), (False, "none"), (True, "recreate"), (False, "none")]


def test_a_runner_without_a_tuner_refuses_a_tuner_level_before_any_lab(
        tmp_path: Path) -> None:
    runner = CampaignRunner(parse_spec(spec_text("[off, seed003]")), tmp_path / "res",
                            home=tmp_path / "home", cache=tmp_path / "cache",
                            lab_name="unit-beside")
    with pytest.raises(UsageError) as info:
        runner.run()
    assert str(info.value).startswith("factor tuner: level 'seed003' needs the tuner")
    assert not (tmp_path / "res").exists()
    assert not runner.lab.exists()
