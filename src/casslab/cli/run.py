"""`casslab run`: one benchmark with casslab-load against a lab or any cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from casslab.cassandra.cql import NATIVE_PORT, parse_contact_points
from casslab.cli.common import errors_to_exit, open_lab, out
from casslab.core.errors import UsageError
from casslab.core.units import parse_duration_s
from casslab.load import LoadSpec, RunSummary, run_load
from casslab.load.runner import WORKLOADS


def run(
    ctx: typer.Context,
    workload: Annotated[str, typer.Argument(help=f"{', '.join(WORKLOADS)}, or a "
                                            "cassandra-stress user profile .yaml.")],
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
) -> None:
    """Run a workload with casslab-load and print a summary (extra casslab-load options
    go after `--`).

    Example: casslab run ycsb-a --name edge --phase both --records 10000 --ops 10000

    Example: casslab run stress-read --name edge --duration 60s --threads 150

    Example: casslab run stress-write --hosts 10.0.0.5:9042 --ops 100000 -- --io-threads 2
    """
    options: dict[str, Any] = {"phase": phase, "records": records, "ops": ops,
                               "duration": duration, "warmup": warmup, "rate": rate,
                               "threads": threads, "workers": workers, "in-flight": in_flight,
                               "cl-read": cl_read,
                               "cl-write": cl_write, "rf": rf, "seed": seed}
    with errors_to_exit():
        _check_units(duration, warmup)
        # Checked by casslab-load's rules before the lab is touched; errors name the flag.
        spec = LoadSpec.of(workload, options, list(ctx.args), where="")
        targets, prefix = _targets(name, hosts)
        summary = _run_with_progress(spec, targets, prefix, ops, out_file)
    print_summary(summary)
    if summary.ended_by != "completed":
        raise typer.Exit(1)


def _check_units(duration: str | None, warmup: str | None) -> None:
    """Refuse what casslab-load would refuse, as a one-line error before anything starts."""
    if duration is not None:
        parse_duration_s(duration, "--duration")
    if warmup is not None and not warmup.strip().isdigit():  # digits alone: an op count
        parse_duration_s(warmup, "--warmup")


def _targets(name: str, hosts: str | None) -> tuple[list[str], list[str]]:
    if hosts is not None:
        return [f"{h}:{port}" for h, port in parse_contact_points(hosts)], []
    lab = open_lab(name)
    alive = [n.address for n in lab.running_nodes()]
    if not alive:
        raise UsageError(f"lab '{name}' has no running node (casslab lab up --name {name})")
    return [f"{a}:{NATIVE_PORT}" for a in alive], lab.exec_prefix()


def _run_with_progress(spec: LoadSpec, targets: list[str], prefix: list[str], ops: int | None,
                       out_file: Path | None) -> RunSummary:
    # rich.progress costs ~10 ms of start-up that `run --help` need not pay.
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("[bold]{task.description}"), BarColumn(),
               TextColumn("{task.fields[status]}"), TimeElapsedColumn()]
    # Only on a terminal: piped, a progress display leaves a stray blank line.
    with Progress(*columns, console=out, transient=True,
                  disable=not out.is_terminal) as progress:
        task = progress.add_task(spec.workload, total=ops, status="starting")

        def on_interval(line: dict[str, Any]) -> None:
            # p99 of all operations: casslab-load's merged histogram of the interval.
            p99_us = line.get("all", {}).get("latency", {}).get("p99_us", 0)
            stage = "" if line.get("recorded", True) else " (warm-up)"
            status = (f"{line['ops_s']:,.0f} ops/s  p99 {p99_us / 1000:.2f} ms  "
                      f"errors {line['errors']}{stage}")
            progress.update(task, advance=line["ops"] if line.get("recorded", True) else 0,
                            status=status)

        result = run_load(spec, hosts=targets, prefix=prefix, on_interval=on_interval,
                          raw_out=out_file)
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
