"""casslab.report.reproduce: a study's campaigns, and its doc's generated blocks written
from a results database (a fabricated seed 002 campaign, no lab)."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from repro_fixture import ROOT, SPEC_002_EDGE, fabricate_002

from casslab.report.html import build_report
from casslab.report.reproduce import (
    Campaign,
    ReproduceError,
    begin_marker,
    campaigns,
    counts_line,
    end_marker,
    figure_owner,
    replace_blocks,
    unfinished,
    verdict_of_label,
    write_doc,
)
from casslab.store.records import TrialRow

EXAMPLES = ROOT / "examples"


def test_a_study_is_its_spec_folder_and_each_spec_gets_the_folder_make_reproduce_used(
        tmp_path: Path) -> None:
    here = campaigns("002", EXAMPLES, tmp_path, "here")
    assert [c.spec.name for c in here] == ["1-endpoint-steps.yaml", "2-edge-steps.yaml",
                                           "3-endpoint-percent.yaml", "4-edge-percent.yaml",
                                           "5-cl2-slopes.yaml"]
    assert here[2].results == tmp_path / "002-edge-3-endpoint-percent"
    smoke = campaigns("002", EXAMPLES, tmp_path, "smoke")
    assert smoke[0].results == tmp_path / "002-edge-1-endpoint-steps-smoke"


def test_a_size_only_some_specs_offer_runs_only_those_specs(tmp_path: Path) -> None:
    rounds = campaigns("002", EXAMPLES, tmp_path, "paper-rounds")
    assert [c.spec.name for c in rounds] == ["3-endpoint-percent.yaml",
                                             "4-edge-percent.yaml"]
    assert rounds[0].results == tmp_path / "002-edge-3-endpoint-percent-paper-rounds"
    assert len(campaigns("002", EXAMPLES, tmp_path, "paper")) == 4
    with pytest.raises(ReproduceError, match="not one of here, paper, paper-rounds, smoke"):
        campaigns("002", EXAMPLES, tmp_path, "rounds")


@pytest.mark.parametrize(("study", "scale", "field"), [("009", "here", "study"),
                                                       ("002", "huge", "--scale")])
def test_an_unknown_study_or_scale_is_refused_naming_the_valid_ones(
        tmp_path: Path, study: str, scale: str, field: str) -> None:
    with pytest.raises(ReproduceError, match=f"{field}: .* is not one of"):
        campaigns(study, EXAMPLES, tmp_path, scale)


def test_blocks_replace_only_between_their_markers_and_missing_ones_are_appended() -> None:
    doc = (f"# Study\nprose before\n{begin_marker('verdicts')}\nold table\n"
           f"{end_marker('verdicts')}\nprose after\n")
    new = replace_blocks(doc, {"verdicts": "new table", "values": "paper values"})
    assert "old table" not in new and "prose before" in new and "prose after" in new
    assert new.index("new table") < new.index("prose after") < new.index("paper values")
    assert replace_blocks(new, {"verdicts": "new table", "values": "paper values"}) == new
    with pytest.raises(ReproduceError, match="has no"):
        replace_blocks(f"x {begin_marker('values')} y", {"values": "z"})


def test_counts_line_puts_the_commonest_verdict_first() -> None:
    assert counts_line({"inconclusive": 2, "holds": 5}) == "7 findings: 5 holds, 2 inconclusive"
    assert counts_line({}) == "0 findings"


def test_counts_line_of_one_finding_says_finding() -> None:
    assert counts_line({"holds": 1}) == "1 finding: 1 holds"


def _doc(tmp_path: Path, *, blank: bool = False) -> Path:
    """A copy of 002's doc; `blank`: with its generated blocks emptied (a doc no
    campaign has written yet)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    text = (ROOT / "docs" / "reproductions" / "002.md").read_text()
    (docs / "002.md").write_text(_prose(text) if blank else text)
    return docs


def _prose(text: str) -> str:
    """The doc without its generated blocks (the markers kept)."""
    return re.sub(r"(<!-- casslab reproduce: begin [a-z-]+ -->\n).*?(<!-- casslab "
                  r"reproduce: end [a-z-]+ -->)", r"\1\2", text, flags=re.S)


def _block(text: str, name: str) -> str:
    m = re.search(re.escape(begin_marker(name)) + r"\n(.*?)\n" + re.escape(end_marker(name)),
                  text, re.S)
    assert m is not None, name
    return m.group(1)


