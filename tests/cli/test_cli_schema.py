"""`casslab schema NAME` prints a JSON Schema the repository's own examples satisfy, and
`experiment validate` refuses a huge campaign unless `--allow-large`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

EXAMPLES = Path(__file__).parent.parent.parent / "examples"


@pytest.mark.parametrize(("name", "examples"), [
    ("experiment", sorted([*EXAMPLES.glob("00*.yaml"), *EXAMPLES.glob("00*/*.yaml")])),
    ("plan", [EXAMPLES / "plan-seed001.yaml"]),
    ("rules", [EXAMPLES / "tune-rules-learned.yaml"]),
    ("net", []), ("profiles", []),
])
def test_schema_is_valid_and_accepts_the_examples(name: str, examples: list[Path]) -> None:
    res = casslab("schema", name)
    assert res.returncode == 0, res.stderr
    schema = json.loads(res.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for example in examples:
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(example.read_text()))]
        assert errors == [], f"{example}: {errors}"
    bad = {"experiment": {"workload": "ycsb-a", "lab": {"nodes": 0}},
           "plan": {"vm_types": {}, "hosts": {}, "tenants": []},
           "rules": {"twcs": [{"ttl_s": 60}]},
           "net": {"cc": "vegas"}, "profiles": {"pi": {"cpus": 2}}}[name]
    assert not validator.is_valid(bad)


def test_unknown_schema_name_is_one_line() -> None:
    res = casslab("schema", "spec")
    assert res.returncode != 0
    assert res.stderr.strip() == ("error: schema 'spec': valid names are experiment, plan, "
                                  "rules, net, profiles")


def test_validate_refuses_a_huge_campaign_unless_allowed(tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    levels = list(range(1, 31))
    spec.write_text(yaml.safe_dump({"workload": "ycsb-a", "factors": [
        {"name": "records", "levels": levels}, {"name": "option.field-count", "levels": levels},
        {"name": "option.seed", "levels": levels}]}))
    res = casslab("experiment", "validate", str(spec))
    assert res.returncode != 0
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "the campaign is too large: 27000 cells, 81000 trials" in res.stderr
    res = casslab("experiment", "validate", "--allow-large", str(spec))
    assert res.returncode == 0, res.stderr
    assert "27000 cells, 81000 trials" in res.stdout
