"""`casslab run`: one benchmark with casslab-load against a lab or any cluster."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from casslab.cassandra.cql import NATIVE_PORT, parse_contact_points
from casslab.cli.common import err, errors_to_exit, open_lab, out
from casslab.core.errors import UsageError
from casslab.core.units import parse_duration_s
from casslab.load import LoadSpec, RunSummary, run_load
from casslab.load.runner import WORKLOADS

FORMATS = ("table", "json", "ycsb")
YCSB_THREADS = 1  # YCSB Client: props.getProperty("threadcount", "1")


def run(
    ctx: typer.Context,
    workload: Annotated[str, typer.Argument(help=f"{', '.join(WORKLOADS)}, ycsb (with -P "
                                            "workload files), or a cassandra-stress user "
                                            "profile .yaml.")],
    name: Annotated[str, typer.Option("--name", "-n", help="Lab to run against.")] = "default",
    hosts: Annotated[str | None, typer.Option(help="Contact points host[:port],... of any "
                                              "cluster instead of a lab.")] = None,
    phase: Annotated[str, typer.Option(help="load, run or both.")] = "run",
    records: Annotated[int | None, typer.Option(help="Records / population size.")] = None,
    ops: Annotated[int | None, typer.Option(help="Stop after this many operations.")] = None,
    duration: Annotated[str | None, typer.Option(help="Stop after this long, e.g. 60s.")]
    = None,
    warmup: Annotated[str | None, typer.Option(help="Unrecorded warm-up: 10s or 5000 ops.")]
    = None,
    rate: Annotated[float | None, typer.Option(help="Fixed target rate (ops/s); latency from "
                                               "each op's intended start.")] = None,
    threads: Annotated[int | None, typer.Option(help="Closed-loop clients of one request "
                                                "each (YCSB -threads, cassandra-stress "
                                                "-rate threads=N); instead of --workers x "
                                                "--in-flight.")] = None,
    workers: Annotated[int | None, typer.Option(help="Concurrent workers.")] = None,
    in_flight: Annotated[int | None, typer.Option(help="Requests in flight per worker.")]
    = None,
    cl_read: Annotated[str | None, typer.Option(help="Read consistency level.")] = None,
    cl_write: Annotated[str | None, typer.Option(help="Write consistency level.")] = None,
    rf: Annotated[int | None, typer.Option(help="Replication factor of a created keyspace.")]
    = None,
    seed: Annotated[int | None, typer.Option(help="Seed of keys, values and op choices.")]
    = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Save the JSON lines here.")]
    = None,
    output_format: Annotated[str, typer.Option("--format", help="table (for a person), json "
                                               "(casslab-load's JSON lines) or ycsb (YCSB's "
                                               "status lines and [OVERALL]/[READ]... "
                                               "sections); json and ycsb go to stdout, "
                                               "progress to stderr.")] = "table",
    clients: Annotated[int, typer.Option(help="casslab-load processes sharing the run "
                                         "(interleaved key slices, one start time, "
                                         "histograms merged by time); 1..64.")] = 1,
    property_files: Annotated[list[Path] | None, typer.Option(
        "-P", help="YCSB workload property file (e.g. workloads/workloada); repeatable.")]
    = None,
    properties: Annotated[list[str] | None, typer.Option(
        "-p", help="YCSB property key=value, over -P files (e.g. -p recordcount=100000); "
        "repeatable. -p insertstart=S -p insertcount=C loads key numbers S..S+C-1 only "
        "(a load split across machines, as YCSB).")] = None,
) -> None:
    """Run a workload with casslab-load and print a summary (extra casslab-load options
    go after `--`).

    Example: casslab run ycsb-a --name edge --phase both --records 10000 --ops 10000

    Example: casslab run stress-read --name edge --duration 60s --threads 150

    Example: casslab run stress-write --hosts 10.0.0.5:9042 --ops 100000 -- --io-threads 2

    Example: casslab run ycsb -P workloads/workloada -p recordcount=100000 --phase both

    Example: casslab run ycsb-b -p requestdistribution=uniform --format ycsb > run.txt

    Example: casslab run stress-write --name edge --duration 30s --clients 2

    Example: casslab run ycsb-a -n edge --ops 20000 --clients 2 -- --prometheus 127.0.0.1:9470
    """
    options = given_options({"phase": phase, "records": records, "ops": ops,
                             "duration": duration, "warmup": warmup, "rate": rate,
                             "threads": threads, "workers": workers, "in-flight": in_flight,
                             "cl-read": cl_read, "cl-write": cl_write, "rf": rf,
                             "seed": seed})
    with errors_to_exit():
        _check_format(output_format)
        _check_units(duration, warmup)
        workload, options = with_ycsb_properties(workload, options, property_files or [],
                                                  properties or [], list(ctx.args))
        # Checked by casslab-load's rules before the lab is touched; errors name the flag.
        spec = LoadSpec.of(workload, options, list(ctx.args), where="")
        if clients != 1:
            _check_clients(clients, output_format)
        targets, prefix = load_targets(name, hosts)
        if hosts is None:
            from casslab.load.multi import with_lab_label

            spec = with_lab_label(spec, name)
    if clients != 1:
        execute_clients(spec, targets, prefix, clients, out_file, output_format)
        return
    execute(spec, targets, prefix, out_file, output_format)


def given_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options the user gave: an unset one (None) is left out, not passed on, since a
    workload family without that option (iot has no --records) refuses even an empty one."""
    return {k: v for k, v in options.items() if v is not None}