def test_the_doc_gets_the_engines_verdicts_the_specs_paper_values_and_the_figures(
        tmp_path: Path) -> None:
    results = tmp_path / "results"
    camps = campaigns("002", EXAMPLES, results, "here")
    fabricate_002(camps[2].results)
    docs = _doc(tmp_path, blank=True)
    before = (docs / "002.md").read_text()
    doc, pngs = write_doc("002", camps, docs)
    text = doc.read_text()
    # the prose outside the markers stays as it was
    assert _prose(text) == _prose(before)
    expected = build_report(camps[2].results).reproduction
    verdicts = _block(text, "verdicts")
    rows = [ln for ln in verdicts.splitlines() if "`002-edge-3-endpoint-percent`" in ln]
    # one row per finding of the spec, each with the engine's own verdict and interval
    assert len(rows) == len(expected.verdicts) == 8
    for row, v in zip(rows, expected.verdicts, strict=True):
        assert row.startswith(f"| {v.finding.claim} ({v.finding.source}) |")
        assert f"**{v.label}**" in row and v.interval() in row
    total = len(expected.verdicts)
    assert f"{total} findings: " in verdicts
    # the four specs that did not run are named, not silently left out
    assert verdicts.count("not run (no results database") == 4
    values = _block(text, "values")
    # every paper value comes from the spec's reference block (36 of them), with the lab's
    assert len([ln for ln in values.splitlines() if ln.startswith("| `002-")]) == 36
    assert ("| `002-edge-3-endpoint-percent` | update.mean_ms | network.scale.endpoint=0, "
            "cl=ONE | 22.56 ms | Table 1 | 20.") in values
    figures = _block(text, "figures")
    assert [p.name for p in pngs] == ["002-edge-3-endpoint-percent-fig8-10-write.png",
                                      "002-edge-3-endpoint-percent-fig8-10-read.png",
                                      "002-edge-3-endpoint-percent-cdf-3.png",
                                      "002-edge-3-endpoint-percent-order-4.png"]
    for p in pngs:
        assert p.read_bytes().startswith(b"\x89PNG") and f"](img/{p.name})" in figures
    # a second writing from the same results changes nothing
    write_doc("002", camps, docs)
    assert doc.read_text() == text


def test_rerunning_one_spec_keeps_the_doc_rows_of_specs_whose_results_are_not_here(
        tmp_path: Path) -> None:
    camps = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(camps[2].results)
    docs = _doc(tmp_path)
    before = (docs / "002.md").read_text()
    text = write_doc("002", camps, docs)[0].read_text()
    for block in ("verdicts", "values", "figures"):
        old, new = _block(before, block), _block(text, block)
        for other in (camps[0], camps[1], camps[3], camps[4]):
            kept = [ln for ln in old.splitlines() if f"`{other.name}` |" in ln
                    or f"](img/002-{other.name.split('-', 1)[1]}-" in ln]
            assert all(ln in new.splitlines() for ln in kept), (block, other.name)
            assert kept or other not in (camps[3], camps[4]), (block, other.name)
    verdicts = _block(text, "verdicts")
    assert verdicts.count("its rows and figures are kept as the doc had them") == 4
    # the fabricated spec's rows are the engine's, not the doc's
    fresh = build_report(camps[2].results).reproduction.verdicts
    for v in fresh:
        assert f"| {v.finding.claim} ({v.finding.source}) | `{camps[2].name}` | **{v.label}**" \
            in verdicts
    # the count covers the kept rows too (F2 and F4's as well: they need both sweeps)
    rows = [ln for ln in verdicts.splitlines() if ln.startswith("| ")
            and ("`002-" in ln or "`across the sweeps`" in ln)]
    assert f"{len(rows)} findings: " in verdicts


def test_a_kept_figure_belongs_to_the_spec_with_the_longest_matching_name(
        tmp_path: Path) -> None:
    """000's `ram-sweep` figures also start with `ram-`: each is kept once, for its own."""
    camps = campaigns("000", EXAMPLES, tmp_path, "here")
    ram, sweep = (next(c for c in camps if c.name == f"000-rpi-iot-{n}")
                  for n in ("ram", "ram-sweep"))
    line = "![Fig 17](img/000-rpi-iot-ram-sweep-fig17-ram-sweep.png)"
    assert figure_owner("000", line, camps) == sweep
    assert figure_owner("000", "![x](img/000-rpi-iot-ram-fig16.png)", camps) == ram


