"""Several responses of one campaign on a real lab: a 2-factor campaign analyses
read.mean_ms, update.mean_ms, node_cpu_pct and disk_write_kib_s; the resource values are
checked against /proc readings this test takes itself every 50 ms during every trial,
turned into rates over the lab's own 1 s sample spans (the instrument is what is
checked, not the sampling interval)."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from casslab.analysis.responses import trial_values, window_mean
from casslab.core.paths import default_cache, default_home
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import parse_spec
from casslab.report.html import build_report
from casslab.store.records import Results
from casslab.testbed import open_lab

from labtools import leftovers

LAB = "itresp"
RESPONSES = ["read.mean_ms", "update.mean_ms", "node_cpu_pct", "disk_write_kib_s"]
# A fixed rate makes every trial last ~5 s after a 1,000-operation warm-up stage, so the
# window the responses are computed over is long against the 1 s sampling interval.
SPEC = f"""
name: it-responses
lab: {{nodes: 1, profile: container}}
workload: {{name: ycsb-a, records: 1000, options: {{rate: 1000, warmup: 1000}}}}
factors:
  - {{name: in_flight, levels: [1, 4]}}
  - {{name: cl_read, levels: [ONE, LOCAL_ONE]}}
design: {{trials: 1, warmup_trials: 0, randomize: false}}
stop: {{ops: 5000, timeout_s: 120}}
metrics: {{interval_s: 1.0}}
analysis: {{responses: [{", ".join(RESPONSES)}]}}
"""

pytestmark = pytest.mark.integration

CLK_TCK = float(os.sysconf("SC_CLK_TCK"))


@dataclass
class ProcPoller:
    """Reads the node JVM's /proc/<pid>/stat and /proc/<pid>/io every 50 ms, on this
    test's own clock, between a trial's start and end events."""

    pid: int = 0
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # t, cpu s, bytes
    trial_start: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)

    def read(self) -> tuple[float, float, int]:
        stat = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        io = dict(line.split(": ") for line in Path(f"/proc/{self.pid}/io").read_text()
                  .splitlines())
        return (time.monotonic(), (int(stat[11]) + int(stat[12])) / CLK_TCK,
                int(io["write_bytes"]))

    def run(self) -> None:
        while not self._stop.wait(0.05):
            self.samples.append(self.read())

    @contextmanager
    def polling(self) -> Iterator[None]:
        self.samples, self._stop = [self.read()], threading.Event()
        self.trial_start = self.samples[0][0]
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join()

    def at(self, t: float) -> tuple[float, float]:
        """CPU seconds and bytes written at time t (s since the trial started), linear
        between the two readings around it."""
        t_abs = self.trial_start + t
        prev = self.samples[0]
        for cur in self.samples[1:]:
            if cur[0] >= t_abs:
                f = (t_abs - prev[0]) / max(cur[0] - prev[0], 1e-9)
                return (prev[1] + f * (cur[1] - prev[1]), prev[2] + f * (cur[2] - prev[2]))
            prev = cur
        return prev[1], float(prev[2])

    def window_rates(self, ends: list[float], window: tuple[float, float]
                     ) -> tuple[float, float]:
        """CPU % and KiB/s written over `window`, at the lab's resolution: one rate per
        span between the lab's own sample times `ends` (s since the trial started),
        weighted by its overlap with the window, as casslab's window_mean does. Disk
        writes come in bursts (a flush); at the window's raw edges a burst inside the
        lab's first or last 1 s span would count in one reading and not the other."""
        cpu, write = [], []
        prev = 0.0
        for end in ends:
            (c0, w0), (c1, w1) = self.at(prev), self.at(end)
            if end > prev:
                cpu.append((end, 100 * (c1 - c0) / (end - prev)))
                write.append((end, (w1 - w0) / 1024 / (end - prev)))
            prev = end
        return window_mean(cpu, window), window_mean(write, window)


def test_several_responses_match_proc(tmp_path: Path) -> None:
    spec = parse_spec(SPEC, source="it-responses")
    assert spec.responses == tuple(RESPONSES)
    results = tmp_path / "results"
    lab = open_lab(LAB, home=default_home(), cache=default_cache())
    poller = ProcPoller()
    windows: dict[str, ProcPoller] = {}
    active: list[Iterator[None]] = []

    def on_event(e: Event) -> None:
        # trial-start comes right before the sampler starts; trial-end after the commit.
        if e.kind == "trial-start":
            [node] = lab.state().nodes
            poller.pid = node.pid
            assert Path(f"/proc/{node.pid}/comm").read_text().strip() == "java"
            cm = poller.polling()
            cm.__enter__()
            active.append(cm)
        elif e.kind == "trial-end" and active:
            active.pop().__exit__(None, None, None)
            windows[e.cell or ""] = ProcPoller(poller.pid, list(poller.samples),
                                               poller.trial_start)

    try:
        outcome = CampaignRunner(spec, results, home=default_home(), cache=default_cache(),
                                 lab_name=LAB, on_event=on_event).run()
    finally:
        assert not leftovers(LAB)
    assert (outcome.done, outcome.failed) == (4, 0)

    store, repo = Results.open(results)
    with store:
        camp = repo.campaign()
        assert camp is not None and camp.responses == RESPONSES
        kept = repo.kept_trials()
        ids = [t.trial_id for t in kept]
        values = {name: trial_values(repo, name, ids) for name in RESPONSES}
        for t in kept:
            ops = {o.op: o for o in repo.op_summaries(t.trial_id)}
            assert values["read.mean_ms"][t.trial_id] == ops["read"].mean_ms > 0
            assert values["update.mean_ms"][t.trial_id] == ops["update"].mean_ms > 0
            window = repo.recorded_window(t.trial_id)
            assert window is not None and window[0] > 0.5, "the warm-up stage is excluded"
            proc = windows[t.cell]
            ends = [m.t_s for m in repo.node_metrics(t.trial_id)]
            cpu_pct, write_kib_s = proc.window_rates(ends, window)
            got_cpu = values["node_cpu_pct"][t.trial_id]
            got_write = values["disk_write_kib_s"][t.trial_id]
            assert got_cpu > 0 and got_write > 0, (t.cell, got_cpu, got_write)
            assert math.isclose(got_cpu, cpu_pct, rel_tol=0.10), (t.cell, got_cpu, cpu_pct)
            assert math.isclose(got_write, write_kib_s, rel_tol=0.10), \
                (t.cell, got_write, write_kib_s)
            print(f"{t.cell}: node_cpu_pct {got_cpu:.1f} vs /proc {cpu_pct:.1f}; "
                  f"disk_write_kib_s {got_write:.1f} vs /proc {write_kib_s:.1f}")
        # Sampled over CQL in every trial (0 here: 1,000 records never fill a memtable).
        done = trial_values(repo, "compactions_completed.sum", ids)
        assert all(v >= 0 for v in done.values()), done

    rep = build_report(results)
    assert [a.response for a in rep.analyses] == RESPONSES
    assert all(len(a.cells) == 4 for a in rep.analyses)
    page = rep.path.read_text()
    for i, name in enumerate(RESPONSES, 1):
        assert f"id='response-{i}'" in page and f"How it is computed: {name}:" in page
    slugs = ["read-mean_ms", "update-mean_ms", "node_cpu_pct", "disk_write_kib_s"]
    assert [f.id for f in rep.figures if f.id.startswith("box-in_flight")] == \
        [f"box-in_flight-{s}" for s in slugs]
