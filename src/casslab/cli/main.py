"""Entry point of the `casslab` command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from casslab import __version__
from casslab.cassandra.distribution import DEFAULT_VERSION, resolve
from casslab.cli import experiment, lab, net, tune
from casslab.cli.common import err, errors_to_exit, out
from casslab.cli.compare import compare_cmd
from casslab.cli.plan import plan
from casslab.cli.report import report
from casslab.cli.run import run
from casslab.cli.schema import schema
from casslab.core.paths import default_cache
from casslab.profiles import BUILTIN_PROFILES, load_profiles_file

app = typer.Typer(
    help="casslab: a performance lab for Apache Cassandra on constrained, edge and cloud "
    "deployments.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(lab.app, name="lab")
app.add_typer(net.app, name="net")
app.add_typer(experiment.app, name="experiment")
app.add_typer(tune.app, name="tune")
app.command()(report)
app.command(name="compare")(compare_cmd)
app.command()(plan)
app.command()(schema)
app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(run)


@app.command()
def profiles(
    profiles_file: Annotated[Path | None, typer.Option(help="Also show profiles from this YAML.")]
    = None,
) -> None:
    """List hardware profiles with their limits and sources.

    Example: casslab profiles --profiles-file my-boards.yaml
    """
    table = Table(title="hardware profiles")
    for col in ("name", "CPU (cores)", "memory (MiB)", "heap (MiB)", "disk r/w (MB/s)",
                "source"):
        table.add_column(col, overflow="fold")
    with errors_to_exit():
        items = dict(BUILTIN_PROFILES)
        if profiles_file:
            items.update(load_profiles_file(profiles_file))
    for p in items.values():
        heap = p.heap_mib or (p.effective_heap_mib(0) if p.memory_mib else None)
        disk = ("-" if p.disk_read_mb_s is None and p.disk_write_mb_s is None
                else f"{p.disk_read_mb_s or '-'}/{p.disk_write_mb_s or '-'}")
        table.add_row(p.name, _fmt(p.cpu_cores), _fmt(p.memory_mib),
                      _fmt(heap) if heap else "Cassandra's rule", disk, p.source)
    out.print(table)


def _fmt(v: float | int | None) -> str:
    return "unlimited" if v is None else f"{v:g}"


@app.command()
def fetch(
    cassandra_version: Annotated[str, typer.Option(help="Cassandra version (Maven Central).")]
    = DEFAULT_VERSION,
) -> None:
    """Resolve a Cassandra version's jars from Maven Central into the cache (done once).

    Example: casslab fetch --cassandra-version 5.0.6
    """
    with errors_to_exit(), err.status(f"resolving Cassandra {cassandra_version} with Maven"):
        dist = resolve(cassandra_version, default_cache())
    jars = len(list(dist.lib_dir.glob("*.jar")))
    out.print(f"Cassandra {dist.version}: {jars} jars in {dist.lib_dir}")


@app.command()
def version() -> None:
    """Print casslab's version."""
    out.print(__version__)


if __name__ == "__main__":
    app()
