"""The campaign runner: plan, build labs, reset, run trials, sample, commit, resume.

Resumable by construction: the plan is a pure function of the spec, every trial is
committed in one transaction the moment it ends, and a run on an existing results
directory skips the trials the database marks done. Ctrl-C (or SIGTERM) stops the
trial in progress (not kept), takes the lab down and keeps every finished trial.
"""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any

from casslab.cassandra import catalog, compaction
from casslab.core.errors import CasslabError, UsageError
from casslab.experiment import outside, tableopts
from casslab.experiment.beside import (
    Beside,
    BesideResult,
    Running,
    TrialSite,
    tuner_levels,
)
from casslab.experiment.design import (
    PlannedTrial,
    block_key,
    holds_schema,
    needs_search,
    plan,
    reset_before,
    rewarm_needed,
    search_key,
)
from casslab.experiment.factors.cell import Cell, net_text
from casslab.experiment.factors.registry import RATE, TUNER_FACTOR
from casslab.experiment.loadphase import load_phase_options
from casslab.experiment.recovery import Recovery, Restart
from casslab.experiment.search import PeakResult, PeakSearch, Step, resolve_relative, summarize
from casslab.experiment.sequential import Sequencer, ShouldStop, StopDecision
from casslab.experiment.spec import CampaignSpec, StopRule
from casslab.experiment.steadywindow import SteadyCut, steady_window
from casslab.hardware import describe
from casslab.lab import LabOptions
from casslab.load import LoadResult, LoadSpec
from casslab.load.multi import START_MARGIN_S
from casslab.load.options import SchemaOptions, family_of
from casslab.metrics.samples import TrialMetrics
from casslab.net.spec import NetSpec
from casslab.store.db import COMPLETED, INTERRUPTED, RUNNING, Store, stopped_state
from casslab.testbed import Testbed, open_testbed

DEFAULT_KEYSPACE = {"ycsb": "ycsb", "stress": "keyspace1", "iot": "iot"}
MAIN_TABLE = {"ycsb": "usertable", "stress": "standard1"}


class CampaignInterrupted(CasslabError):
    """Ctrl-C or SIGTERM: the lab was taken down, finished trials are kept."""


@dataclass(frozen=True)
class Event:
    """What the runner reports to its caller (the CLI draws a progress bar from it)."""

    kind: str  # plan, lab, prepare, search, trial-start, trial-end, message
    message: str
    done: int = 0
    total: int = 0
    cell: str = ""


@dataclass
class Outcome:
    results: Path
    total: int
    done: int
    skipped: int
    failed: int
    elapsed_s: float
    peaks: dict[str, PeakResult] = field(default_factory=dict)
    # design.until: verdicts: why it stopped (sequential.BY_*), the line saying so, and
    # the rule's last answer
    stopped_by: str = ""
    stop_line: str = ""
    decision: StopDecision | None = None
    last_round: int = 0  # the last round run
    round_s: float = math.nan  # the median time a round of this run took (s)
    # design.guard: runs thrown away for outside noise, and kept trials still over it
    guard_reruns: int = 0
    disturbed: int = 0


def uses_network(spec: CampaignSpec) -> bool:
    lab_net = spec.lab.network not in (None, "none")
    return lab_net or any(f.kind == "network" for f in spec.factors)


def compaction_map(value: str) -> str:
    """A compaction level as the CQL map ALTER TABLE needs (class and every option)."""
    if value.startswith("{"):
        return value
    return compaction.cql_map(compaction.level_options(value))


def timeout_guard(timeout_s: float, clients: int) -> list[str]:
    """The command prefix that ends a trial's load after stop.timeout_s. `timeout` sends
    SIGINT: casslab-load then still prints its summary (interrupted). Several clients wait
    for their shared start first, so each gets that margin on top of the timeout."""
    limit = timeout_s + (START_MARGIN_S if clients > 1 else 0.0)
    return ["timeout", "-s", "INT", "-k", "15", f"{limit:g}"]


