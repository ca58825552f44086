"""Results databases written by schema-1 and schema-2 code (tests/fixtures/results_v1.db
and results_v2.db, see make_results_v*.py) open, migrate to the current schema, and
answer the questions. A writer migrates the file in place keeping a backup; a reader
migrates a copy in memory; a refusal writes nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from casslab.metrics.samples import TrialMetrics
from casslab.store.db import Store, StoreError
from casslab.store.records import Results
from casslab.store.schema import SCHEMA_VERSION, V1_MAX, V1_MEAN_MAX

FIXTURE = Path(__file__).parent.parent / "fixtures" / "results_v1.db"
FIXTURE_V2 = Path(__file__).parent.parent / "fixtures" / "results_v2.db"


@pytest.fixture
def v1_dir(tmp_path: Path) -> Path:
    shutil.copy(FIXTURE, tmp_path / "results.db")
    return tmp_path


def test_v1_database_migrates_and_answers(v1_dir: Path) -> None:
    before = _stamp(v1_dir / "results.db")
    store, results = Results.open(v1_dir)
    with store:
        assert store.schema_found == 1
        camp = results.campaign()
        assert camp is not None and camp.name == "fixture"
        assert camp.factors[0]["levels"] == [1, 3]
        trials = results.trials()
        assert [t.status for t in trials] == ["done"] * 5 + ["failed"]
        kept = results.kept_trials()
        assert [(t.seq, t.cell) for t in kept] == [(3, "nodes=1"), (4, "nodes=3"),
                                                   (5, "nodes=1")]
        # Schema 1's ALL numbers stay (no histograms to redo them), marked as such.
        assert kept[0].p50_ms == pytest.approx(1.495) and kept[0].pct_source == V1_MEAN_MAX
        ops = results.op_summaries(kept[0].trial_id)
        assert [(o.op, o.pct_source) for o in ops] == [
            ("read", "histogram"), ("update", "histogram"), ("ALL", V1_MEAN_MAX)]
        assert ops[-1].latency_hist is None
        ivs = results.intervals(kept[0].trial_id)
        assert len(ivs) == 10 and {iv.pct_source for iv in ivs} == {V1_MAX}
        assert len(results.node_metrics(kept[0].trial_id)) == 3
        assert len(results.host_metrics(kept[0].trial_id)) == 3
        assert results.peak_data_mib()[kept[0].trial_id] == pytest.approx(12.0)
        assert results.coordinator_requests()[kept[0].trial_id] == {"read": 200,
                                                                    "write": 2000}
        assert [p.warmup for p in results.trial_order("p50_ms")] == [True, True] + [False] * 3
        assert results.search_steps()[0].level == 100.0
    # A reader migrated a copy in memory: the file is still schema 1, byte for byte.
    assert _stamp(v1_dir / "results.db") == before
    assert _version_of(v1_dir / "results.db") == 1


def _stamp(path: Path) -> tuple[str, int]:
    """A file's content hash and modification time (ns): equal means nothing wrote it."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def _version_of(path: Path) -> int:
    raw = sqlite3.connect(path)
    version = raw.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    raw.close()
    return int(version)


def _fixture_digest() -> str:
    raw = sqlite3.connect(FIXTURE)
    digest = raw.execute("SELECT spec_digest FROM campaigns").fetchone()[0]
    raw.close()
    return str(digest)


def test_refusing_another_campaign_writes_nothing(v1_dir: Path) -> None:
    before, listing = _stamp(v1_dir / "results.db"), sorted(os.listdir(v1_dir))
    with pytest.raises(StoreError, match=r"holds results of another spec \(campaign 'fixture'"):
        Store(v1_dir, campaign="not-the-fixture")
    assert _stamp(v1_dir / "results.db") == before
    assert sorted(os.listdir(v1_dir)) == listing  # no backup, no -wal/-shm left behind
    assert _version_of(v1_dir / "results.db") == 1


