"""`casslab lab ...`: build, inspect and tear down local labs."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from casslab.cassandra.cql import CONSISTENCY_LEVELS, check_consistency
from casslab.cassandra.distribution import DEFAULT_VERSION
from casslab.cli.common import (
    err,
    errors_to_exit,
    open_lab,
    open_testbed,
    out,
    refuse_given,
)
from casslab.core.errors import UsageError
from casslab.core.paths import default_home
from casslab.core.units import parse_duration_s
from casslab.lab.state import (
    DEFAULT_RUNTIME,
    DEFAULT_TIMEOUT_S,
    RUNTIME_NAMES,
    check_node_ref,
)

app = typer.Typer(help="Local Cassandra labs: real nodes on this machine.", no_args_is_help=True)

_CL_HELP = "Consistency level: " + ", ".join(CONSISTENCY_LEVELS) + "."
NameOpt = Annotated[str, typer.Option("--name", "-n", help="Lab name.")]


@app.command()
def up(
    ctx: typer.Context,
    nodes: Annotated[int, typer.Option("--nodes", "-N", help="Number of nodes.")] = 3,
    name: NameOpt = "default",
    profile: Annotated[str, typer.Option(help="Hardware profile (see `casslab profiles`).")]
    = "host",
    node_profile: Annotated[list[str] | None, typer.Option(
        help="A node's own profile, NODE=PROFILE (repeatable), e.g. node3=rpi3; the other "
             "nodes run --profile.")] = None,
    profiles_file: Annotated[Path | None, typer.Option(help="YAML file of user profiles.")]
    = None,
    cassandra_version: Annotated[str, typer.Option(help="Cassandra version (Maven Central).")]
    = DEFAULT_VERSION,
    set_: Annotated[list[str] | None, typer.Option("--set", help="cassandra.yaml key=value "
                                                    "(repeatable; a.b=1 for nested keys).")]
    = None,
    timeout: Annotated[str, typer.Option(help="How long to wait for every node to be UN, "
                                         "e.g. 180s, 5m.")] = f"{DEFAULT_TIMEOUT_S:g}s",
    netns: Annotated[bool, typer.Option(help="Own network namespace (--no-netns: nodes on "
                                        "loopback aliases reachable from this host).")] = True,
    heap_mib: Annotated[int | None, typer.Option(help="JVM heap in MiB (default: the "
                                                 "profile's, or Cassandra's rule).")] = None,
    net_: Annotated[str | None, typer.Option("--net", help="Link conditions for every link: a "
                                             "profile (see `casslab net profiles`) or a "
                                             "link-spec YAML.")] = None,
    runtime: Annotated[str, typer.Option(help="What each node runs in: "
                                         + ", ".join(RUNTIME_NAMES) + " (netns: own namespace "
                                         "and veth on a lab bridge; lxc: LXC container on "
                                         "that bridge).")] = DEFAULT_RUNTIME,
    inventory: Annotated[Path | None, typer.Option(
        help="Run the nodes on real hosts: an Ansible inventory (group `nodes`, "
             "optional `clients`; see docs/scale-out.md). The hosts are provisioned with "
             "casslab's playbook; --nodes is the inventory's count.")] = None,
) -> None:
    """Start a real Cassandra cluster and return when every node is UN.

    Example: casslab lab up --nodes 3 --profile rpi3 --net wifi --set concurrent_writes=16

    Example (mixed): casslab lab up --nodes 6 --profile rpi2 --node-profile node6=rpi3

    Example (real hosts): casslab lab up --name pis --inventory hosts.yaml
    """
    from dataclasses import replace

    from casslab.lab import LabOptions
    from casslab.lab.nodeprofiles import parse_node_profile_options

    with errors_to_exit():
        timeout_s = parse_duration_s(timeout, "--timeout")
        per_node = parse_node_profile_options(node_profile or [])
        if inventory is not None:
            refuse_given(ctx, ("nodes", "netns"), "not with --inventory (the inventory's "
                         "group `nodes` sets the nodes; they run on their hosts)")
            # A name is one lab's, whichever backend holds it.
            if open_testbed(name).exists():
                raise UsageError(f"--name {name}: a lab of that name exists (take it down "
                                 "first, or choose another name)")
        # The inventory's hosts may name profiles of --profiles-file.
        testbed = open_testbed(name, inventory=inventory, profiles_file=profiles_file)
        options = LabOptions(nodes=nodes, profile=profile, profiles_file=profiles_file,
                             cassandra_version=cassandra_version, overrides=set_ or [],
                             timeout_s=timeout_s, own_namespace=netns, net=net_,
                             heap_mib=heap_mib, runtime=runtime, node_profiles=per_node)
        if (fixed := testbed.fixed_nodes()) is not None:
            options = replace(options, nodes=fixed)
    started = time.monotonic()
    with errors_to_exit(), err.status("starting lab") as spinner:
        try:
            built = testbed.up(options, progress=lambda msg: spinner.update(msg))
        finally:
            testbed.close()
    for warning in built.warnings:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False)
    out.print(f"lab [bold]{name}[/] {built.summary}, ready in "
              f"{time.monotonic() - started:.1f} s")


@app.command()
def down(
    name: NameOpt = "default",
    wipe: Annotated[bool, typer.Option(help="Also delete the nodes' data and logs (a lab on "
                                       "hosts is always wiped).")] = False,
) -> None:
    """Stop every node and remove the lab's namespace and cgroups (data kept unless --wipe).

    Example: casslab lab down --name edge --wipe
    """
    with errors_to_exit():
        done = open_testbed(name).down(wipe=wipe)
    out.print(f"lab {name} {done}")


@app.command()
def status(name: NameOpt = "default") -> None:
    """Show each node: address, state (UN/DN), load, profile, pid, and the CPU credit
    balance of burstable (t2.*) nodes.

    Example: casslab lab status --name edge
    """
    with errors_to_exit():
        testbed = open_testbed(name)
        try:
            rows = testbed.status()
        finally:
            testbed.close()
    table = Table(title=f"lab {name}")
    credits = any(r.cpu_credits is not None for r in rows)
    for col in ("node", "address", "state", "load (MiB)", "profile", "pid",
                *(["CPU credits"] if credits else [])):
        table.add_column(col)
    for r in rows:
        colour = "green" if r.state == "UN" else "red"
        load = "-" if r.load_mib is None else f"{r.load_mib:.2f}"
        credit = [] if not credits else ["-" if r.cpu_credits is None
                                         else f"{r.cpu_credits:.1f}"]
        table.add_row(r.name, r.address, f"[{colour}]{r.state}[/]", load, r.profile,
                      str(r.pid or "-"), *credit)
    out.print(table)


@app.command()
def metrics(
    name: NameOpt = "default",
    serve: Annotated[str | None, typer.Option(
        help="Serve /metrics for Prometheus on HOST:PORT until Ctrl-C (e.g. "
             "127.0.0.1:9471); without it, print the metrics once.")] = None,
) -> None:
    """The lab's live metrics in Prometheus text: each node's CPU seconds, disk bytes,
    memory and data size, its own Cassandra figures from the virtual tables (coordinator
    latency, thread pools, compactions), and the link conditions in force. Grafana:
    dashboards/casslab-load.json.

    Example: casslab lab metrics --name edge --serve 127.0.0.1:9471
    """
    from casslab.testbed import exporter

    with errors_to_exit():
        lab = open_lab(name)
        if serve is None:
            reader = exporter.NodeReader(lab)
            try:
                print(exporter.lab_text(lab, reader), end="")
            finally:
                reader.close()
            return
        server = exporter.serve(lab, serve)
    err.print(f"serving lab {name}'s metrics on http://{serve}/metrics (Ctrl-C stops)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.shutdown()


@app.command("list")
def list_() -> None:
    """List labs on this machine and how many nodes each has running.

    Example: casslab lab list
    """
    from casslab.testbed.listing import list_testbeds

    table = Table(title="labs")
    for col in ("name", "nodes", "running", "profile", "version", "namespace"):
        table.add_column(col)
    for r in list_testbeds(default_home()):
        # On hosts, whether the remote JVMs still run would take an SSH round: `lab
        # status` asks.
        table.add_row(r.name, str(r.nodes), r.running, r.profile, r.version, r.where)
    out.print(table)


@app.command("exec", context_settings={"allow_extra_args": True,
                                       "ignore_unknown_options": True})
def exec_(
    ctx: typer.Context,
    name: NameOpt = "default",
) -> None:
    """Run a command inside the lab's network namespace; exits with its exit code.

    Example: casslab lab exec --name edge -- ip addr show lo
    """
    if not ctx.args:
        err.print("[bold red]error:[/] no command given: casslab lab exec -- CMD [ARGS...]")
        raise typer.Exit(2)
    with errors_to_exit():
        prefix = open_lab(name).exec_prefix()
    try:
        code = subprocess.call([*prefix, *ctx.args])
    except FileNotFoundError:
        err.print(f"[bold red]error:[/] command not found: {ctx.args[0]}")
        raise typer.Exit(127) from None
    raise typer.Exit(code)


@app.command()
def cql(
    statement: Annotated[str, typer.Argument(help="One CQL statement.")],
    name: NameOpt = "default",
    consistency: Annotated[str, typer.Option("--cl", help=_CL_HELP)] = "ONE",
    node: Annotated[str | None, typer.Option(help="Coordinator node (number, name or address).")]
    = None,
) -> None:
    """Run one CQL statement against the lab and print the rows.

    Example: casslab lab cql "SELECT release_version FROM system.local" --node 2
    """
    with errors_to_exit():
        consistency = check_consistency(consistency)
        if node:
            check_node_ref(node)
        lab = open_lab(name)
        host = lab.state().node(node).address if node else None
        with lab.cql() as session:
            result = session.execute(statement, consistency=consistency, host=host)
    if not result.columns:
        out.print("OK")
        return
    table = Table()
    for col in result.columns:
        table.add_column(col)
    for row in result.rows:
        table.add_row(*("null" if v is None else str(v) for v in row))
    out.print(table)
    out.print(f"({len(result.rows)} rows)")


@app.command()
def logs(
    node: Annotated[str, typer.Argument(help="Node number, name or address.")],
    name: NameOpt = "default",
    lines: Annotated[int, typer.Option("--lines", "-l", help="Lines from the end.")] = 50,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing.")] = False,
) -> None:
    """Print a node's system.log (its last lines, or follow it).

    Example: casslab lab logs 2 --name edge --lines 100
    """
    with errors_to_exit():
        if lines < 0:
            raise UsageError(f"--lines: {lines} is negative (valid: >= 0 lines from the end)")
        testbed = open_testbed(name)
        path = testbed.log_file(node)
        if path is None:  # on another machine
            if follow:
                raise UsageError("--follow: not for a lab on hosts (its log is read over SSH; "
                                 "run `tail -F` on the host)")
            try:
                text = testbed.log_text(node, lines)
            finally:
                testbed.close()
            out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
            return
    if not path.exists():
        err.print(f"[bold red]error:[/] no log yet at {path}")
        raise typer.Exit(1)
    args = ["tail", "-n", str(lines), *(["-F"] if follow else []), str(path)]
    os.execvp("tail", args)


@app.command()
def stop(
    node: Annotated[str, typer.Argument(help="Node number, name or address.")],
    name: NameOpt = "default",
    kill: Annotated[bool, typer.Option(help="SIGKILL instead of a clean shutdown.")] = False,
) -> None:
    """Stop one node (for fault experiments).

    Example: casslab lab stop 3 --name edge --kill
    """
    with errors_to_exit():
        check_node_ref(node)
        n = open_lab(name).stop_node(node, kill=kill)
    out.print(f"{n.name} ({n.address}) stopped")


@app.command()
def start(
    node: Annotated[str, typer.Argument(help="Node number, name or address.")],
    name: NameOpt = "default",
    timeout: Annotated[str, typer.Option(help="How long to wait for UN, e.g. 180s.")]
    = f"{DEFAULT_TIMEOUT_S:g}s",
) -> None:
    """Start a stopped node again and wait until it is UN.

    Example: casslab lab start 3 --name edge
    """
    with errors_to_exit(), err.status(f"starting node {node}"):
        timeout_s = parse_duration_s(timeout, "--timeout")
        check_node_ref(node)
        n = open_lab(name).start_node(node, timeout_s=timeout_s)
    out.print(f"{n.name} ({n.address}) up")
