"""`casslab stress`: a cassandra-stress command line, run by casslab-load."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from casslab.cassandra.cql import NATIVE_PORT, parse_contact_points
from casslab.cli.common import errors_to_exit
from casslab.cli.run import FORMATS, load_targets, print_summary
from casslab.core.errors import UsageError
from casslab.load import LoadSpec, run_load
from casslab.load import csformat as cs
from casslab.load.stresscli import StressRun, translate

STRESS_FORMATS = (*FORMATS, "cassandra-stress")
# c-s pauses between thread-count steps of a command that writes (StressAction.runMulti).
STEP_PAUSE_S = 15.0


def stress(
    ctx: typer.Context,
    # Long options only: a short one would swallow cassandra-stress's `-node`, `-rate`...
    name: Annotated[str | None, typer.Option("--name", help="Lab to run against (default: "
                                             "the lab 'default'; with -node, the lab whose "
                                             "namespace reaches those hosts).")] = None,
    output_format: Annotated[str, typer.Option("--format", help="table, json, ycsb (as "
                                               "casslab run) or cassandra-stress (its "
                                               "interval rows and Results block).")]
    = "table",
    out_file: Annotated[Path | None, typer.Option("--out", help="Save the JSON lines here.")]
    = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the casslab-load command "
                                          "and stop.")] = False,
) -> None:
    """Run a cassandra-stress command line (write, read, mixed, user) with casslab-load.

    Supported: n=, duration=, err< n> n<, cl=, no-warmup, truncate=never, ratio(...),
    profile= ops(...); -rate threads=N [fixed=|throttle=N/s], threads>=N threads<=M auto;
    -pop seq= dist=uniform(..)|gaussian(..); -col n=DIST size=DIST (fixed, uniform,
    gaussian; drawn per key);
    -schema replication(factor=N|strategy=NetworkTopologyStrategy,DC=N)
    compaction(strategy=...) keyspace=; -mode native cql3 prepared user= password=;
    -node HOSTS; -port native=; -errors ignore retries=N; -log file= hdrfile= interval=;
    -insert batchtype= (user); -graph file= title= revision=. Others are refused.
    -log file= gets cassandra-stress's text whatever --format prints.

    cassandra-stress's defaults: 200 threads for write with n=, otherwise thread counts
    stepped from 4 to 1000 until throughput stops improving (a summary per step);
    mixed ratio(write=1,read=1); each operation tried 10 times (retries=9), and the run
    fails at the first operation that still fails unless -errors ignore; a warm-up of a
    quarter of n= (at most 50000) per node and operation type unless no-warmup.

    Example: casslab stress write n=100000 cl=ONE -rate threads=50 -pop seq=1..100000

    Example: casslab stress --name edge mixed 'ratio(write=1,read=3)' duration=60s -rate threads=16

    Example: casslab stress user profile=crates/load/profiles/sensor-readings.yaml \
