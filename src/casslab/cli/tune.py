"""`casslab tune`: the online compaction tuner (daemon), its default rules, `learn`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from casslab.cassandra.cql import check_keyspace_name, parse_contact_points
from casslab.cli.common import err, errors_to_exit, given, open_lab, out
from casslab.core.errors import CasslabError, UsageError
from casslab.core.paths import default_cache, default_home
from casslab.core.units import parse_duration_s

# The tuner's modules are imported inside the commands (start-up time of every other
# command); these names are for annotations only.
if TYPE_CHECKING:
    from casslab.cassandra.cql import CqlClient
    from casslab.experiment.runner import Event
    from casslab.tune.loop import Outcome
    from casslab.tune.rules import RulesTable

app = typer.Typer(invoke_without_command=True)

COLORS = {"change": "green", "keep": "dim", "hold": "yellow", "skip": "dim", "error": "red"}


@contextlib.contextmanager
def _client(name: str | None, contacts: list[str] | None
            ) -> Iterator[tuple[CqlClient, list[str]]]:
    """A connected client and every node's address: a lab's nodes, or a real cluster's
    (contacts in this namespace, the rest found in system.peers_v2)."""
    from casslab.cassandra.cql import CqlClient
    from casslab.tune.observe import cluster_hosts

    if contacts is not None:
        with CqlClient(contacts, netns=None) as cql:
            yield cql, cluster_hosts(cql)
        return
    lab = open_lab(name or "default")
    alive = [n.address for n in lab.running_nodes()]
    if not alive:
        raise UsageError(f"lab '{lab.name}' has no running node")
    with lab.cql() as cql:
        yield cql, alive


def _rules(rules: Path | None, interpolate: bool | None, time_scale: float,
           time_scale_given: bool) -> RulesTable:
    from casslab.tune.rules import RulesTable, dump_rules, load_rules, seed003_rules

    # Given, not "not 1.0": `--time-scale 1 --rules f.yaml` asks to scale a file too.
    if rules is not None and time_scale_given:
        raise UsageError("--time-scale scales the default rules only; scale a rules file's "
                         "points in the file (see `casslab tune rules --time-scale`)")
    if rules is None:
        return seed003_rules(interpolate=bool(interpolate), time_scale=time_scale)
    table = load_rules(rules)
    if interpolate is not None and interpolate != table.interpolate:
        from casslab.tune.rules import parse_rules
        text = dump_rules(RulesTable(table.points, interpolate=interpolate,
                                     scale_ttl_s=table.scale_ttl_s,
                                     scale_read_share=table.scale_read_share,
                                     source=table.source))
        table = parse_rules(text, source=str(rules))  # re-validates the grid
    return table


def _print(outcomes: list[Outcome], iteration: int) -> None:
    for o in outcomes:
        d = o.decision
        share = d.inputs.get("read_share")
        what = f"[{COLORS.get(d.action, 'white')}]{d.action:6}[/]"
        tail = " (dry run)" if o.statement and not o.applied and not o.error else ""
        tail = f" [red]failed: {o.error}[/]" if o.error else tail
        out.print(f"#{iteration} {d.table}: {what} ttl {d.inputs.get('ttl_s')} s, reads "
                  f"{'-' if share is None else f'{share:.1%}'}: {d.reason}{tail}",
                  highlight=False)


@app.callback()
def tune(
    ctx: typer.Context,
    keyspace: Annotated[str | None, typer.Option("--keyspace", "-k",
                                                 help="Keyspace whose TWCS/UCS tables to "
                                                 "tune.")] = None,
    name: Annotated[str | None, typer.Option("--name", "-n", help="Lab to tune (default: "
                                             "'default').")] = None,
    hosts: Annotated[str | None, typer.Option(help="Contact points h1,h2 of any cluster "
                                              "instead of a lab.")] = None,
    rules: Annotated[Path | None, typer.Option(help="Rules file (YAML); default: seed 003's "
                                               "Table 2 + min_threshold rule.")] = None,
    interval: Annotated[str, typer.Option(help="Time between iterations, e.g. 30s.")] = "30s",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Decide and audit, never "
                                          "ALTER.")] = False,
    audit: Annotated[Path | None, typer.Option(help="Append every decision to this JSON-lines "
                                               "file.")] = None,
    iterations: Annotated[int | None, typer.Option(help="Stop after N iterations.")] = None,
    once: Annotated[bool, typer.Option("--once", help="One iteration, then exit.")] = False,
    min_interval: Annotated[str, typer.Option(
        help="Minimum time between two changes of a table.")] = "5m",
    min_change: Annotated[float, typer.Option(help="Minimum relative change of an option "
                                              "(0.2 = 20 %).")] = 0.2,
    switch_margin: Annotated[float, typer.Option(help="Dead band: another rule point must be "
                                                 "nearer by this (normalised distance).")]
    = 0.05,
    interpolate: Annotated[bool | None, typer.Option("--interpolate/--nearest",
                                                     help="Blend grid points (default: the "
                                                     "rules file's setting).")] = None,
    time_scale: Annotated[float, typer.Option(help="Scale the default rules' TTLs and windows "
                                              "(0.05: TTL 1 h -> 3 min; valid 1/60 to 1).")]
    = 1.0,
    rate_source: Annotated[str, typer.Option(help="ewma5m: per_second (five-minute rate); "
                                             "delta: count change per interval.")] = "ewma5m",
) -> None:
    """Watch a keyspace and ALTER its TWCS and UCS tables to the rules' optimal options as
    the TTL and read share change; Ctrl-C or SIGTERM stops it cleanly.

    Example: casslab tune --keyspace iot --name demo --interval 30s --audit tune.jsonl

    Example: casslab tune --keyspace iot --hosts 10.0.0.5,10.0.0.6 --rules rules.yaml --dry-run
    """
    if ctx.invoked_subcommand is not None:
        return
    # The tuner is imported by the daemon only (`tune rules` and `tune learn` don't run it).
    from casslab.tune.audit import AuditLog
    from casslab.tune.decide import Policy
    from casslab.tune.loop import SignalStop, Tuner, stop_on_signals
    from casslab.tune.observe import RATE_SOURCES

    stop = SignalStop()
    with errors_to_exit():
        if not keyspace:
            raise UsageError("--keyspace is required (the keyspace whose tables to tune)")
        if rate_source not in RATE_SOURCES:
            raise UsageError(f"--rate-source {rate_source}: use {' or '.join(RATE_SOURCES)}")
        if iterations is not None and iterations < 1:
            raise UsageError("--iterations must be >= 1")
        check_keyspace_name(keyspace)
        interval_s = parse_duration_s(interval, "--interval")
        if interval_s <= 0:
            raise UsageError(f"--interval: {interval} is not a time between iterations "
                             "(valid: > 0, e.g. 30s)")
        policy = Policy.of_options(parse_duration_s(min_interval, "--min-interval"),
                                   min_change, switch_margin)
        _check_time_scale(time_scale)
        if hosts is not None and name:
            raise UsageError("give --name (a lab) or --hosts (any cluster), not both")
        # The CQL client takes addresses; the port of a contact point is not used.
        contacts = None if hosts is None else [h for h, _ in parse_contact_points(hosts)]
        table = _rules(rules, interpolate, time_scale, bool(given(ctx, "time_scale")))
        with _client(name, contacts) as (cql, nodes), AuditLog(audit) as log, \
                stop_on_signals(stop):
            tuner = Tuner(cql, nodes, keyspace, table, policy=policy, dry_run=dry_run,
                          audit=log, rate_source=rate_source)
            err.print(f"tuning {keyspace} on {len(nodes)} node(s) every {interval_s:g} s "
                      f"with {table.source}" + (" (dry run)" if dry_run else ""),
                      highlight=False)

            def on_error(exc: CasslabError) -> None:
                err.print(f"[yellow]iteration failed:[/] {exc}", highlight=False)

            done = tuner.run(interval_s=interval_s, stop=stop,
                             iterations=1 if once else iterations,
                             on_step=lambda o: _print(o, tuner.iterations), on_error=on_error)
    err.print(f"stopped after {done} iteration(s)" + (" (signal)" if stop.is_set() else ""))


@app.command("rules")
def rules_cmd(
    time_scale: Annotated[float, typer.Option(help="Scale TTLs and windows (0.05: TTL 1 h -> "
                                              "3 min; valid 1/60 to 1).")] = 1.0,
    interpolate: Annotated[bool, typer.Option(help="Mark the table for interpolation.")]
    = False,
) -> None:
    """Print the default rules (seed 003) as a rules file to start from.

    Example: casslab tune rules --time-scale 0.05 > rules.yaml
    """
    from casslab.tune.rules import dump_rules, seed003_rules

    with errors_to_exit():
        _check_time_scale(time_scale)
        print(dump_rules(seed003_rules(interpolate=interpolate, time_scale=time_scale)), end="")


def _check_time_scale(time_scale: float) -> None:
    from casslab.tune.rules import check_time_scale

    check_time_scale(time_scale, "--time-scale")


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"{what} {text!r}: give integers like 1,3") from None


def _whole(text: str, what: str, unit_s: float, unit: str) -> tuple[int, ...]:
    """Durations like `1m,3m` as whole numbers of `unit` (TWCS and TTLs take integers)."""
    out = []
    for item in (v for v in text.split(",") if v.strip()):
        count = parse_duration_s(item, what) / unit_s
        if abs(count - round(count)) > 1e-9:
            raise UsageError(f"{what}: {item.strip()} is not a whole number of {unit}")
        out.append(round(count))
    return tuple(out)


def _floats(text: str, what: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"{what} {text!r}: give numbers like 0.03,0.3") from None


@app.command("learn")
def learn_cmd(
    output: Annotated[Path, typer.Option("--out", "-o", help="Rules file to write.")]
    = Path("tune-rules.yaml"),
    results: Annotated[Path | None, typer.Option(
        help="Campaign results directory; default results/tune-learn-<sweep digest>: the "
             "same sweep resumes there, another sweep gets its own.")] = None,
    windows: Annotated[str, typer.Option(help="TWCS window sizes, whole minutes, e.g. "
                                         "1m,3m.")] = "1m,3m",
    ttls: Annotated[str, typer.Option(help="Table TTLs, whole seconds, e.g. 2m,300s.")]
    = "120s,300s",
    read_shares: Annotated[str, typer.Option(help="Read shares (fractions).")] = "0.03,0.3",
    min_thresholds: Annotated[str, typer.Option(help="TWCS min_threshold levels.")] = "4",
    ucs: Annotated[str, typer.Option(
        help="Also sweep UCS scaling_parameters levels (e.g. T4,L4) and learn 'ucs:' points "
             "for UnifiedCompactionStrategy tables; empty: TWCS only.")] = "",
    trials: Annotated[int, typer.Option(help="Trials per cell.")] = 1,
    duration: Annotated[str, typer.Option(help="Length of a trial.")] = "45s",
    warmup: Annotated[str, typer.Option(
        help="Unrecorded load at the start of each trial (0s: none).")] = "10s",
    devices: Annotated[int, typer.Option(help="IoT devices.")] = 100,
    nodes: Annotated[int, typer.Option(help="Lab nodes.")] = 1,
    profile: Annotated[str, typer.Option(help="Lab hardware profile.")] = "host",
    lab_name: Annotated[str, typer.Option("--lab", help="Lab the campaign builds.")]
    = "tune-learn",
) -> None:
    """Sweep window sizes (and UCS scaling parameters with --ucs) x TTL x read share on a
    lab and write the rules table that is optimal on this hardware, with the measurements
    behind each point.

    Example: casslab tune learn --windows 1m,3m --ttls 2m,5m --read-shares 0.03,0.3 -o rules.yaml

    Example: casslab tune learn --windows 1m --ucs T4,L4 --ttls 5m --read-shares 0.1 -o rules.yaml
    """
    # The campaign runner behind learn is imported only by this command (start-up time).
    from casslab.tune.learn import LearnSpec, default_results, learn
    from casslab.tune.rules import dump_rules

    with errors_to_exit():
        ls = LearnSpec(windows_min=_whole(windows, "--windows", 60.0, "minutes"),
                       ttls_s=_whole(ttls, "--ttls", 1.0, "seconds"),
                       read_shares=_floats(read_shares, "--read-shares"),
                       min_thresholds=_ints(min_thresholds, "--min-thresholds"),
                       ucs_scaling=tuple(v.strip() for v in ucs.split(",") if v.strip()),
                       trials=trials, duration_s=parse_duration_s(duration, "--duration"),
                       warmup_s=parse_duration_s(warmup, "--warmup"), devices=devices,
                       nodes=nodes, profile=profile)

        def on_event(e: Event) -> None:
            if e.kind in ("plan", "trial-end", "lab", "message"):
                err.print(f"[{e.done}/{e.total}] {e.message}" if e.total else e.message,
                          highlight=False)

        results = results or default_results(ls)
        table = learn(ls, results, home=default_home(), cache=default_cache(),
                      lab_name=lab_name, on_event=on_event)
        output.write_text(dump_rules(table))
    for strategy, pts in table.points.items():
        for p in pts:
            best = p.measurements.get("best", {})
            setting = (f"UCS scaling_parameters {p.options['scaling_parameters']}"
                       if strategy == "ucs" else
                       f"TWCS window {p.options['compaction_window_size']} "
                       f"{p.options['compaction_window_unit']}, min_threshold "
                       f"{p.options['min_threshold']}")
            out.print(f"ttl {p.ttl_s:g} s, reads {p.read_share:.0%}: {setting} "
                      f"({best.get('ops_s')} ops/s, mean {best.get('mean_ms')} ms)",
                      highlight=False)
    out.print(f"rules written to {output}")
