"""A study's reproduction: its specs, their results folders, and the tables and figures of
its doc (docs/reproductions/<study>.md) written from the results databases.

Every number in the generated blocks is the package's: the paper's values are the specs'
`reference.values`, each verdict is the verdict engine's (casslab.analysis.findings, the
same as the campaign's HTML report: each finding's effect with its interval, simultaneous
over the spec's findings). Nothing here tests anything on its own. A doc keeps its prose;
the generated parts live between `<!-- casslab reproduce: begin NAME -->` and
`<!-- casslab reproduce: end NAME -->`, and a block the doc lacks is appended at its end.
A campaign whose results folder is not here (run on another machine, or lost) keeps the
rows and figures the doc already has for it, and the doc says so: rerunning one spec
updates that spec's rows only. What spans campaigns (002's F2 and F4 rows, its delay
model) is computed when its campaigns' databases are all here, and kept as the doc has
it otherwise.
"""

from __future__ import annotations

import base64
import math
import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from casslab.analysis.findings import DECISIVE, INCONCLUSIVE, ValueRow, Verdict
from casslab.core.errors import UsageError
from casslab.experiment.scales import SMOKE
from casslab.experiment.spec import scale_names
from casslab.report import edge
from casslab.report.html import Report, build_report, until_verdicts
from casslab.store.records import Results, TrialRow

STUDIES = ("000", "001", "002", "003", "004")
BUILT_IN = ("here", SMOKE)  # here: the specs as written; both offered by every spec
BLOCKS = ("verdicts", "values", "figures")
DELAY_MODEL = "delay-model"  # 002's extra block: the delay-only model beside the tables
KEPT_MODEL = "(Kept as the doc had it:"
ACROSS = "across the sweeps"  # the campaign column of findings that span two campaigns


class ReproduceError(UsageError):
    """A study, spec folder or doc that cannot be reproduced as asked."""


def begin_marker(block: str) -> str:
    return f"<!-- casslab reproduce: begin {block} -->"


def end_marker(block: str) -> str:
    return f"<!-- casslab reproduce: end {block} -->"


@dataclass(frozen=True)
class Campaign:
    """One spec of a study and the results folder its campaign writes."""

    spec: Path
    results: Path

    @property
    def name(self) -> str:
        return self.results.name


def study_specs(study: str, examples: Path) -> list[Path]:
    """The study's specs in name order: examples/<study>-*/*.yaml (one per experiment)."""
    if study not in STUDIES:
        raise ReproduceError(f"study: {study!r} is not one of {', '.join(STUDIES)}")
    found = sorted(examples.glob(f"{study}-*/*.yaml"))
    if not found:
        raise ReproduceError(f"study {study}: no spec in {examples}/{study}-*/")
    return found


def results_dir(spec: Path, root: Path, scale: str) -> Path:
    """<root>/<spec folder>-<spec stem>[-<scale>]: the folders `make reproduce` always
    used, so an earlier run's results resume."""
    name = f"{spec.parent.name}-{spec.stem}"
    return root / (name if scale == "here" else f"{name}-{scale}")


def campaigns(study: str, examples: Path, root: Path, scale: str) -> list[Campaign]:
    """The study's campaigns at `scale`: every spec for `here` and `smoke` (every spec
    has both), else the specs whose `scales:` name it (002's `paper-rounds` is only its
    two percent sweeps'); raises ReproduceError naming the valid sizes."""
    specs = study_specs(study, examples)
    chosen = specs if scale in BUILT_IN else [s for s in specs if scale in scale_names(s)]
    if not chosen:
        valid = [*BUILT_IN[:1], *sorted({n for s in specs for n in scale_names(s)})]
        raise ReproduceError(f"--scale: {scale!r} is not one of {', '.join(valid)} "
                             f"(the sizes study {study}'s specs offer)")
    return [Campaign(s, results_dir(s, root, scale)) for s in chosen]


def _p(v: float) -> str:
    return "-" if math.isnan(v) else (f"{v:.2g}" if v < 0.001 else f"{v:.3f}")


def _g(v: float) -> str:
    return "-" if math.isnan(v) else f"{v:.4g}"


def verdict_row(v: Verdict, campaign: str) -> str:
    """One finding as a Markdown row: the engine's verdict, interval and p values."""
    medians = v.medians_text()
    ratio = f"; {medians}" if medians else ""
    n = f"{v.fit.n} (line)" if v.fit else f"{v.n_low} / {v.n_high}"
    source = f" ({v.finding.source})" if v.finding.source else ""
    return (f"| {v.finding.claim}{source} | `{campaign}` | **{v.label}** | {v.test} | "
            f"{_p(v.p)} | {_p(v.p_adj)} | {v.interval()}{ratio} | {n} |")


