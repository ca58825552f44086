"""Rule tables: seed 003's Table 2, nearest point, interpolation, bad files rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.tune.rules import (
    RulesError,
    dump_rules,
    load_rules,
    parse_rules,
    seed003_rules,
    window_minutes,
)

# Seed 003, Table 2 (minutes) by (TTL hours, read share) and the min_threshold rule.
TABLE2 = {(1, 0.03): 2, (2, 0.03): 12, (3, 0.03): 35,
          (1, 0.10): 10, (2, 0.10): 10, (3, 0.10): 25,
          (1, 0.30): 22, (2, 0.30): 35, (3, 0.30): 60}
MIN_THRESHOLD = {1: 6, 2: 8, 3: 10}


@pytest.mark.parametrize(("hours", "share"), sorted(TABLE2))
def test_seed003_exact_points(hours: int, share: float) -> None:
    choice = seed003_rules().choose("twcs", hours * 3600, share)
    assert choice.options == {"compaction_window_size": str(TABLE2[(hours, share)]),
                              "compaction_window_unit": "MINUTES",
                              "min_threshold": str(MIN_THRESHOLD[hours])}
    assert choice.distance == 0


def test_nearest_point() -> None:
    rules = seed003_rules()
    # 25 % reads at TTL 2.2 h: nearest is (2 h, 30 %) -> 35 minutes, min_threshold 8.
    assert rules.choose("twcs", 2.2 * 3600, 0.25).options["compaction_window_size"] == "35"
    # 5 % reads, TTL 50 min: (1 h, 3 %) -> 2 minutes.
    c = rules.choose("twcs", 3000, 0.05)
    assert (c.point.ttl_s, c.point.read_share) == (3600, 0.03)
    assert c.options["compaction_window_size"] == "2"
    # Outside the grid: clamps to the nearest corner.
    assert rules.choose("twcs", 10 * 3600, 0.9).options["compaction_window_size"] == "60"


def test_tie_goes_to_first_point() -> None:
    rules = parse_rules("twcs:\n"
                        "  - {ttl_s: 100, read_share: 0.1, compaction_window_size: 1}\n"
                        "  - {ttl_s: 300, read_share: 0.1, compaction_window_size: 3}\n")
    assert rules.choose("twcs", 200, 0.1).options["compaction_window_size"] == "1"


def test_interpolation_bilinear() -> None:
    rules = seed003_rules(interpolate=True)
    # Midway between TTL 1 h and 2 h at 30 % reads: (22 + 35) / 2 = 28.5 -> 29 minutes;
    # min_threshold (6 + 8) / 2 = 7.
    c = rules.choose("twcs", 1.5 * 3600, 0.30)
    assert c.interpolated
    assert c.options["compaction_window_size"] == "29"
    assert c.options["min_threshold"] == "7"
    # Centre of the (1-2 h) x (10-30 %) cell: (10 + 10 + 22 + 35) / 4 = 19.25 -> 19.
    assert rules.choose("twcs", 1.5 * 3600, 0.20).options["compaction_window_size"] == "19"
    # On a grid point interpolation gives the point itself.
    assert rules.choose("twcs", 3 * 3600, 0.03).options["compaction_window_size"] == "35"
    # Clamped outside the grid.
    assert rules.choose("twcs", 99 * 3600, 0.99).options["compaction_window_size"] == "60"


def test_interpolation_keeps_hours_when_whole() -> None:
    rules = parse_rules("interpolate: true\ntwcs:\n"
                        "  - {ttl_s: 1, read_share: 0, compaction_window_size: 1, "
                        "compaction_window_unit: HOURS}\n"
                        "  - {ttl_s: 3, read_share: 0, compaction_window_size: 3, "
                        "compaction_window_unit: HOURS}\n")
    assert rules.choose("twcs", 2, 0).options == {"compaction_window_size": "2",
                                                  "compaction_window_unit": "HOURS"}
    assert rules.choose("twcs", 1.5, 0).options == {"compaction_window_size": "90",
                                                    "compaction_window_unit": "MINUTES"}


def test_time_scale_compresses_ttl_and_windows() -> None:
    rules = seed003_rules(time_scale=0.05)
    c = rules.choose("twcs", 3 * 3600 * 0.05, 0.30)  # TTL 9 min, 30 % reads
    assert c.options["compaction_window_size"] == "3"  # 60 min x 0.05
    assert rules.choose("twcs", 180, 0.10).options["compaction_window_size"] == "1"  # min 1


def test_window_minutes() -> None:
    assert window_minutes({"compaction_window_size": "2", "compaction_window_unit": "HOURS"}) \
        == 120
    assert window_minutes({"compaction_window_size": "1"}) == 1440  # TWCS default unit: DAYS
    assert window_minutes({}) is None


def test_dump_parse_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(dump_rules(seed003_rules(interpolate=True)))
    again = load_rules(path)
    assert again.interpolate
    assert again.choose("twcs", 7200, 0.3).options["compaction_window_size"] == "35"
    assert again.points["twcs"][0].measurements["source"].startswith("C*DynaConf")


BAD = [
    ("twcs: [", "not valid YAML"),
    ("- 1\n- 2\n", "expected a mapping"),
    ("twsc: []\n", "twsc: unknown key (did you mean twcs?)"),
    ("version: 2\ntwcs: []\n", "version 2 is not supported"),
    ("{}\n", "no points"),
    ("twcs: []\n", "twcs must be a non-empty list"),
    ("twcs:\n  - {read_share: 0.1, compaction_window_size: 1}\n", "twcs[0]: missing ttl_s"),
    ("twcs:\n  - {ttl_s: -5, read_share: 0.1, compaction_window_size: 1}\n",
     "ttl_s must be a number of seconds > 0"),
    ("twcs:\n  - {ttl_s: 60, read_share: 1.5, compaction_window_size: 1}\n",
     "read_share must be a fraction in 0..1"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1}\n", "no compaction option to set"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, compaction_window_size: 0}\n",
     "compaction_window_size must be >= 1"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, compaction_window_size: ten}\n",
     "compaction_window_size must be an integer"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, compaction_window_unit: WEEKS}\n",
     "compaction_window_unit 'WEEKS' is not one of MINUTES, HOURS, DAYS"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, window: 3}\n", "'window' is not a TWCS option"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 9, max_threshold: 8}\n",
     "min_threshold 9 > max_threshold 8"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, class: X, min_threshold: 4}\n",
     "'class' is implied"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 4}\n"
     "  - {ttl_s: 60, read_share: 0.1, min_threshold: 6}\n", "a second point at ttl_s 60"),
    ("interpolate: true\ntwcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 4}\n"
     "  - {ttl_s: 120, read_share: 0.3, min_threshold: 6}\n", "needs a full grid"),
    ("interpolate: maybe\ntwcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 4}\n",
     "interpolate must be true or false"),
    ("scale: {ttl_s: 0}\ntwcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 4}\n",
     "scale.ttl_s must be a number > 0"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_rules_rejected(text: str, message: str) -> None:
    with pytest.raises(RulesError) as info:
        parse_rules(text, source="bad.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("bad.yaml")
    assert "\n" not in str(info.value)


def test_missing_rules_file(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read"):
        load_rules(tmp_path / "nope.yaml")


def test_no_points_for_strategy() -> None:
    with pytest.raises(RulesError, match="no 'ucs' points"):
        seed003_rules().choose("ucs", 3600, 0.1)


POINT = "twcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 4}\n"
# (text, start of the message): every error has file:line and the field's path
LOCATED = [
    ("twcs:\n  - {ttl_s: .nan, read_share: 0.1, min_threshold: 4}\n",
     "bad.yaml:2: twcs[0].ttl_s: .nan is not a finite number"),
    ("twcs:\n  - {ttl_s: 60, read_share: true, min_threshold: 4}\n",
     "bad.yaml:2: twcs[0].read_share: read_share must be a fraction in 0..1, not True"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, min_treshold: 4}\n",
     "bad.yaml:2: twcs[0].min_treshold: 'min_treshold' is not a TWCS option (did you mean "
     "min_threshold?)"),
    ("twcs:\n  - {ttl_s: 60, read_share: 0.1, min_threshold: 4.5}\n",
     "bad.yaml:2: twcs[0].min_threshold: min_threshold must be an integer, not '4.5'"),
    ("interpolate: true\n" + POINT.replace("60", "60, ttl_s: 70"),
     "bad.yaml:3: twcs[0].ttl_s: is given twice"),
    ("version: 1\nscale:\n  ttl_s: -.inf\n" + POINT,
     "bad.yaml:3: scale.ttl_s: -.inf is not a finite number"),
    ("scale:\n  reads: 1\n" + POINT,
     "bad.yaml:2: scale.reads: unknown key (did you mean read_share?)"),
]


@pytest.mark.parametrize(("text", "message"), LOCATED)
def test_errors_name_the_line_and_field(text: str, message: str) -> None:
    with pytest.raises(RulesError) as info:
        parse_rules(text, source="bad.yaml")
    assert str(info.value).startswith(message), str(info.value)


def test_rules_file_not_utf8(tmp_path: Path) -> None:
    f = tmp_path / "r.yaml"
    f.write_bytes(POINT.encode() + b"source: \xc3\n")
    with pytest.raises(RulesError, match=rf"^{f}:3: not UTF-8 text"):
        load_rules(f)
