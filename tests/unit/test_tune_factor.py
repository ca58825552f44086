"""The tuner factor's rules: built-in, files, and a bad file refused before any lab."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.experiment.factors.parsers import tuner_level
from casslab.experiment.runner import CampaignRunner
from casslab.experiment.spec import parse_spec
from casslab.tune.factor import TunerBeside, level_rules
from casslab.tune.rules import dump_rules, seed003_rules


def test_seed003_and_a_rules_file_give_their_rules(tmp_path: Path) -> None:
    assert level_rules("seed003") == seed003_rules()
    path = tmp_path / "r.yaml"
    path.write_text(dump_rules(seed003_rules(time_scale=0.05)))
    table = level_rules(str(path))
    assert table.points["twcs"][0].ttl_s == seed003_rules(time_scale=0.05).points["twcs"][0].ttl_s


def test_seed003x60_is_the_study_rules_sixty_times_shorter() -> None:
    table = level_rules("seed003x60")
    assert table == seed003_rules(time_scale=1 / 60)
    # TTL 1 h -> 60 s; every window of Table 2 (2-80 min) at TWCS's 1-minute floor, so
    # what follows the TTL is the min_threshold rule (6 / 8 / 10 for 1 / 2 / 3 h).
    by_ttl = {p.ttl_s: p.options["min_threshold"] for p in table.points["twcs"]}
    assert by_ttl == {60.0: "6", 120.0: "8", 180.0: "10"}
    assert {p.options["compaction_window_size"] for p in table.points["twcs"]} == {"1"}


@pytest.mark.parametrize("level", ["seed003x1", "seed003x61", "seed003x0", "seed003x",
                                   "seed003x06"])
def test_a_time_divisor_outside_2_to_60_is_not_a_level(level: str) -> None:
    with pytest.raises(ValueError, match="seed003x<N>"):
        tuner_level(level, None)


def test_a_bad_rules_file_is_one_line_naming_factor_level_and_valid(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("twcs:\n  - {ttl_s: 60}\n")
    with pytest.raises(UsageError) as info:
        level_rules(str(path))
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"factor tuner: level '{path}': {path}:2: twcs[0]: missing "
                          "read_share"), msg
    assert msg.endswith("(valid: off, seed003, seed003x<N> (its TTLs and windows N times "
                        "shorter, N 2-60) or a rules file (.yaml, .yml, .json) as "
                        "`casslab tune --rules` takes)")


def test_the_runner_checks_the_rules_files_before_any_lab(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("ucs: []\n")
    spec = parse_spec("workload: iot\nfactors:\n  - {name: tuner, levels: [off, r.yaml]}\n",
                      base_dir=tmp_path)
    runner = CampaignRunner(spec, tmp_path / "res", home=tmp_path / "home",
                            cache=tmp_path / "cache", lab_name="unit-tuner",
                            beside=TunerBeside())
    with pytest.raises(UsageError,
                       match=r"^factor tuner: level '.*r\.yaml': .*ucs must be a non-empty"):
        runner.run()
    assert not (tmp_path / "res").exists() and not runner.lab.exists()


def test_a_tuner_off_trial_starts_nothing(tmp_path: Path) -> None:
    from casslab.experiment.beside import TrialSite

    site = TrialSite(params={"tuner": "off"}, tuner="off", keyspace="iot",
                     hosts=("127.0.1.1",), netns=None, label="tuner=off #1")
    assert TunerBeside().start(site) is None