def value_row(row: ValueRow, campaign: str) -> str:
    """One published value beside the lab's median of the matching kept trials."""
    at = ", ".join(f"{k}={v}" for k, v in row.ref.at.items()) or "(all)"
    pooled = f" (pooled over {', '.join(row.pooled)})" if row.pooled else ""
    cover = "" if math.isnan(row.lab.ci_coverage) else f" ({row.lab.ci_coverage:.0%})"
    lab = (f"{_g(row.lab.median)} [{_g(row.lab.ci_low)}, {_g(row.lab.ci_high)}]{cover}"
           if row.lab.n else "(no trials)")
    return (f"| `{campaign}` | {row.ref.response} | {at}{pooled} | {row.ref.paper_value:g} "
            f"{row.ref.unit} | {row.ref.source} | {lab} | {row.lab.n} | "
            f"{'-' if math.isnan(row.ratio) else f'{row.ratio:.3f}'} |")


def verdict_counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How many findings got each verdict (the engine's verdict names, not the labels)."""
    return dict(Counter(v.verdict for v in verdicts))


def counts_line(counts: Mapping[str, int]) -> str:
    total = sum(counts.values())
    parts = ", ".join(f"{n} {name}" for name, n in sorted(counts.items(), key=lambda kv:
                                                            (-kv[1], kv[0])))
    return f"{total} finding{'' if total == 1 else 's'}" + (f": {parts}" if parts else "")


def _missing(campaign: Campaign) -> str:
    return f"`{campaign.name}`: not run (no results database in {campaign.results})"


def _kept(campaign: Campaign) -> str:
    return (f"`{campaign.name}`: its rows and figures are kept as the doc had them (no "
            f"results database in {campaign.results} here; the engine wrote them when it "
            "was, and before 2026-11-28 an until-verdicts campaign's 'smaller than this lab "
            "can detect' compared with what its rounds so far detect, not with a bound "
            "fixed before the run)")


@dataclass(frozen=True)
class Earlier:
    """A campaign's part of the doc as last generated, for a campaign whose results are
    not here (another machine's run, a lost folder): its verdict rows, paper-value rows
    and figure lines, so rerunning one spec does not drop the others' rows."""

    verdicts: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.verdicts or self.values or self.figures)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split(" | ")]


def verdict_rows_of(block: str, campaign: str) -> list[str]:
    """The verdict block's rows whose campaign column (the second) is `campaign`."""
    return [ln for ln in block.splitlines()
            if ln.startswith("| ") and len(_cells(ln)) > 2 and _cells(ln)[1] == f"`{campaign}`"]


def _figure_prefix(study: str, campaign: Campaign) -> str:
    return f"](img/{figure_file(study, campaign, '')[:-len('.png')]}"


def figure_owner(study: str, line: str, camps: Sequence[Campaign]) -> Campaign | None:
    """The campaign a figure line of the doc shows: the one whose file prefix it has,
    the longest when several match (000's `ram-sweep` figures also start with `ram-`)."""
    found = [c for c in camps if _figure_prefix(study, c) in line]
    return max(found, key=lambda c: len(c.name), default=None)


def earlier_rows(study: str, campaign: Campaign, blocks: Mapping[str, str],
                 camps: Sequence[Campaign] = ()) -> Earlier:
    """`campaign`'s rows in the doc's current blocks (verdicts: its second column;
    paper values: its first; figures: the files named after it, among `camps`)."""
    verdicts = verdict_rows_of(blocks.get("verdicts", ""), campaign.name)
    values = [ln for ln in blocks.get("values", "").splitlines()
              if ln.startswith("| ") and _cells(ln)[0] == f"`{campaign.name}`"]
    figures = [ln for ln in blocks.get("figures", "").splitlines()
               if figure_owner(study, ln, [campaign, *camps]) == campaign]
    return Earlier(tuple(verdicts), tuple(values), tuple(figures))


def kept_verdicts(rows: Sequence[str]) -> list[str]:
    """The engine's verdict name of each kept verdict row (its third column), to count."""
    return [verdict_of_label(_cells(r)[2]) for r in rows]


