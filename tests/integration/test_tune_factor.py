"""Factor `tuner` on a real 1-node lab: a campaign of `tuner: [off, seed003]` over a
two-stage IoT workload; the seed003 trial leaves the tuner's audit in the results (read
back through the repository), the off trial none, and both have per-stage responses."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from casslab.analysis.responses import trial_values
from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner
from casslab.experiment.spec import parse_spec
from casslab.store.results import Results
from casslab.tune.factor import TunerBeside

from labtools import leftovers

LAB = "ittuner"
RATE_OPS_S = 200
STAGES = """\
stages:
  - {name: stage1, duration: 6s, mix: {insert: 1}}
  - {name: stage2, duration: 6s, mix: {insert: 9, lesrow: 1}}
"""
SPEC = """
name: it-tuner
lab: {{nodes: 1, profile: container}}
workload:
  name: iot
  options: {{devices: 20, rate: {rate}, compaction: "twcs:1:MINUTES", table-ttl-s: 300,
             stages: {stages}}}
factors:
  - {{name: tuner, levels: [off, seed003]}}
design: {{trials: 1, randomize: false}}
stop: {{timeout_s: 120}}
analysis: {{responses: [ops_s, stage.stage1.ops_s, stage.stage2.ops_s, stage.stage2.p99_ms]}}
"""

pytestmark = pytest.mark.integration


def test_a_tuner_trial_leaves_its_audit_in_the_results(tmp_path: Path) -> None:
    (tmp_path / "stages.yaml").write_text(STAGES)
    spec = parse_spec(SPEC.format(rate=RATE_OPS_S, stages=tmp_path / "stages.yaml"),
                      source="it-tuner")
    results = tmp_path / "results"
    try:
        outcome = CampaignRunner(spec, results, home=default_home(), cache=default_cache(),
                                 lab_name=LAB, beside=TunerBeside(interval_s=3.0)).run()
    finally:
        assert not leftovers(LAB)
    store, repo = Results.open(results)
    with store:
        errors = [(t.cell, t.error) for t in repo.trials() if t.status != "done"]
        assert (outcome.done, outcome.failed) == (2, 0), errors
        trials = {t.cell: t for t in repo.kept_trials()}
        off, on = trials["tuner=off"], trials["tuner=seed003"]
        assert repo.tuner_audit(off.trial_id) == []
        audit = repo.tuner_audit(on.trial_id)
        # 12 s of load, an iteration every 3 s: the first only records the counts.
        assert len(audit) >= 3, audit
        assert {r["table"] for r in audit} == {"iot.sensor_data"}
        assert audit[0]["action"] == "skip" and "first snapshot" in audit[0]["reason"]
        decided = [r for r in audit[1:] if r["action"] in ("change", "keep", "hold")]
        assert decided, audit
        assert all(r["inputs"]["ttl_s"] == 300 for r in decided)
        assert all(r["rule"] is not None for r in decided)
        assert [r["ts"] for r in audit] == sorted(r["ts"] for r in audit)
        assert on.started_at is not None and on.ended_at is not None
        assert on.started_at <= audit[0]["ts"] <= audit[-1]["ts"] <= on.ended_at

        ids = [off.trial_id, on.trial_id]
        for name in ("stage.stage1.ops_s", "stage.stage2.ops_s"):
            for tid, v in trial_values(repo, name, ids).items():
                assert v == pytest.approx(RATE_OPS_S, rel=0.15), (name, tid)
        for tid, v in trial_values(repo, "stage.stage2.p99_ms", ids).items():
            assert not math.isnan(v) and v > 0, tid
        assert all(math.isnan(v) for v in trial_values(repo, "stage.stage3.ops", ids).values())