def _check_clients(clients: int, output_format: str) -> None:
    from casslab.load.multi import check_count

    check_count(clients, "--clients")
    if output_format == "ycsb":
        raise UsageError("--format ycsb prints one client's text: with --clients give "
                         "table or json")


def execute_clients(spec: LoadSpec, targets: list[str], prefix: list[str], clients: int,
                    out_file: Path | None, output_format: str) -> None:
    """Run `spec` as `clients` processes here; print the merged result and each client's
    rate (a saturated client shows); exit 1 unless every client completed."""
    import json
    import tempfile

    from casslab.load.multi import local_places, run_clients

    with errors_to_exit(), tempfile.TemporaryDirectory(prefix="casslab-clients-") as tmp:
        work = Path(tmp)
        result = run_clients(spec, hosts=targets, places=local_places(clients, prefix, work),
                             work_dir=work)
    lines = [json.dumps(x) for x in [*result.intervals, result.summary.raw]]
    if out_file is not None:
        out_file.write_text("\n".join(lines) + "\n")
    if output_format == "json":
        sys.stdout.write("\n".join(lines) + "\n")
    else:
        print_summary(result.summary)
        for i, c in enumerate(result.clients):
            out.print(f"client {i + 1}: {c.ops:,} ops, {c.ops_s:,.1f} ops/s, {c.errors} "
                      f"errors ({c.ended_by})", highlight=False)
    if result.summary.ended_by != "completed":
        raise typer.Exit(1)


def execute(spec: LoadSpec, targets: list[str], prefix: list[str], out_file: Path | None,
            output_format: str) -> None:
    """Run `spec`, print its result in `output_format`; exit 1 unless it completed."""
    with errors_to_exit():
        summary = _run_with_progress(spec, targets, prefix, spec.options.ops, out_file,
                                     output_format)
    if output_format == "table":
        print_summary(summary)
    if summary.ended_by != "completed":
        raise typer.Exit(1)


def _check_format(output_format: str) -> None:
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format}: valid: {', '.join(FORMATS)}")


def with_ycsb_properties(workload: str, options: dict[str, Any], files: list[Path],
                          props: list[str], extra: list[str] | None = None
                          ) -> tuple[str, dict[str, Any]]:
    """The workload and options once YCSB -P files and -p properties are applied; the
    command's own options (--records, --threads...) win over properties. Without a
    threadcount and without a concurrency of casslab's own, one client thread runs, as
    YCSB's default threadcount=1."""
    if workload != "ycsb" and not files and not props:
        return workload, options
    if workload != "ycsb" and not workload.startswith("ycsb-"):
        raise UsageError(f"-P/-p are YCSB properties: give workload ycsb or ycsb-a..f, "
                         f"not {workload}")
    from casslab.load.ycsbprops import from_sources

    base = None if workload == "ycsb" else workload
    if base is not None and base not in WORKLOADS:
        raise UsageError(f"unknown workload '{workload}' (valid: {', '.join(WORKLOADS)})")
    resolved = from_sources(files, props, base=base)
    for warning in resolved.warnings:
        err.print(f"warning: {warning}", highlight=False, markup=False)
    given = given_options(options)
    concurrency = ("threads", "workers", "in-flight")
    chosen = any(k in given for k in concurrency) or any(
        a.split("=")[0] in {f"--{k}" for k in concurrency} for a in extra or [])
    default = {} if chosen or "threads" in resolved.options else {"threads": YCSB_THREADS}
    return resolved.workload, default | resolved.options | given