def verdict_of_label(label: str) -> str:
    """The engine's verdict name a printed label starts with ("inconclusive (budget
    spent)" -> inconclusive), for counting kept rows."""
    bare = label.strip().strip("*")
    names = sorted((*DECISIVE, INCONCLUSIVE), key=len, reverse=True)
    return next((n for n in names if bare.startswith(n)), bare)


def unfinished(rows: Sequence[TrialRow], sequential: bool) -> str:
    """What a campaign's trials say is left of it ('' when it finished). A fixed design
    finished when no planned trial is left; an `until: verdicts` one may stop before its
    last rounds, so only a round begun and not ended says it was cut short."""
    left = [r for r in rows if r.status in ("planned", "running")]
    if not left:
        return ""
    if not sequential:
        return f"{len(left)} of {len(rows)} planned trials not run"
    begun = {r.round for r in rows if r.status not in ("planned", "running")}
    cut = sorted(rnd for rnd in {r.round for r in left} & begun if rnd is not None)
    if not cut:
        return ""
    in_round = sum(r.round == cut[0] for r in left)
    return f"round {cut[0]} begun, {in_round} of its trials not run"


def unfinished_note(study: str, campaign: Campaign, report: Report) -> str:
    """The line a doc gets for a campaign its database says was cut short ('' if not);
    `report`: the campaign's, whose stored spec says whether it adds rounds."""
    store, results = Results.open(campaign.results)
    with store:
        rows = results.trials()
    why = unfinished(rows, until_verdicts(report.spec_yaml, report.spec_digest).sequential)
    return (f"`{campaign.name}`: unfinished ({why}): its rows are those of the trials done; "
            f"`casslab reproduce {study}` resumes it") if why else ""


def render_blocks(study: str, reports: Sequence[tuple[Campaign, Report | None]],
                  img_prefix: str, notes: Sequence[str] = (),
                  earlier: Mapping[str, str] | None = None) -> dict[str, str]:
    """The doc's generated blocks (Markdown) from each campaign's report; a campaign
    without results (None) keeps its rows from `earlier` (the doc's blocks as they
    are), else is named as not run; `notes` (e.g. an unfinished campaign's) go below
    the tables. `img_prefix`: how the doc refers to the figures' folder (img/)."""
    verdicts = ["| finding (source) | campaign | verdict | interval (method, family) | p | "
                "p (Bonferroni) | effect [interval] (coverage) | n low / high |",
                "|---|---|---|---|---|---|---|---|"]
    values = ["| campaign | response | at | paper | source | lab median [CI] (coverage) | "
              "n | lab / paper |", "|---|---|---|---:|---|---|---:|---:|"]
    figures: list[str] = []
    counts: Counter[str] = Counter()
    missing: list[str] = list(notes)
    prior = earlier or {}
    for camp, rep in reports:
        if rep is None:
            kept = earlier_rows(study, camp, prior, [c for c, _ in reports])
            missing.append(_missing(camp) if kept.empty else _kept(camp))
            counts.update(kept_verdicts(kept.verdicts))
            verdicts += kept.verdicts
            values += kept.values
            figures += kept.figures
            continue
        counts.update(verdict_counts(rep.reproduction.verdicts))
        verdicts += [verdict_row(v, camp.name) for v in rep.reproduction.verdicts]
        values += [value_row(r, camp.name) for r in rep.reproduction.values]
        figures += [f"![{f.title}]({img_prefix}{figure_file(study, camp, f.id)})"
                    for f in rep.figures if f.png_b64]
    extra: dict[str, str] = {}
    if study == "002":
        named = [(c.name, r) for c, r in reports]
        across, why = edge.across_verdicts(named)
        kept_across = verdict_rows_of(prior.get("verdicts", ""), ACROSS) if why else []
        if kept_across:
            counts.update(kept_verdicts(kept_across))
            verdicts += kept_across
            missing.append(f"`{ACROSS}`: the rows are kept as the doc had them ({why})")
        else:
            counts.update(verdict_counts(across))
            verdicts += [verdict_row(v, ACROSS) for v in across]
            missing += [why] if why else []
        extra[DELAY_MODEL] = _delay_model(reports, prior.get(DELAY_MODEL, ""))
    note = [""] + [f"- {m}" for m in missing] if missing else []
    head = (f"Generated by `casslab reproduce {study}` from the results databases; every "
            "verdict is the verdict engine's (casslab.analysis.findings), as in each "
            "campaign's report.html. " + counts_line(counts) + ".")
    return {"verdicts": "\n".join([head, "", *verdicts, *note]),
            "values": "\n".join(["The paper's values are the specs' `reference.values`; the "
                                 "lab's is the median of the matching kept trials with its "
                                 "order-statistic interval.", "", *values, *note]),
            "figures": "\n\n".join(figures) if figures else "(no figures: no campaign ran)",
            **extra}