def test_refusing_a_newer_schema_writes_nothing(v1_dir: Path) -> None:
    raw = sqlite3.connect(v1_dir / "results.db")
    raw.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    before, listing = _stamp(v1_dir / "results.db"), sorted(os.listdir(v1_dir))
    for create in (True, False):
        with pytest.raises(StoreError, match="schema_version 99: this casslab reads up to"):
            Store(v1_dir, create=create)
    assert _stamp(v1_dir / "results.db") == before
    assert sorted(os.listdir(v1_dir)) == listing


def test_a_reader_refuses_a_database_without_casslab_tables_and_writes_nothing(
        tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "results.db").close()  # an empty SQLite file
    before = _stamp(tmp_path / "results.db")
    with pytest.raises(StoreError, match=r"not a results database \(it has no casslab tables"):
        Store(tmp_path, create=False)
    assert _stamp(tmp_path / "results.db") == before


def test_a_writer_migrates_in_place_keeping_a_backup_and_says_so(v1_dir: Path) -> None:
    original = _stamp(v1_dir / "results.db")[0]
    with Store(v1_dir, campaign=_fixture_digest()) as store:
        assert store.schema_found == 1
        assert store.migration is not None
        backup = v1_dir / "results.db.v1.bak"
        assert store.migration.backup == backup
        assert store.migration.note == (f"{v1_dir / 'results.db'}: schema 1 migrated to "
                                        f"{SCHEMA_VERSION}; the old file is kept as {backup}")
        assert "\n" not in store.migration.note
    assert _version_of(v1_dir / "results.db") == SCHEMA_VERSION
    # The backup is the schema-1 database, whole: it opens and answers as the original.
    assert _version_of(backup) == 1
    restored = v1_dir / "restored"
    restored.mkdir()
    shutil.copy(backup, restored / "results.db")
    store, results = Results.open(restored)
    with store:
        assert store.schema_found == 1 and len(results.trials()) == 6
    assert original != _stamp(v1_dir / "results.db")[0]
    with Store(v1_dir) as again:  # already current: no second migration, no note
        assert again.migration is None


def test_migrated_database_takes_new_trials_and_reopens_without_migrating(
        v1_dir: Path) -> None:
    with Store(v1_dir) as store:
        store.mark_running(6, {"nodes": 3}, "none")
        store.commit_trial(6, summary={
            "elapsed_s": 1.0, "ops": 2, "ops_s": 2.0, "errors": 0, "ended_by": "completed",
            "by_op": {"read": {"ops": 2, "ops_s": 2.0, "errors": 0,
                               "latency": _pct(1000), "service": _pct(900)}}},
            intervals=[], metrics=_empty(), command=[])
    store, results = Results.open(v1_dir)
    with store:
        assert store.schema_found == SCHEMA_VERSION
        six = next(t for t in results.trials() if t.trial_id == 6)
        assert six.kept and six.p50_ms == 1.0 and six.pct_source == "histogram"


def test_v2_database_migrates_keeps_its_trials_and_takes_a_tuner_audit(
        tmp_path: Path) -> None:
    shutil.copy(FIXTURE_V2, tmp_path / "results.db")
    raw = sqlite3.connect(tmp_path / "results.db")
    assert not raw.execute("SELECT 1 FROM sqlite_master WHERE name='tuner_audit'").fetchone()
    raw.close()
    with Store(tmp_path) as store:
        assert store.schema_found == 2
        results = Results(store)
        trials = results.trials()
        assert len(trials) == 7
        v2_trial = next(t for t in trials if t.seq == 7)
        assert v2_trial.status == "done" and v2_trial.p50_ms == 1.0
        assert results.tuner_audit(v2_trial.trial_id) == []
        store.mark_running(6, {"nodes": 3, "tuner": "seed003"}, "none")
        store.commit_trial(6, summary={
            "elapsed_s": 1.0, "ops": 2, "ops_s": 2.0, "errors": 0, "ended_by": "completed",
            "by_op": {"read": {"ops": 2, "ops_s": 2.0, "errors": 0,
                               "latency": _pct(1000), "service": _pct(900)}}},
            intervals=[], metrics=_empty(), command=[],
            audit=[{"ts": 1.0, "action": "keep", "table": "iot.t"}])
    store, results = Results.open(tmp_path)
    with store:
        assert store.schema_found == SCHEMA_VERSION
        assert results.tuner_audit(6) == [{"ts": 1.0, "action": "keep", "table": "iot.t"}]


