"""Entry point of the `casslab` command, and its one error path.

Every error a user can cause ends as one line `error: ...` on stderr: exit code 2 for a
usage error (bad option, bad value, unknown name), 1 for a failure while doing the work.
`--debug` or CASSLAB_DEBUG=1 lets the exception propagate with its traceback instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, NoReturn

import typer
from rich.table import Table

from casslab import __version__
from casslab.cassandra.distribution import DEFAULT_VERSION, resolve
from casslab.cli.clickapi import BadParameter, ClickException, NoArgsIsHelpError
from casslab.cli.clickapi import UsageError as ClickUsageError
from casslab.cli.common import (
    DEBUG_ENV,
    debug_enabled,
    describe_os_error,
    err,
    errors_to_exit,
    exit_code,
    one_line,
    out,
    print_error,
)
from casslab.cli.lazy import LazyCommand, LazyGroup
from casslab.core.errors import CasslabError
from casslab.core.paths import default_cache


def run_cli(invoke: Callable[[], Any]) -> NoReturn:
    """Run the command tree (Click in non-standalone mode) and map every way it can end
    to an exit code; errors print one line unless debugging is on."""
    try:
        rv = invoke()
    except NoArgsIsHelpError:
        # A bare group (`casslab lab`): Typer printed its help while raising this.
        sys.exit(2)
    except ClickException as exc:
        if debug_enabled():
            raise
        print_error(one_line(_click_message(exc)))
        sys.exit(exc.exit_code)
    except typer.Abort:
        if debug_enabled():
            raise
        print_error("aborted")
        sys.exit(1)
    except CasslabError as exc:  # raised outside a command's errors_to_exit
        if debug_enabled():
            raise
        print_error(one_line(str(exc)))
        sys.exit(exit_code(exc))
    except (OSError, UnicodeDecodeError) as exc:
        if debug_enabled():
            raise
        print_error(one_line(describe_os_error(exc)))
        sys.exit(1)
    except KeyboardInterrupt:
        if debug_enabled():
            raise
        err.print("[bold red]interrupted[/]")
        sys.exit(130)
    # Non-standalone Click returns the code of a typer.Exit, or the command's own value.
    sys.exit(rv if isinstance(rv, int) else 0)


def _click_message(exc: ClickException) -> str:
    """Click's message, with the command path for usage errors (`casslab lab up: ...`)."""
    rejected = _rejected_input(exc)
    if isinstance(exc, BadParameter) and rejected is not None:
        # Typer's type check says what was expected, not what the user typed: name it.
        exc.message = f"{rejected!r}: {exc.message}"
    message = exc.format_message()
    if isinstance(exc, ClickUsageError) and exc.ctx is not None:
        return f"{exc.ctx.command_path}: {message} (see --help)"
    return message


def _rejected_input(exc: ClickException) -> object | None:
    """The value a failed type conversion was given (Typer converts through pydantic,
    whose error keeps the input), or None."""
    errors = getattr(exc.__cause__, "errors", None)
    if not callable(errors):
        return None
    found = errors()
    if not isinstance(found, list) or not found or not isinstance(found[0], dict):
        return None
    value: object | None = found[0].get("input")
    return value


class CasslabApp(typer.Typer):
    """The Typer app whose call goes through run_cli (the console script calls `app()`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", False)
        run_cli(lambda: super(CasslabApp, self).__call__(*args, **kwargs))


class CasslabGroup(LazyGroup):
    """The root group: every command but the three small ones below is imported on use."""

    lazy: ClassVar[dict[str, LazyCommand]] = {
        "lab": LazyCommand("casslab.cli.lab", "app",
                           "Local Cassandra labs: real nodes on this machine."),
        "net": LazyCommand("casslab.cli.net", "app",
                           "Network emulation of a lab: link profiles and per-link delay, "
                           "jitter, loss and bandwidth inside the lab's namespace."),
        "experiment": LazyCommand("casslab.cli.experiment", "app",
                                  "Campaigns of trials from a YAML spec: validate, plan, run, "
                                  "export."),
        "calibrate": LazyCommand("casslab.cli.calibrate", "calibrate",
                                 "Measure the lab's noise floor: one cell of a spec as an "
                                 "A/A design (interleaved copies); the results work as "
                                 "--pilot."),
        "tune": LazyCommand("casslab.cli.tune", "app",
                            "Watch a keyspace and ALTER its TWCS and UCS tables to the rules' "
                            "optimal options as the TTL and read share change; Ctrl-C or "
                            "SIGTERM stops it cleanly."),
        "report": LazyCommand("casslab.cli.report", "report",
                              "Write a self-contained HTML report (statistics, tables, plots) "
                              "and print a summary."),
        "reproduce": LazyCommand("casslab.cli.reproduce", "reproduce",
                                 "Run every spec of a study (examples/<study>-*/, "
                                 "resumable), then write the doc's generated blocks "
                                 "(verdicts, paper values, figures) from the results "
                                 "databases; the verdicts are the reports' own, one "
                                 "engine."),
        "compare": LazyCommand("casslab.cli.compare", "compare_cmd",
                               "Compare every response of two sets of trials: medians, change, "
                               "Welch t test, Hedges' g; differences flagged only where the "
                               "Holm-corrected p <= 0.01."),
        "plan": LazyCommand("casslab.cli.plan", "plan",
                            "Plan VM types, node counts and host placement of Cassandra "
                            "tenants."),
        "k8s": LazyCommand("casslab.cli.k8s", "app",
                           "Kubernetes manifests of a campaign cell: cass-operator, Chaos "
                           "Mesh, casslab-load Jobs."),
        "schema": LazyCommand("casslab.cli.schema", "schema",
                              "Print the JSON Schema of a YAML input (experiment spec, plan "
                              "spec, tune rules, link spec, hardware profiles) for editors' "
                              "completion and checks."),
        "run": LazyCommand("casslab.cli.run", "run",
                           "Run a workload with casslab-load and print a summary (extra "
                           "casslab-load options go after `--`).",
                           {"allow_extra_args": True, "ignore_unknown_options": True}),
        "stress": LazyCommand("casslab.cli.stress", "stress",
                              "Run a cassandra-stress command line (write, read, mixed, user) "
                              "with casslab-load.",
                              {"allow_extra_args": True, "ignore_unknown_options": True}),
    }


app = CasslabApp(
    cls=CasslabGroup,
    help="casslab: a performance lab for Apache Cassandra on constrained, edge and cloud "
    "deployments.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error "
                                        f"(also {DEBUG_ENV}=1).")] = False,
) -> None:
    if debug:
        # The environment, so the library's subprocesses see it too.
        os.environ[DEBUG_ENV] = "1"



@app.command()
def profiles(
    profiles_file: Annotated[Path | None, typer.Option(help="Also show profiles from this YAML.")]
    = None,
) -> None:
    """List hardware profiles with their limits and sources.

    Example: casslab profiles --profiles-file my-boards.yaml
    """
    # Imported here: only this command needs the profiles.
    from casslab.hardware import BUILTIN_PROFILES, load_profiles_file
    from casslab.hardware.credits import credit_spec, quota_cores

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
        cpu = _fmt(p.cpu_cores)
        if p.burst is not None and p.cpu_cores is not None:
            spec = credit_spec(p.burst)
            cpu += f" ({quota_cores(spec, p.cpu_cores, bursting=False):g} without credits)"
        table.add_row(p.name, cpu, _fmt(p.memory_mib),
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