def _delay_model(reports: Sequence[tuple[Campaign, Report | None]], before: str) -> str:
    """002's delay-model block from the sweeps here; the doc's block as it was when a
    campaign that has lab medians in it has no results here (they would be lost)."""
    measured = [ln for ln in before.splitlines() if "| (not run) |" not in ln]
    gone = [c.name for c, r in reports
            if r is None and any(ln.startswith(f"| `{c.name}` |") for ln in measured)]
    if gone:
        kept = before.split(f"\n\n{KEPT_MODEL}", 1)[0].strip("\n")
        return f"{kept}\n\n{KEPT_MODEL} no results database here for {', '.join(gone)}.)"
    return edge.model_block([(c.name, c.spec, r) for c, r in reports])


def figure_file(study: str, campaign: Campaign, figure_id: str) -> str:
    """img/<study>-<campaign without the study's prefix>-<figure id>.png"""
    short = campaign.name.split("-", 1)[1] if "-" in campaign.name else campaign.name
    return f"{study}-{short}-{figure_id}.png".replace("/", "-")


def replace_blocks(doc: str, blocks: Mapping[str, str]) -> str:
    """`doc` with each block's text between its markers; a block the doc lacks is
    appended at the end. Raises ReproduceError for a begin marker without its end."""
    for name, text in blocks.items():
        begin, end = begin_marker(name), end_marker(name)
        if begin not in doc:
            doc = f"{doc.rstrip()}\n\n{begin}\n{text}\n{end}\n"
            continue
        pre, rest = doc.split(begin, 1)
        if end not in rest:
            raise ReproduceError(f"doc: {begin} has no {end} after it")
        doc = f"{pre}{begin}\n{text}\n{end}{rest.split(end, 1)[1]}"
    return doc


def current_block(doc: str, name: str) -> str:
    """The text between block `name`'s markers in `doc` ("" when it has none)."""
    begin, end = begin_marker(name), end_marker(name)
    if begin not in doc:
        return ""
    return doc.split(begin, 1)[1].split(end, 1)[0]


def _write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder, so a failure leaves the old file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def report_of(campaign: Campaign) -> Report | None:
    """The campaign's report (written to its report.html), None when it has not run."""
    if not (campaign.results / "results.db").exists():
        return None
    return build_report(campaign.results)


def scaled_blocks(blocks: Mapping[str, str], scale: str) -> dict[str, str]:
    """The blocks under the names of their scale: `verdicts` for the specs as written,
    `verdicts-paper` for `--scale paper`, so one doc keeps each size's tables apart."""
    return {(name if scale == "here" else f"{name}-{scale}"): text
            for name, text in blocks.items()}


def write_doc(study: str, camps: Sequence[Campaign], docs: Path,
              scale: str = "here") -> tuple[Path, list[Path]]:
    """Rewrite docs/<study>.md's generated blocks of this scale and save the reports'
    figures as docs/img/<study>-*.png; returns the doc and the figures written. The doc
    must exist (its prose is the study's); every report is built before anything is
    written."""
    doc = docs / f"{study}.md"
    if not doc.is_file():
        raise ReproduceError(f"--docs: {doc} does not exist (the folder of the studies' "
                             "docs, <study>.md each)")
    reports = [(c, report_of(c)) for c in camps]
    notes = [n for c, r in reports if r is not None and (n := unfinished_note(study, c, r))]
    before = doc.read_text()
    earlier = {base: current_block(before, scaled)
               for scaled, base in scaled_blocks({b: b for b in (*BLOCKS, DELAY_MODEL)},
                                                 scale).items()}
    blocks = scaled_blocks(render_blocks(study, reports, "img/", notes, earlier), scale)
    text = replace_blocks(before, blocks)
    img = docs / "img"
    pngs: list[tuple[Path, bytes]] = []
    for camp, rep in reports:
        for f in rep.figures if rep else []:
            if f.png_b64:
                pngs.append((img / figure_file(study, camp, f.id), base64.b64decode(f.png_b64)))
    if pngs:
        img.mkdir(parents=True, exist_ok=True)
    for path, data in pngs:
        _write_atomic(path, data)
    _write_atomic(doc, text.encode())
    return doc, [p for p, _ in pngs]
