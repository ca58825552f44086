"""`casslab stress`: a cassandra-stress command line, run by casslab-load."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from casslab.cassandra.cql import parse_contact_points
from casslab.cli.common import errors_to_exit
from casslab.cli.run import _check_format, _targets, execute
from casslab.load import LoadSpec
from casslab.load.stresscli import translate


def stress(
    ctx: typer.Context,
    # Long options only: a short one would swallow cassandra-stress's `-node`, `-rate`...
    name: Annotated[str | None, typer.Option("--name", help="Lab to run against (default: "
                                             "the lab 'default'; with -node, the lab whose "
                                             "namespace reaches those hosts).")] = None,
    output_format: Annotated[str, typer.Option("--format", help="table, json or ycsb (as "
                                               "casslab run).")] = "table",
    out_file: Annotated[Path | None, typer.Option("--out", help="Save the JSON lines here.")]
    = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the casslab-load command "
                                          "and stop.")] = False,
) -> None:
    """Run a cassandra-stress command line (write, read, mixed, user) with casslab-load.

    Supported: n=, duration=, cl=, no-warmup, ratio(...), profile= ops(...);
    -rate threads= fixed= throttle=; -pop seq= dist=uniform(..)|gaussian(..);
    -col n=FIXED(5) size=FIXED(N); -schema replication(factor=N) keyspace=;
    -mode native cql3; -node HOSTS; -log hdrfile= interval=. Others are refused.

    Example: casslab stress write n=100000 cl=ONE -rate threads=50 -pop seq=1..100000

    Example: casslab stress --name edge mixed 'ratio(write=1,read=3)' duration=60s

    Example: casslab stress user profile=crates/load/profiles/sensor-readings.yaml \
'ops(insert=1,latest=3)' n=10000 -node 10.0.0.5

    Example: casslab stress read n=10000 -rate fixed=500/s -log hdrfile=read.hdr --format ycsb
    """
    with errors_to_exit():
        _check_format(output_format)
        run = translate(list(ctx.args))
        spec = LoadSpec.of(run.workload, run.options, where="")
        nodes = ([f"{h}:{p}" for h, p in parse_contact_points(",".join(run.nodes))]
                 if run.nodes else [])
        if dry_run:
            from casslab.load.runner import build_command

            shown = nodes or [f"<nodes of lab {name or 'default'}>"]
            typer.echo(shlex.join(build_command(spec, shown, "casslab-load", output_format
                                                if output_format == "ycsb" else "json")))
            return
        if nodes:
            targets, prefix = nodes, (_targets(name, None)[1] if name is not None else [])
        else:
            targets, prefix = _targets(name or "default", None)
    execute(spec, targets, prefix, out_file, output_format)