def test_002_keeps_its_cross_sweep_rows_and_delay_model_while_a_sweep_is_not_here(
        tmp_path: Path) -> None:
    camps = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(camps[0].results)  # a steps spec: no part in F2, F4 or the model
    docs = _doc(tmp_path)
    before = (docs / "002.md").read_text()
    text = write_doc("002", camps, docs)[0].read_text()
    across = [ln for ln in _block(before, "verdicts").splitlines()
              if "| `across the sweeps` |" in ln]
    assert across and all(ln in _block(text, "verdicts").splitlines() for ln in across)
    assert "`across the sweeps`: the rows are kept as the doc had them (F2 and F4 need " \
        "both sweeps" in text
    model = _block(text, "delay-model")
    # the doc's block, without the note of what was kept the last time it was written
    kept = _block(before, "delay-model").split("\n\n(Kept as the doc had it:", 1)[0]
    assert model.startswith(kept.strip("\n"))
    assert model.endswith("(Kept as the doc had it: no results database here for "
                          "002-edge-3-endpoint-percent, 002-edge-4-edge-percent.)")
    # writing again keeps one such line, not two
    assert write_doc("002", camps, docs)[0].read_text() == text


def test_a_kept_rows_label_counts_as_its_engine_verdict() -> None:
    assert verdict_of_label("**inconclusive (budget spent)**") == "inconclusive"
    assert verdict_of_label("direction holds, size differs (lab +3 % vs paper +9 %)") == \
        "direction holds, size differs"
    assert verdict_of_label("holds") == "holds"
    assert verdict_of_label("smaller than this lab can detect (+-4 %, measured)") == \
        "smaller than this lab can detect"


def test_a_missing_doc_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    camp = Campaign(ROOT / "examples" / "002-edge" / "3-endpoint-percent.yaml",
                    tmp_path / "r" / "002-edge-3-endpoint-percent")
    fabricate_002(camp.results)
    with pytest.raises(ReproduceError, match=r"--docs: .*002\.md does not exist"):
        write_doc("002", [camp], tmp_path / "docs")
    assert not (tmp_path / "docs").exists()


def test_002s_cross_sweep_findings_and_delay_model_come_from_the_engine(
        tmp_path: Path) -> None:
    """Both sweeps fabricated (the endpoint one: 2 ms per 10 % at every CL; the edge one:
    the delay model, flat at CL 1, 1.33 and 2.67 ms per 10 % at CL 2 and 3): F2's six
    slope comparisons and F4 are the engine's verdicts in one family of 7, and the
    delay-only model sits beside every paper value."""
    camps = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(camps[2].results)
    fabricate_002(camps[3].results, spec=SPEC_002_EDGE)
    doc, _ = write_doc("002", camps, _doc(tmp_path, blank=True))
    text = doc.read_text()
    verdicts = _block(text, "verdicts")
    across = [ln for ln in verdicts.splitlines() if "| `across the sweeps` |" in ln]
    assert len(across) == 7
    assert all("simultaneous over 7 findings across the two sweeps" in ln for ln in across)
    # the fabricated slopes: endpoint 2.0 > edge 0 (CL 1) and 1.33 (CL 2); edge 2.67 > 2.0
    # at CL 3; reads 1 ms slower in every cell
    assert all("**holds**" in ln for ln in across), "\n".join(across)
    assert across[0].startswith("| CL 1, write: endpoint latency matters more")
    # the paper's slopes: the same fit through Tables 1 and 2's write values
    assert "(Fig. 8; paper: endpoint 1.99, edge -0.0229)" in across[0]
    assert across[-1].startswith("| reads take slightly longer than writes")
    assert "read / write 1.019 (geometric mean)" in across[-1]
    assert "23 findings: " in verdicts  # 8 + 8 of the two specs, 7 across them
    assert "Welch t (independent campaigns)" in across[0]  # no rounds: pooled fits
    model = _block(text, "delay-model")
    rows = [ln for ln in model.splitlines() if ln.startswith("| `002-edge-")]
    assert len(rows) == 72  # Tables 1-6: 36 values per sweep
    assert ("| `002-edge-4-edge-percent` | update.mean_ms | network.scale.edge=0, cl=TWO | "
            "38.1 | ") in model
    assert "| 33.33 | +4.77 |" in model  # model 20 + 2 x 20 / 3; paper 38.1 - 33.33
    assert "paper +3.70 [+2.36, +4.77] ms" in model  # the paper's excess over the model


def test_002_without_both_sweeps_says_why_f2_and_f4_are_missing(tmp_path: Path) -> None:
    camps = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(camps[2].results)
    text = write_doc("002", camps, _doc(tmp_path))[0].read_text()
    assert ("F2 and F4 need both sweeps (3-endpoint-percent, 4-edge-percent); ran: "
            "002-edge-3-endpoint-percent") in _block(text, "verdicts")