'ops(insert=1,latest=3)' n=10000 -node 10.0.0.5

    Example: casslab stress read n=10000 -rate threads=8 fixed=500/s -log hdrfile=r.hdr

    Example: casslab stress write n=10000 -rate threads=16 -log file=w.log --format cassandra-stress
    """
    with errors_to_exit():
        if output_format not in STRESS_FORMATS:
            raise UsageError(f"--format {output_format}: valid: {', '.join(STRESS_FORMATS)}")
        run = translate(list(ctx.args))
        spec = LoadSpec.of(run.workload, run.options, where="")
        port = run.port or NATIVE_PORT
        nodes = ([f"{h}:{run.port or p}" for h, p in parse_contact_points(",".join(run.nodes))]
                 if run.nodes else [])
        if dry_run:
            from casslab.load.runner import build_command

            shown = nodes or [f"<nodes of lab {name or 'default'}>"]
            first = _step_spec(spec, run, _thread_counts(run)[0], run.warmup_ops(len(shown)))
            typer.echo(shlex.join(build_command(first, shown, "casslab-load", "json")))
            if run.steps is not None:
                typer.echo(f"# then threads {' '.join(map(str, _thread_counts(run)[1:]))}"
                           f"{' while throughput improves' if run.steps.auto else ''}")
            return
        if nodes:
            targets, prefix = nodes, (load_targets(name, None)[1] if name is not None else [])
        else:
            targets, prefix = load_targets(name or "default", None)
            targets = [f"{t.rsplit(':', 1)[0]}:{port}" for t in targets]
        log = Path(run.log_file).open("w") if run.log_file else None  # noqa: SIM115
    try:
        with errors_to_exit():
            ok = StressSession(run, spec, targets, prefix, out_file, output_format,
                               _Text(log, output_format == "cassandra-stress")).run()
    finally:
        if log:
            log.close()
    if not ok:
        raise typer.Exit(1)


@dataclass
class _Text:
    """c-s's output: on stdout with --format cassandra-stress, and in the -log file= in
    any format (c-s's MultiResultLogger writes both)."""

    log: IO[str] | None
    stdout: bool

    def __call__(self, line: str) -> None:
        if self.stdout:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        if self.log:
            self.log.write(line + "\n")
            self.log.flush()


def _thread_counts(run: StressRun) -> list[int]:
    if run.steps is None:
        return [int(run.options.get("threads") or 0)]
    return list(cs.thread_steps(run.steps.min_threads, run.steps.max_threads))


def _step_spec(spec: LoadSpec, run: StressRun, threads: int, warmup: int) -> LoadSpec:
    options = spec.options
    if threads:
        options = replace(options, threads=threads)
    if warmup:
        from casslab.load.options import Warmup

        options = replace(options, warmup=Warmup(ops=warmup))
    return replace(spec, options=options)


def _length(run: StressRun) -> str:
    """c-s's `Running WRITE with 200 threads ...` ending."""
    if "duration" in run.options:
        n, unit = run.options["duration"][:-1], run.options["duration"][-1]
        return f"{n} {dict(s='seconds', m='minutes', h='hours')[unit]}"
    if "ops" in run.options:
        return f"for {run.options['ops']} iteration"
    return f"until stderr of mean < {run.options.get('converge', 0.02)}"


@dataclass
class StressSession:
    """One cassandra-stress command: its steps (one, or thread counts stepped up), each
    a casslab-load run printed in the chosen format. run() is False when it failed."""

    run_: StressRun
    spec: LoadSpec
    targets: list[str]
    prefix: list[str]
    out_file: Path | None
    output_format: str
    text: Callable[[str], None]
    steps: list[cs.Step] = field(default_factory=list)
    graph_rows: list[tuple[str, list[dict[str, float]]]] = field(default_factory=list)

    @property
    def cs_text(self) -> bool:
        return self.output_format == "cassandra-stress"

    def say(self, line: str) -> None:
        """A c-s line (on stdout in its format, in the -log file in any)."""
        self.text(line)

    def run(self) -> bool:
        r = self.run_
        desc = self._desc()
        stepping = r.steps is not None
        if stepping:
            self.say("Thread count was not specified")
        threads_list = _thread_counts(r)
        warmup = r.warmup_ops(len(self.targets))
        if warmup:
            self.say(f"Warming up {desc} with {warmup} iterations...")
        for i, threads in enumerate(threads_list):
            if stepping:
                self.say("")
                self.say(f"Running with {threads} threadCount")
            spec = _step_spec(self.spec, r, threads if stepping else 0, warmup if i == 0 else 0)
            self.say(f"Running {desc} with {threads} threads {_length(r)}")
            if not self._one_step(spec, threads):
                self.say("FAILURE")
                return False
            rates = [s.op_rate() for s in self.steps]
            if len(rates) > 1:
                self.say(f"Improvement over {threads_list[i - 1]} threadCount: "
                         f"{100 * cs.average_improvement(rates, 1):.0f}%")
            if i + 1 == len(threads_list):
                break
            if r.command != "read":  # c-s: commands that update pause to let flushes pass
                self.say(f"Sleeping for {STEP_PAUSE_S:.0f}s")
                time.sleep(STEP_PAUSE_S)
            target = -1.0 if "converge" not in r.options else float(r.options["converge"])
            if r.steps is not None and not cs.keep_stepping(rates, r.steps.auto, target):
                break
        if stepping:
            for line in cs.steps_table(self.steps, self._predefined(), r.fixed):
                self.text(line)
        self.say("END")
        self._write_graph()
        return True

    def _predefined(self) -> bool:
        return self.run_.command != "user"

    def _desc(self) -> str:
        r = self.run_
        if r.command == "user":
            return str(r.options.get("mix", "insert=1"))
        if r.command == "mixed":
            return "[" + ", ".join(cs.op_name(p.split("=")[0], True)
                                   for p in str(r.options["mix"]).split(",")) + "]"
        return r.command.upper()

    def _one_step(self, spec: LoadSpec, threads: int) -> bool:
        r = self.run_
        printer = cs.IntervalPrinter(self._predefined(), r.fixed)
        rows: list[dict[str, float]] = []
        failed: list[dict[str, Any]] = []
        self.say(cs.header())

        def on_interval(obj: dict[str, Any]) -> None:
            if failed:  # c-s prints nothing after the failed operation
                return
            for line in printer.lines(obj):
                self.say(line)
            if obj.get("recorded", True) and printer.start_s is not None:
                rows.append(_graph_row(obj, printer.start_s, r.fixed))

        def stop(obj: dict[str, Any]) -> bool:
            if r.ignore_errors or not int(obj.get("errors", 0)):
                return False
            failed.append(obj)
            return True

        def on_text(line: str) -> None:
            sys.stdout.write(line)
            sys.stdout.flush()

        env = ({"CASSLAB_USER": r.credentials[0], "CASSLAB_PASSWORD": r.credentials[1]}
               if r.credentials else None)
        text_format = "ycsb" if self.output_format == "ycsb" else "json"
        passthrough = self.output_format in ("json", "ycsb")
        result = run_load(spec, hosts=self.targets, prefix=self.prefix, on_interval=on_interval,
                          raw_out=self._raw_out(), text_format=text_format,
                          on_text=on_text if passthrough else None, env=env, stop_when=stop)
        summary = result.summary
        if failed:
            self.say(_failure_line(failed[0], int(r.options.get("error-retries", 0)) + 1))
            if not self.cs_text:
                sys.stderr.write(f"error: {_failure_line(failed[0], 1)}\n")
            return False
        if self.output_format == "table":
            print_summary(summary)
        for line in cs.results_block(summary.raw, self._predefined(), r.fixed):
            self.say(line)
        self.steps.append(cs.Step(threads, summary.raw, printer.uncertainty.value()))
        self.graph_rows.append((f"{threads} threadCount", rows))
        return summary.ended_by == "completed"

    def _raw_out(self) -> Path | None:
        # Each step's JSON lines: the file itself for one step, FILE.<n> after the first.
        if self.out_file is None or not self.steps:
            return self.out_file
        return self.out_file.with_name(f"{self.out_file.name}.{len(self.steps) + 1}")

    def _write_graph(self) -> None:
        g = self.run_.graph
        if g is None:
            return
        from casslab.load import csgraph

        command = "casslab stress " + shlex.join(sys.argv[2:]) if len(sys.argv) > 2 else ""
        base = g.revision or time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        revisions = [csgraph.revision(base if len(self.graph_rows) == 1 else f"{base} {name}",
                                      command, rows) for name, rows in self.graph_rows]
        csgraph.write(Path(g.file), g.title or f"cassandra-stress - {self._desc()}", revisions)


def _graph_row(obj: dict[str, Any], start_s: float, fixed: bool) -> dict[str, float]:
    fig = cs.Figures.of(obj.get("all"), float(obj["interval_s"]), fixed)
    return {"time": round(float(obj["t_s"]) - start_s, 3), "op/s": fig.rate(fig.ops),
            "med": fig.p50_ms, ".95": fig.p95_ms, ".99": fig.p99_ms, "max": fig.max_ms}


def _failure_line(interval: dict[str, Any], tries: int) -> str:
    """c-s's message for the operation that failed all its tries (its key unknown here)."""
    first = next((e for o in interval.get("by_op", {}).values()
                  for e in o.get("first_errors", [])), "an error")
    return (f"Operation x{tries} failed: {first} "
            f"({json.dumps(interval.get('errors', 0))} failed in the interval; "
            "-errors ignore carries on)")