def test_newer_schema_is_refused(v1_dir: Path) -> None:
    raw = sqlite3.connect(v1_dir / "results.db")
    raw.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="schema_version 99: this casslab reads up to"):
        Store(v1_dir, create=False)


def _pct(us: int) -> dict[str, float]:
    return {"mean_us": us, "p50_us": us, "p95_us": us, "p99_us": us, "p999_us": us,
            "max_us": us}


def _empty() -> TrialMetrics:
    return TrialMetrics()


def test_a_schema_2_database_gains_the_credit_column(tmp_path: Path) -> None:
    with Store(tmp_path):
        pass
    raw = sqlite3.connect(tmp_path / "results.db")
    raw.execute("ALTER TABLE node_metrics DROP COLUMN cpu_credits")
    raw.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    with Store(tmp_path) as store:
        assert store.schema_found == 2
    raw = sqlite3.connect(tmp_path / "results.db")
    cols = [r[1] for r in raw.execute("PRAGMA table_info(node_metrics)")]
    raw.close()
    assert cols[-1] == "cpu_credits"


@pytest.mark.parametrize(("version", "table"), [(4, "host_load"), (5, "node_restarts")])
def test_an_older_database_gains_the_table_its_next_version_added(
        tmp_path: Path, version: int, table: str) -> None:
    with Store(tmp_path):
        pass
    raw = sqlite3.connect(tmp_path / "results.db")
    raw.execute(f"DROP TABLE {table}")
    raw.execute(f"UPDATE meta SET value='{version}' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    with Store(tmp_path) as store:
        assert store.schema_found == version
        assert store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    with Store(tmp_path) as store:
        assert store.schema_found == SCHEMA_VERSION == 7


def test_a_schema_6_database_gains_the_round_and_quality_columns(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        cid, _ = store.open_campaign(name="c", digest="d", spec_yaml="", response="ops_s",
                                     factors=[])
        tid = store.ensure_plan(cid, [(1, 0, "all", {}, 1, False, "none")])[1][0]
    raw = sqlite3.connect(tmp_path / "results.db")
    for col in ("round", "steady_start_s", "steady_class", "outside_cpu_pct", "steal_pct",
                "guard_reruns", "disturbed"):
        raw.execute(f"ALTER TABLE trials DROP COLUMN {col}")
    raw.execute("UPDATE meta SET value='6' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    with Store(tmp_path) as store:
        assert store.schema_found == 6
        store.set_rounds(cid, {1: 4})
        store.set_quality(tid, steady_start_s=3.0, steady_class="steady",
                          outside_cpu_pct=12.5, steal_pct=0.0, guard_reruns=1)
        row = Results(store).trials()[0]
    assert (row.round, row.steady_start_s, row.steady_class, row.outside_cpu_pct,
            row.guard_reruns, row.disturbed) == (4, 3.0, "steady", 12.5, 1, False)


def test_every_reader_of_an_older_database_leaves_it_as_it_was(v1_dir: Path) -> None:
    import casslab.results
    from casslab.analysis.compare import load_side
    from casslab.store.db import export

    db = v1_dir / "results.db"
    before = _stamp(db)
    frames = casslab.results.open(v1_dir)
    assert len(frames.trials) == 6
    assert load_side(v1_dir, "nodes=3").values
    assert len(export(v1_dir, "csv", v1_dir.parent / "export")) > 0
    assert _stamp(db) == before
    assert not (v1_dir / "results.db.v1.bak").exists()