def _check_units(duration: str | None, warmup: str | None) -> None:
    """Refuse what casslab-load would refuse, as a one-line error before anything starts."""
    if duration is not None:
        parse_duration_s(duration, "--duration")
    if warmup is not None and not warmup.strip().isdigit():  # digits alone: an op count
        parse_duration_s(warmup, "--warmup")


def load_targets(name: str, hosts: str | None) -> tuple[list[str], list[str]]:
    """Where casslab-load connects (HOST:PORT each) and the prefix it runs under: the
    --hosts given, from here; else lab `name`'s running nodes, from inside its namespace."""
    if hosts is not None:
        return [f"{h}:{port}" for h, port in parse_contact_points(hosts)], []
    lab = open_lab(name)
    alive = [n.address for n in lab.running_nodes()]
    if not alive:
        raise UsageError(f"lab '{name}' has no running node (casslab lab up --name {name})")
    return [f"{a}:{NATIVE_PORT}" for a in alive], lab.exec_prefix()


def _run_with_progress(spec: LoadSpec, targets: list[str], prefix: list[str], ops: int | None,
                       out_file: Path | None, output_format: str = "table") -> RunSummary:
    # rich.progress costs ~10 ms of start-up that `run --help` need not pay.
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("[bold]{task.description}"), BarColumn(),
               TextColumn("{task.fields[status]}"), TimeElapsedColumn()]
    # json and ycsb own stdout: the progress goes to stderr.
    console: Console = out if output_format == "table" else err
    # Only on a terminal: piped, a progress display leaves a stray blank line; and not
    # over json/ycsb text on the same terminal (the text shows the progress then).
    shown = console.is_terminal and (console is out or not sys.stdout.isatty())
    with Progress(*columns, console=console, transient=True, disable=not shown,
                  redirect_stdout=False) as progress:
        task = progress.add_task(spec.workload, total=ops, status="starting")

        def on_interval(line: dict[str, Any]) -> None:
            # p99 of all operations: casslab-load's merged histogram of the interval.
            p99_us = line.get("all", {}).get("latency", {}).get("p99_us", 0)
            stage = "" if line.get("recorded", True) else " (warm-up)"
            status = (f"{line['ops_s']:,.0f} ops/s  p99 {p99_us / 1000:.2f} ms  "
                      f"errors {line['errors']}{stage}")
            progress.update(task, advance=line["ops"] if line.get("recorded", True) else 0,
                            status=status)

        def on_text(line: str) -> None:
            # As casslab-load printed it, at once (a reader may be following the status).
            sys.stdout.write(line)
            sys.stdout.flush()

        def on_status(line: str) -> None:
            # YCSB's status lines: stderr, as YCSB writes them (stdout: the report only).
            sys.stderr.write(line)
            sys.stderr.flush()

        text_format = "ycsb" if output_format == "ycsb" else "json"
        result = run_load(spec, hosts=targets, prefix=prefix, on_interval=on_interval,
                          raw_out=out_file, text_format=text_format,
                          on_text=None if output_format == "table" else on_text,
                          on_status=on_status)
    return result.summary


def print_summary(s: RunSummary) -> None:
    """A table per operation: throughput, then latency (intended start) and service time."""
    clients = "" if s.clients is None else f", {s.clients:,} clients"
    table = Table(title=f"{s.workload}: {s.ops:,} ops in {s.elapsed_s:.2f} s = "
                  f"{s.ops_s:,.1f} ops/s, {s.errors} errors ({s.ended_by}){clients}")
    for col in ("op", "ops", "ops/s", "errors", "p50 (ms)", "p95 (ms)", "p99 (ms)",
                "p99.9 (ms)", "max (ms)", "service p50 (ms)", "service p99 (ms)"):
        table.add_column(col, justify="right")
    for o in s.by_op:
        if o.ops == 0 and o.errors == 0:
            continue
        lat, svc = o.latency, o.service
        table.add_row(o.name, f"{o.ops:,}", f"{o.ops_s:,.1f}", str(o.errors),
                      *(f"{v / 1000:.2f}" for v in (lat.p50_us, lat.p95_us, lat.p99_us,
                                                    lat.p999_us, lat.max_us, svc.p50_us,
                                                    svc.p99_us)))
    out.print(table)
    for o in s.by_op:
        for message in o.first_errors[:3]:
            out.print(f"[red]{o.name} error:[/] {message}", highlight=False)
    out.print("latency is measured from each operation's intended start (coordinated omission "
              "corrected); service time from when it was sent.")