def test_another_scale_writes_its_own_blocks_and_leaves_the_here_ones(tmp_path: Path) -> None:
    """`--scale paper` fills `verdicts-paper` etc.: one doc keeps both sizes' tables."""
    docs = _doc(tmp_path)
    here = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(here[2].results)
    write_doc("002", here, docs)
    paper = campaigns("002", EXAMPLES, tmp_path / "results", "paper")
    fabricate_002(paper[2].results)
    text = write_doc("002", paper, docs, "paper")[0].read_text()
    here_verdicts, paper_verdicts = _block(text, "verdicts"), _block(text, "verdicts-paper")
    assert "`002-edge-3-endpoint-percent` |" in here_verdicts
    assert "`002-edge-3-endpoint-percent-paper` |" in paper_verdicts
    assert "-paper`" not in here_verdicts
    for name in ("values", "figures", "delay-model"):
        assert begin_marker(f"{name}-paper") in text and begin_marker(name) in text


def _row(seq: int, status: str, rnd: int | None = None) -> TrialRow:
    return TrialRow(trial_id=seq, seq=seq, trial_no=1, warmup=False, status=status,
                    error=None, started_at=None, ended_at=None, ended_by=None, cell="c",
                    cell_idx=0, params={}, cell_params={}, runtime_s=None, ops=None,
                    ops_s=None, errors=None, mean_ms=None, p50_ms=None, p95_ms=None,
                    p99_ms=None, p999_ms=None, max_ms=None, pct_source=None, round=rnd)


def test_a_campaign_is_unfinished_when_trials_are_left_that_its_design_would_have_run() -> None:
    done = [_row(1, "done", 1), _row(2, "done", 1)]
    # a fixed design: every planned trial is part of it
    assert unfinished(done, sequential=False) == ""
    assert unfinished([*done, _row(3, "planned")], sequential=False) == \
        "1 of 3 planned trials not run"
    # until: verdicts stops between rounds: rounds never begun are not missing...
    later = [_row(3, "planned", 2), _row(4, "planned", 2)]
    assert unfinished([*done, *later], sequential=True) == ""
    # ...but a round begun and not ended was cut short (Ctrl-C, a crash)
    cut = [*done, _row(3, "done", 2), _row(4, "running", 2), _row(5, "planned", 2)]
    assert unfinished(cut, sequential=True) == "round 2 begun, 2 of its trials not run"
    assert unfinished([replace(r, status="done") for r in cut], sequential=True) == ""


def test_the_doc_says_which_campaign_was_cut_short(tmp_path: Path) -> None:
    camps = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(camps[2].results)  # 3-endpoint-percent: until verdicts, in rounds
    with sqlite3.connect(camps[2].results / "results.db") as db:
        db.execute("UPDATE trials SET round = 1")
        db.execute("UPDATE trials SET status = 'planned' WHERE seq = 5")
    doc, _ = write_doc("002", camps, _doc(tmp_path))
    verdicts = _block(doc.read_text(), "verdicts")
    assert ("- `002-edge-3-endpoint-percent`: unfinished (round 1 begun, 1 of its trials "
            "not run): its rows are those of the trials done") in verdicts


def test_002s_cross_sweep_findings_pair_the_sweeps_round_by_round_when_both_have_rounds(
        tmp_path: Path) -> None:
    """Both sweeps in interleaved rounds that were added until decisive (the specs'
    `until: verdicts`): F2 and F4 pair round r of one sweep with round r of the other,
    one slope difference (or read / write ratio) per round, and take the anytime-valid
    sequence, since each sweep's number of rounds was chosen by its data."""
    camps = campaigns("002", EXAMPLES, tmp_path / "results", "here")
    fabricate_002(camps[2].results, trials=8, rounds=True)
    fabricate_002(camps[3].results, spec=SPEC_002_EDGE, trials=8, rounds=True)
    doc, _ = write_doc("002", camps, _doc(tmp_path, blank=True))
    across = [ln for ln in _block(doc.read_text(), "verdicts").splitlines()
              if "| `across the sweeps` |" in ln]
    assert len(across) == 7
    assert all("confidence sequence" in ln for ln in across), across[0]
    assert "least-squares slopes within each round (round r with round r)" in across[0]
    assert "mean over each round's trials" in across[-1]
    assert all("**holds**" in ln for ln in across), "\n".join(across)
    assert all(ln.endswith("| 8 / 8 |") for ln in across), across[0]