MAX_LAB_NAME = 20  # casslab.lab.state.NAME_RE


def kept_lab_names(base: str, trials: list[PlannedTrial], spec: CampaignSpec
                   ) -> dict[str, str]:
    """design.labs: keep: a lab name per lab configuration, in the order the plan first
    builds them: `base`, then `base-2`, `base-3`... (base shortened to fit)."""
    keys = dict.fromkeys(block_key(t.cell.params, spec.factors)[0] for t in trials)
    names = {}
    for i, key in enumerate(keys):
        suffix = f"-{i + 1}" if i else ""
        names[key] = base[:MAX_LAB_NAME - len(suffix)] + suffix
    return names


@dataclass
class KeptLab:
    """design.labs: keep: a lab and what the runner last applied to it."""

    lab: Testbed
    limits: dict[str, float | int] = field(default_factory=dict)
    net: NetSpec | None = None
    # design.labs: keep-data: the cell whose schema and data the lab held when it was
    # paused (None: unknown, e.g. after a failed setup: its data is recreated)
    held: dict[str, Any] | None = None


class CampaignRunner:
    """Runs one spec into one results directory (see module docstring)."""

    def __init__(self, spec: CampaignSpec, results: Path, *, home: Path, cache: Path,
                 lab_name: str | None = None,
                 on_event: Callable[[Event], None] | None = None,
                 beside: Beside | None = None,
                 should_stop: ShouldStop | None = None,
                 steady: SteadyCut | None = None) -> None:
        """beside: what runs beside each trial's load (the tuner of factor `tuner`,
        supplied by a layer that may import casslab.tune); a spec with a tuner level
        other than off needs it. should_stop: the stopping rule of `design.until:
        verdicts` (casslab.experiment.sequential; built from casslab.analysis by the
        caller), which such a spec needs. steady: the steady-state classifier of
        `workload.warmup: until-steady` (casslab.experiment.steadywindow), likewise."""
        self.spec = spec
        self.beside = beside
        self.should_stop = should_stop
        self.steady = steady
        self.results = results
        # The spec's inventory is set exactly when its backend is hosts.
        inventory = Path(spec.lab.inventory) if spec.lab.inventory is not None else None
        self._open: Callable[[str], Testbed] = functools.partial(
            open_testbed, home=home, cache=cache, inventory=inventory)
        self.lab: Testbed = self._open(lab_name or f"exp-{spec.digest[:10]}")
        # design.labs: keep: a lab per lab configuration, named in plan order (the first
        # has the campaign's lab name; set by run), the ones not in use paused
        self._lab_names: dict[str, str] = {}
        self._kept: dict[str, KeptLab] = {}
        self._lab_key: str | None = None  # the configuration self.lab has
        self.emit = on_event or (lambda _e: None)
        self.recovery = Recovery(self.lab, timeout_s=spec.lab.timeout_s,
                                 max_restarts=spec.lab.max_restarts)
        self.peaks: dict[str, PeakResult] = {}
        self._current: dict[str, Any] | None = None  # params the lab is set up for
        self._net: NetSpec | None = None  # link conditions applied now
        self._limits: dict[str, float | int] = {}  # live profile fields applied now
        self._prepared = False
        self._guard_counts = [0, 0]  # design.guard: reruns, kept trials still disturbed

    # ---- entry point ------------------------------------------------------------------

    def run(self) -> Outcome:
        """Run every trial not yet done. Raises CampaignInterrupted, StoreError (another
        spec's results) and lab errors (after taking the lab down)."""
        t0 = time.monotonic()
        trials = plan(self.spec)
        if self.spec.design.keep_labs:
            self._lab_names = kept_lab_names(self.lab.name, trials, self.spec)
        self._check_beside()
        sequencer = self._sequencer()
        # Given the digest, a directory of another campaign is refused before anything
        # in it is written (an older database is not migrated first).
        store = Store(self.results, campaign=self.spec.digest)
        try:
            if store.migration is not None:
                self.emit(Event("message", store.migration.note, 0, 0))
            cid, resumed = store.open_campaign(
                name=self.spec.name, digest=self.spec.digest, spec_yaml=self.spec.text,
                response=", ".join(self.spec.responses),
                factors=[{"name": f.name, "kind": f.kind, "label": f.label,
                          "levels": list(f.levels)} for f in self.spec.factors])
            (self.results / "spec.yaml").write_text(self.spec.text)
            if self.spec.lab.inventory is not None:  # which hosts ran it, kept beside it
                (self.results / "inventory.yaml").write_text(
                    Path(self.spec.lab.inventory).read_text())
            status = store.ensure_plan(cid, [(t.seq, t.cell.index, t.cell.key, t.cell.params,
                                              t.trial_no, t.warmup, t.reset) for t in trials])
            if self.spec.design.interleaved:
                store.set_rounds(cid, {t.seq: t.round for t in trials})
            pending = [t for t in trials if status[t.seq][1] != "done"]
            skipped = len(trials) - len(pending)
            self.emit(Event("plan", f"{len(trials)} trials in {len({t.cell.index for t in trials})}"
                            f" cells; {skipped} already done" + (" (resumed)" if resumed else ""),
                            skipped, len(trials)))
            done, failed = skipped, 0
            store.set_run_state(RUNNING)
            with self._signals():
                try:
                    for t in sequencer.trials(pending) if sequencer else pending:
                        ok = self._recovering(store, cid, status[t.seq][0], t, done,
                                              len(trials))
                        done += ok
                        failed += not ok
                except KeyboardInterrupt:
                    store.set_run_state(INTERRUPTED)
                    self.emit(Event("message", "interrupted: taking the lab down", done,
                                    len(trials)))
                    raise CampaignInterrupted(
                        f"campaign interrupted after {done} of {len(trials)} trials; finished "
                        f"trials are kept in {store.path}; run again to resume") from None
                finally:
                    self._teardown()
            store.set_run_state(stopped_state(sequencer.stopped_by) if sequencer is not None
                                else COMPLETED)
            out = Outcome(self.results, len(trials), done - skipped, skipped, failed,
                          time.monotonic() - t0, dict(self.peaks),
                          guard_reruns=self._guard_counts[0], disturbed=self._guard_counts[1])
            if sequencer is not None:
                out = replace(out, stopped_by=sequencer.stopped_by,
                              stop_line=sequencer.summary(), decision=sequencer.decision,
                              last_round=sequencer.last_round, round_s=sequencer.round_s())
                self.emit(Event("message", out.stop_line, done, len(trials)))
            return out
        finally:
            store.close()

    def _sequencer(self) -> Sequencer | None:
        """The round-by-round schedule of `design.until: verdicts` (None otherwise)."""
        d = self.spec.design
        if d.until != "verdicts":
            return None
        if self.should_stop is None:
            raise UsageError("design.until: verdicts needs the stopping rule, which this "
                             "caller did not supply (run the campaign with `casslab "
                             "experiment run`)")

        def on_round(r: int, decision: StopDecision | None) -> None:
            lines = decision.lines if decision is not None else ()
            for line in lines:
                self.emit(Event("message", f"  {line}"))
            self.emit(Event("round", f"round {r} (min {d.trials}, max {d.trials_max})"))

        return Sequencer(d, self.should_stop, on_round=on_round)

    def _check_beside(self) -> None:
        """Before the first trial: a tuner level is refused when nothing can run it, or
        when the work beside the trial says it cannot."""
        levels = tuner_levels(self.spec)
        if self.spec.workload.warmup is not None and self.steady is None:
            raise UsageError("workload.warmup: until-steady needs the steady-state "
                             "classifier, which this caller did not supply (run the "
                             "campaign with `casslab experiment run`)")
        if levels and self.beside is None:
            raise UsageError(f"factor {TUNER_FACTOR}: level {levels[0]!r} needs the tuner "
                             "beside the trial, which this caller did not supply (run the "
                             "campaign with `casslab experiment run`; valid without it: off)")
        if self.beside is not None:
            self.beside.check(self.spec)

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        """SIGTERM behaves like Ctrl-C (only possible from the main thread)."""
        def on_term(_sig: int, _frame: FrameType | None) -> None:
            raise KeyboardInterrupt

        try:
            old = signal.signal(signal.SIGTERM, on_term)
        except ValueError:  # not the main thread
            yield
            return
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, old)

    def _teardown(self) -> None:
        # A second Ctrl-C must not leave half a lab behind.
        try:
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:
            old = None
        try:
            self._down()
            for name in self._lab_names.values():  # design.labs: keep: the paused ones
                if name != self.lab.name:
                    self.lab = self._open(name)
                    self._down()
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)

    # ---- one trial --------------------------------------------------------------------

    def _recovering(self, store: Store, cid: int, trial_id: int, t: PlannedTrial, done: int,
                    total: int) -> bool:
        """_trial, with the lab's nodes checked before and after it: a dead node is
        restarted (recorded with the trial) and the trial run again (recovery)."""
        def record(r: Restart) -> None:
            store.add_restart(trial_id, node=r.node, cause=r.cause, found=r.found, at=r.at,
                              duration_s=r.duration_s, ok=r.ok, error=r.error)

        def say(message: str) -> None:
            self.emit(Event("message", message, done, total, t.cell.key))

        def void(line: str) -> None:
            store.mark_ended(trial_id, "failed", line)

        def attempt(restarted: bool) -> bool:
            if restarted and not self._warm_after_restart(store, trial_id, t, done, total):
                return False
            return self._trial(store, cid, trial_id, t, done, total)

        return self.recovery.run_trial(attempt, f"{t.cell.key} #{t.trial_no}", record=record,
                                       void=void, say=say)

    def _warm_after_restart(self, store: Store, trial_id: int, t: PlannedTrial, done: int,
                            total: int) -> bool:
        """A kept trial right after a node restart would run on a cold JVM: warm the lab up
        again first, unstored, as after a reset the plan did not put there (not for a cell
        relative to a peak: its levels are resolved inside the trial). False when the
        warm-up failed, and the trial with it."""
        if t.warmup or not self.spec.design.warmup_trials or needs_search(t.cell.params):
            return True
        try:
            self._rewarm(t, self.spec.cell(t.cell.params), "node restart", done, total)
        except CasslabError as exc:
            store.mark_ended(trial_id, "failed", f"warm-up after the node restart: {exc}")
            self.emit(Event("trial-end", f"{t.cell.key} #{t.trial_no}: failed: warm-up after "
                            f"the node restart: {exc}", done, total, t.cell.key))
            return False
        return True

    def _trial(self, store: Store, cid: int, trial_id: int, t: PlannedTrial, done: int,
               total: int) -> bool:
        cell = self.spec.cell(t.cell.params)
        reset = reset_before(t, self._current, self.spec.factors)
        label = f"{t.cell.key} #{t.trial_no}" + (" (warm-up)" if t.warmup else "")
        try:
            reset = self._reset(reset, cell, done, total, keep_data=t.keep_data)
            if cell.relative:
                peak = self._search(store, cid, cell, done, total)
                cell = cell.with_levels({k: resolve_relative(k, v, peak)
                                         for k, v in cell.relative.items()})
            if rewarm_needed(t, reset, self.spec.design.warmup_trials):
                self._rewarm(t, cell, reset, done, total)
        except KeyboardInterrupt:
            raise
        except CasslabError as exc:
            store.mark_running(trial_id, dict(cell.params), reset)
            store.mark_ended(trial_id, "failed", f"setup ({reset}): {exc}")
            self._current = None  # the lab is in an unknown state: rebuild next time
            if self._lab_key is not None:  # design.labs: keep: not this one again
                self._kept.pop(self._lab_key, None)
            self.emit(Event("trial-end", f"{label}: failed: {exc}", done, total, t.cell.key))
            return False
        store.mark_running(trial_id, {**cell.params, "seed": self._seed(t)}, reset)
        self.emit(Event("trial-start", label, done, total, t.cell.key))
        try:
            result, metrics, beside, quality = self._measure_guarded(t, cell, label, done,
                                                                     total)
        except KeyboardInterrupt:
            store.mark_ended(trial_id, "interrupted", "interrupted by the user")
            raise
        except CasslabError as exc:
            store.mark_ended(trial_id, "failed", str(exc))
            self.emit(Event("trial-end", f"{label}: failed: {exc}", done, total, t.cell.key))
            return False
        intervals = result.intervals
        warmup = self.spec.workload.warmup
        if warmup is not None and self.steady is not None:
            window = steady_window(intervals, self.steady, warmup.max_s)
            intervals = window.intervals
            quality |= {"steady_start_s": window.start_s, "steady_class": window.klass}
        s = result.summary
        ok = s.ended_by == "completed"
        error = None if ok else f"load ended by {s.ended_by} (stop.timeout_s or cluster lost)"
        if metrics.errors and ok:
            error = "; ".join(metrics.errors[:3])
        if beside.error is not None:
            ok, error = False, f"{TUNER_FACTOR}: {beside.error}"
        store.commit_trial(trial_id, summary=s.raw, intervals=intervals,
                           metrics=metrics, command=result.command,
                           status="done" if ok else "failed", error=error,
                           audit=beside.audit)
        store.set_quality(trial_id, **quality)
        if beside.error is not None:
            self.emit(Event("trial-end", f"{label}: failed: {error}", done, total,
                            t.cell.key))
            return False
        self.emit(Event("trial-end", f"{label}: {s.ops:,} ops in {s.elapsed_s:.2f} s "
                        f"({s.ops_s:,.0f} ops/s)", done + ok, total, t.cell.key))
        return ok

    def _measure_guarded(self, t: PlannedTrial, cell: Cell, label: str,
                         done: int, total: int
                         ) -> tuple[LoadResult, TrialMetrics, BesideResult, dict[str, Any]]:
        """The trial's run with the machine's outside CPU and steal time around it; a
        kept trial over design.guard is thrown away and run again, at most guard.reruns
        times (the last run is kept, flagged `disturbed` when still over)."""
        guard = self.spec.design.guard
        reruns = 0
        while True:
            before = outside.snapshot(self.lab.cpu_seconds())
            result, metrics, beside = self._measure(cell, self.spec.stop, self._seed(t),
                                                    label=label)
            noise = outside.between(before, outside.snapshot(self.lab.cpu_seconds()))
            over = guard is not None and not t.warmup and \
                outside.over_guard(noise, guard.max_outside_cpu_pct)
            if not over or guard is None or reruns >= guard.reruns:
                break
            reruns += 1
            self.emit(Event("message", f"{label}: the machine used {noise.outside_cpu_pct:.0f} "
                            f"% CPU outside the lab (design.guard: at most "
                            f"{guard.max_outside_cpu_pct:g} %): running it again ({reruns}/"
                            f"{guard.reruns})", done, total, t.cell.key))
        self._guard_counts[0] += reruns
        self._guard_counts[1] += over
        quality = {"outside_cpu_pct": noise.outside_cpu_pct, "steal_pct": noise.steal_pct,
                   "guard_reruns": reruns, "disturbed": over}
        return result, metrics, beside, quality

    def _rewarm(self, t: PlannedTrial, cell: Cell, reset: str, done: int,
                total: int) -> None:
        """Warm the lab up again before a kept trial that a resume or a failure left
        right after a reset: the block's stored warm-ups ran on a lab that is gone.
        These runs are not stored (the stored warm-ups stay as they ran)."""
        n = self.spec.design.warmup_trials
        for i in range(n):
            self.emit(Event("message", f"{t.cell.key}: warm-up {i + 1}/{n} again, not stored "
                            f"(lab {reset} before a kept trial)", done, total, t.cell.key))
            self._measure(cell, self.spec.stop, self._seed(t))

    def _seed(self, t: PlannedTrial) -> int:
        return self.spec.design.seed * 1000 + t.trial_no

    # ---- lab and data -----------------------------------------------------------------

    def _reset(self, reset: str, cell: Cell, done: int, total: int, *,
               keep_data: bool = False) -> str:
        """Bring the lab to `cell` by `reset`; returns the reset done (a change of CPU or
        disk limits becomes a rebuild when the lab cannot make it live; a kept lab
        resumed with its data, `keep_data`, is "none")."""
        live = dict(cell.limits)
        if reset != "rebuild" and live != self._limits:
            self.emit(Event("lab", f"profile limits: {describe('live', live)}", done, total))
            if self.lab.update_limits(live):
                self._limits = live
            else:
                self.emit(Event("message", "the lab cannot change its limits live: rebuilding",
                                done, total))
                reset = "rebuild"
        if reset == "rebuild":
            if self.spec.design.keep_labs:
                reset = self._switch(cell, done, total, keep_data=keep_data)
            else:
                self._down()
                self._build(cell, done, total)
            self._prepared = reset == "none"
        elif reset == "truncate":
            self._truncate(cell)
            self._prepared = False
        elif reset == "recreate":
            self._prepared = False
        if not self._prepared:
            self._prepare(cell, drop=reset in ("recreate", "rebuild") or self._current is None,
                          done=done, total=total)
        self._current = dict(cell.params)
        if uses_network(self.spec):
            want = cell.net
            if want != self._net:
                self.emit(Event("lab", f"network: {net_text(want)}", done, total))
                self.lab.set_links(want)
                self._net = want
        return reset

    def _switch(self, cell: Cell, done: int, total: int, *, keep_data: bool = False) -> str:
        """design.labs: keep: make the lab of `cell`'s configuration the one in use:
        pause the one in use, then resume the kept lab (returns "recreate": its keyspace
        is made again; "none" with `keep_data` when it holds `cell`'s schema and data) or
        build it (returns "rebuild")."""
        key = block_key(dict(cell.params), self.spec.factors)[0]
        if self._lab_key not in (None, key) and self.lab.exists():
            if self._lab_key in self._kept:
                held = self._current if self._prepared else None
                self._kept[self._lab_key] = KeptLab(self.lab, self._limits, self._net, held)
                self.emit(Event("lab", f"pausing lab {self.lab.name}", done, total))
                self.lab.pause()
            else:  # its setup failed (_trial): not kept, built again when it comes back
                self._down()
        kept = self._kept.get(key)
        if kept is not None and kept.lab.exists():
            self._use(key, kept)
            self.emit(Event("lab", f"resuming lab {self.lab.name} (kept warm)", done, total))
            self.lab.resume()
            self._current = None
            live = dict(cell.limits)
            if live == self._limits or self.lab.update_limits(live):
                self._limits = live
                if keep_data and holds_schema(kept.held, dict(cell.params), self.spec.factors):
                    self.emit(Event("lab", f"lab {self.lab.name}: its data kept "
                                    "(design.labs: keep-data)", done, total))
                    self._current = kept.held
                    return "none"
                return "recreate"
        else:
            name = self._lab_names[key]
            lab = self.lab if self.lab.name == name else self._open(name)
            self._use(key, KeptLab(lab))
        self._down()  # what a killed run left under this name
        self._build(cell, done, total)
        self._kept[key] = KeptLab(self.lab, self._limits, self._net)
        return "rebuild"

    def _use(self, key: str, kept: KeptLab) -> None:
        self.lab, self._lab_key = kept.lab, key
        self._limits, self._net = dict(kept.limits), kept.net
        self.recovery.lab = kept.lab

    def _build(self, cell: Cell, done: int, total: int) -> None:
        lab = cell.lab
        self.emit(Event("lab", f"building lab {self.lab.name}: {lab.nodes} x "
                        f"{describe(lab.profile, dict(lab.fields))} ({lab.runtime})", done,
                        total))
        self._current = None
        self.lab.up(LabOptions(
            nodes=lab.nodes, profile=lab.profile,
            overrides=[f"{k}={v}" for k, v in lab.overrides.items()],
            timeout_s=self.spec.lab.timeout_s, runtime=lab.runtime,
            profile_fields=dict(lab.fields), node_profiles=dict(lab.node_profiles)))
        self._limits = dict(cell.limits)

    def _down(self) -> None:
        """Clear network emulation (its daemon lives outside the lab's processes), then
        take the lab down and wipe it."""
        if not self.lab.exists():
            return
        self.emit(Event("lab", f"taking lab {self.lab.name} down"))
        try:
            self.lab.down()
        finally:
            self._net = None

    def _prepare(self, cell: Cell, *, drop: bool, done: int, total: int) -> None:
        workload = cell.workload
        if self.spec.workload.prepare:
            self._load(cell, drop=drop, done=done, total=total)
        elif drop:
            with self.lab.cql() as cql:
                ks = self._keyspace(cell)
                cql.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout_s=60.0)
        comp = cell.compaction
        if comp is not None and family_of(workload) != "iot":
            fam = family_of(workload)
            if fam not in MAIN_TABLE:
                raise UsageError(f"factor compaction: not supported for workload {workload}")
            if not self.spec.workload.prepare:
                raise UsageError("factor compaction needs workload.prepare: true (the table "
                                 "must exist before ALTER TABLE)")
            with self.lab.cql() as cql:
                cql.execute(f"ALTER TABLE {self._keyspace(cell)}.{MAIN_TABLE[fam]} WITH "
                            f"compaction = {compaction_map(comp)}", timeout_s=60.0)
        if self._alter_tables(cell) and drop and tableopts.needs_reload(cell.tables):
            # Freshly created tables got their data before the ALTER: load it again so
            # the SSTables carry the cell's options (tableopts' module docstring says why
            # a reload rather than `nodetool upgradesstables -a`).
            self._truncate(cell)
            self._load(cell, drop=False, done=done, total=total)
        self._prepared = True

    def _load(self, cell: Cell, *, drop: bool, done: int, total: int) -> None:
        """The workload's load phase (creates its schema and data)."""
        workload = cell.workload
        load_opts = load_phase_options(self.spec, cell)
        if isinstance(load_opts, SchemaOptions):  # a user profile has no --drop
            load_opts = replace(load_opts, drop=drop)
        self.emit(Event("prepare", f"loading the data of {workload}", done, total))
        result = self._load_run(LoadSpec(workload, load_opts), guard=[])
        if result.summary.ended_by != "completed" or result.summary.errors:
            raise CasslabError(f"prepare ({workload} load phase) ended by "
                               f"{result.summary.ended_by} with {result.summary.errors} "
                               "errors")

    def _alter_tables(self, cell: Cell) -> bool:
        """Apply the cell's table options with ALTER TABLE; False when it has none."""
        if not cell.tables:
            return False
        ks = self._keyspace(cell)
        with self.lab.cql() as cql:
            tables = catalog.table_names(cql, ks)
            for stmt in tableopts.alter_statements(cell.tables, ks, tables):
                cql.execute(stmt, timeout_s=60.0)
        return True

    def _truncate(self, cell: Cell) -> None:
        ks = self._keyspace(cell)
        with self.lab.cql() as cql:
            for table in catalog.table_names(cql, ks):
                cql.execute(f"TRUNCATE {ks}.{table}", consistency="ALL", timeout_s=60.0)

    def _keyspace(self, cell: Cell) -> str:
        opts = cell.load_options()
        workload = cell.workload
        ks = getattr(opts, "keyspace", None) or DEFAULT_KEYSPACE.get(family_of(workload))
        if not ks and family_of(workload) == "user":  # a profile names its own keyspace
            ks = tableopts.profile_value(workload, "keyspace")
        if not ks:
            raise UsageError(f"workload {workload}: set workload.options.keyspace so the "
                             "runner knows what to truncate or drop")
        return str(ks)

    # ---- measuring --------------------------------------------------------------------

    def _measure(self, cell: Cell, stop: StopRule, seed: int, *,
                 label: str | None = None
                 ) -> tuple[LoadResult, TrialMetrics, BesideResult]:
        """One load run with the sampler (and, for a trial's `label`, the work beside the
        trial: a peak search's runs have none)."""
        workload = cell.workload
        opts = replace(cell.load_options(), phase="run", seed=seed, ops=stop.ops,
                       duration_s=stop.duration_s or None)
        sampler = self.lab.sampler(self.spec.metrics_interval_s,
                                   self.lab.cql if self.spec.metrics_cql else None)
        guard = timeout_guard(stop.timeout_s, self.spec.workload.clients)
        sampler.start()
        running: Running | None = None
        try:
            running = self._start_beside(cell, label) if label is not None else None
            result = self._load_run(LoadSpec(workload, opts), guard=guard)
        finally:
            beside = running.stop() if running is not None else BesideResult()
            metrics = sampler.stop()
        return result, metrics, beside

    def _load_run(self, spec: LoadSpec, guard: list[str]) -> LoadResult:
        """One run of the load: workload.clients processes where the lab's clients are,
        their histograms merged."""
        return self.lab.load(spec, guard=guard, clients=self.spec.workload.clients,
                             work_dir=self.results / "load-clients")

    def _start_beside(self, cell: Cell, label: str) -> Running | None:
        if self.beside is None:
            return None
        site = TrialSite(params=dict(cell.params), tuner=cell.tuner,
                         keyspace=self._keyspace(cell),
                         hosts=self.lab.addresses(), netns=self.lab.netns(), label=label)
        return self.beside.start(site)

    def _search(self, store: Store, cid: int, cell: Cell, done: int,
                total: int) -> PeakResult:
        assert self.spec.search is not None
        key = search_key(dict(cell.params), self.spec.factors)
        if key in self.peaks:
            return self.peaks[key]
        s = self.spec.search
        search = PeakSearch(s)
        base = {k: v for k, v in cell.params.items() if k not in cell.relative}
        rows = store.search_steps(cid, key)
        for r in rows:
            search.steps.append(Step(r["level"], r["ops_s"], r["p99_ms"]))
            search.stopped_by = r["stopped_by"]
        while (level := search.next_level()) is not None:
            trial = self.spec.cell({**base, s.vary: int(level) if s.vary != RATE else level})
            ops, p99 = [], []
            for i in range(s.trials):
                self.emit(Event("search", f"peak search {key}: {s.vary}={level:g} "
                                f"({i + 1}/{s.trials})", done, total, key))
                result, _, _ = self._measure(trial, s.stop, self.spec.design.seed)
                ops.append(result.summary.ops_s)
                # The p99 of all operations (merged histograms), never the worst type's.
                overall = result.summary.all_ops()
                p99.append(overall.latency.p99_us / 1000 if overall else math.nan)
            search.record(level, ops, p99)
            step = search.steps[-1]
            store.add_search_step(cid, key, len(search.steps), s.vary, level, step.ops_s,
                                  step.p99_ms, s.trials, search.stopped_by)
        peak = summarize(s.vary, search.steps, search.stopped_by or "")
        self.emit(Event("search", f"peak {key}: {peak.peak_ops_s:,.0f} ops/s at {s.vary}="
                        f"{peak.peak_level:g}; knee at {peak.knee_level:g} ({peak.stopped_by})",
                        done, total, key))
        self.peaks[key] = peak
        return peak
