"""A tiny paired comparison on two real 1-node labs side by side (1 repetition, the
scenario's stages a few seconds each): every arm's stage lands in the results store as a
trial of its (mode, stage) cell with node samples, the tuner audits, both labs go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casslab.core.paths import default_cache, default_home
from casslab.store.db import Store
from casslab.store.records import Results
from casslab.tune.paired_run import CompareOptions, run_comparison
from casslab.tune.rules import seed003_rules

from labtools import leftovers

pytestmark = pytest.mark.integration

LAB = "itpair"
TIME_SCALE = 0.05


def test_side_by_side_comparison_records_both_arms(tmp_path: Path) -> None:
    results, out = tmp_path / "results", tmp_path / "doc.json"
    messages: list[str] = []
    opts = CompareOptions(
        results=results, out=out, home=default_home(), cache=default_cache(),
        load_options={"devices": 10, "in-flight": 4}, reps=1, time_scale=TIME_SCALE,
        # 4.5 / 6 / 9 / 4.5 s stages; the tuner looks every 2 s.
        stage_scale=0.0005, modes=("static", "dynamic"), lab_name=LAB, warmup_s=0,
        tuner_interval_s=2.0, tuner_min_change_interval_s=4.0, sample_interval_s=1.0)
    doc = run_comparison(opts, seed003_rules(time_scale=TIME_SCALE), on_message=messages.append)

    assert "rep 1: static on core 0, dynamic on core 1" in messages
    assert [(r["mode"], r["core"], len(r["stages"])) for r in doc["runs"]] == [
        ("static", 0, 4), ("dynamic", 1, 4)]
    assert json.loads(out.read_text())["runs"] == doc["runs"]
    # The Sampler read each node's data directory, and nothing tuned the static arm.
    assert all(s["disk_peak_mib"] > 0 for r in doc["runs"] for s in r["stages"])
    assert {(s["compaction_at_end"]["compaction_window_size"],
             s["compaction_at_end"]["min_threshold"]) for s in doc["runs"][0]["stages"]} == {
        ("1", "6")}
    with Store(results, create=False) as store:
        repo = Results(store)
        trials = repo.trials()
        sampled = {t.trial_id for t in trials if repo.node_metrics(t.trial_id)}
    assert sorted(t.cell for t in trials) == sorted(
        f"mode={m} stage={s}" for m in ("static", "dynamic") for s in range(1, 5))
    assert all(t.status == "done" and (t.ops or 0) > 0 for t in trials), trials
    assert {t.params["core"] for t in trials if "dynamic" in t.cell} == {1}
    assert sampled == {t.trial_id for t in trials}
    audit = [json.loads(line) for line in (results / "audit" / "dynamic1.jsonl").open()]
    assert audit and all(r["keyspace"] == "iot_cmp" for r in audit)
    assert not (results / "audit" / "static1.jsonl").exists()
    for lab in (f"{LAB}0", f"{LAB}1"):
        assert not leftovers(lab), f"{lab} left: {leftovers(lab)}"
        assert not (default_home() / "labs" / lab).exists()
