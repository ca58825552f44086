"""`casslab net ...`: emulate links of a running lab (delay, jitter, loss, bandwidth)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from casslab import net
from casslab.cli.common import err, errors_to_exit, open_testbed, out, refuse_given
from casslab.core.units import parse_duration_s, parse_fraction, parse_rate_bit_s
from casslab.net.linkprofiles import (
    BUILTIN_LINK_PROFILES,
    LinkConditions,
    load_link_profiles,
    parse_burst,
)
from casslab.net.spec import CONGESTION_CONTROLS, NetSpec, link_label

if TYPE_CHECKING:
    from casslab.testbed.base import LinkTable

app = typer.Typer(
    help="Network emulation of a lab: link profiles and per-link delay, jitter, loss and "
    "bandwidth inside the lab's namespace. Delays are one-way, each direction.",
    no_args_is_help=True,
)

NameOpt = Annotated[str, typer.Option("--name", "-n", help="Lab name.")]
InventoryOpt = Annotated[Path | None, typer.Option(
    help="Ansible inventory: the links between its hosts (over SSH) instead of a lab's.")]
KnownHostsOpt = Annotated[Path | None, typer.Option(
    help="known_hosts file of the inventory's hosts (default: ~/.ssh/known_hosts).")]


def _fmt_ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}" if v < 10 else f"{v:.1f}"


def _fmt_cond(c: LinkConditions) -> list[str]:
    return [
        _fmt_ms(c.delay_ms) if c.delay_ms else "0",
        _fmt_ms(c.jitter_ms) if c.jitter_ms else "0",
        (f"{c.loss_pct:g}" + (f" (burst {c.loss_burst:g})" if c.loss_burst > 1 else ""))
        if c.loss_pct else "0",
        "unlimited" if c.rate_mbit is None
        else f"{c.rate_mbit:g}" + (f" shared ({c.medium})" if c.shared else ""),
    ]


@app.command()
def profiles(
    profiles_file: Annotated[Path | None, typer.Option(help="Also show profiles from this "
                                                       "YAML (profiles: {name: {...}}).")]
    = None,
) -> None:
    """List link profiles with their values (one-way, each direction) and sources.

    Example: casslab net profiles --profiles-file my-links.yaml
    """
    with errors_to_exit():
        items = dict(BUILTIN_LINK_PROFILES)
        if profiles_file:
            items.update(load_link_profiles(profiles_file))
    table = Table(title="link profiles (one-way values, applied to each direction)")
    for col in ("name", "delay (ms)", "jitter (ms)", "loss (%)", "rate (Mbit/s)", "source"):
        table.add_column(col, overflow="fold")
    for p in items.values():
        table.add_row(p.name, *_fmt_cond(p.conditions), p.source)
    out.print(table)


@app.command("set")
def set_(
    ctx: typer.Context,
    name: NameOpt = "default",
    profile: Annotated[str | None, typer.Option(help="Give every link this profile first "
                                                "(see `casslab net profiles`).")] = None,
    profiles_file: Annotated[Path | None, typer.Option(help="YAML file of user profiles.")]
    = None,
    spec: Annotated[Path | None, typer.Option(help="YAML link table (profile, all, "
                                              "client_delay_ms, node_delay_ms, links, cc, "
                                              "seed).")] = None,
    delay: Annotated[str | None, typer.Option(help="One-way delay for every link, e.g. 10ms.")]
    = None,
    jitter: Annotated[str | None, typer.Option(help="Jitter (+-) for every link, e.g. 2ms.")]
    = None,
    loss: Annotated[str | None, typer.Option(help="Loss for every link, e.g. 1%.")] = None,
    burst: Annotated[str | None, typer.Option(help="Mean loss burst in packets (1 = random).")]
    = None,
    rate: Annotated[str | None, typer.Option(help="Bandwidth for every link, e.g. 10mbit "
                                             "(or 'unlimited').")] = None,
    client_delay: Annotated[str | None, typer.Option(
        help="Seed 002's x,y,z: one-way delay client<->node1..N, e.g. 10ms,20ms,30ms.")] = None,
    node_delay: Annotated[str | None, typer.Option(
        help="Seed 002's a,b,c: one-way delay of node pairs 1-2, 2-3, 1-3 (N nodes: by ring "
        "distance), e.g. 5ms,5ms,10ms.")] = None,
    link: Annotated[list[str] | None, typer.Option(
        help="One link: LINK:field=value,... with LINK A-B (both ways), A-to-B (one way) or "
        "all, fields delay, jitter, loss, burst, rate, profile. Repeatable.")] = None,
    cc: Annotated[str | None, typer.Option(help="TCP congestion control in the namespace: "
                                           + ", ".join(CONGESTION_CONTROLS)
                                           + " (default cubic; BBR ignores random loss).")]
    = None,
    seed: Annotated[int | None, typer.Option(help="Seed of loss and jitter draws.")] = None,
    replace: Annotated[bool, typer.Option(help="Start from clean links instead of changing "
                                          "the current ones.")] = False,
    inventory: Annotated[Path | None, typer.Option(
        help="Ansible inventory: set the links between its hosts (over SSH) instead of a "
        "lab's; links may name hosts (pi1-pi2). Always starts from clean links.")] = None,
    known_hosts: KnownHostsOpt = None,
) -> None:
    """Set link conditions of a running lab; only what you name changes.

    Examples:
      casslab net set --name edge --profile wifi
      casslab net set --name edge --client-delay 10ms,20ms,30ms --node-delay 5ms,5ms,10ms
      casslab net set --name edge --link node1-node2:delay=20ms,loss=1%,burst=3 --cc bbr
      casslab net set --name edge --link client-to-node3:profile=4g
      casslab net set --inventory hosts.yaml --link pi1-pi2:delay=20ms
    """
    with errors_to_exit():
        _check_units(delay=delay, jitter=jitter, loss=loss, rate=rate, burst=burst,
                     client_delay=client_delay, node_delay=node_delay)
        if inventory is not None:
            refuse_given(ctx, ("name", "replace"), "not with --inventory (the links between "
                         "its hosts are set, always from clean links)")
        testbed = open_testbed(name, inventory=inventory, known_hosts=known_hosts)
        try:
            # Everything the user gave is checked before the testbed is looked at; link
            # names against its endpoints after.
            links = [testbed.parse_link(x) for x in link or []]
            request = NetSpec.from_yaml(spec) if spec else NetSpec()
            all_fields: dict[str, Any] = {k: v for k, v in (
                ("delay", delay), ("jitter", jitter), ("loss", loss), ("burst", burst),
                ("rate", rate)) if v is not None}
            request = testbed.checked(request.merged(NetSpec(
                profile=profile, profiles_file=profiles_file, all=all_fields,
                client_delay_ms=client_delay, node_delay_ms=node_delay,
                links=tuple(links), cc=cc, seed=seed)))
            table = testbed.apply_links(request, replace=replace, link_options=link or [])
        finally:
            testbed.close()
    _print_links(table)


def _check_units(**options: str | None) -> None:
    """Refuse a bare number or unknown unit in an option, naming the option (--delay)."""
    for key, value in options.items():
        if value is None:
            continue
        opt = "--" + key.replace("_", "-")
        if key == "loss":
            parse_fraction(value, opt)
        elif key == "burst":
            parse_burst(value, opt)
        elif key == "rate":
            if value.lower() not in ("none", "unlimited"):
                parse_rate_bit_s(value, opt)
        else:  # delay, jitter and the comma lists of delays
            for item in value.split(","):
                parse_duration_s(item, opt)


@app.command()
def show(ctx: typer.Context, name: NameOpt = "default", inventory: InventoryOpt = None,
         known_hosts: KnownHostsOpt = None) -> None:
    """Print the configured conditions of every directed link of a lab, or with
    --inventory of the links between an inventory's hosts.

    Examples:
      casslab net show --name edge
      casslab net show --inventory hosts.yaml
    """
    with errors_to_exit():
        if inventory is not None:
            refuse_given(ctx, ("name",), "not with --inventory (the links between its hosts "
                         "are shown)")
        testbed = open_testbed(name, inventory=inventory, known_hosts=known_hosts)
        try:
            table = testbed.show_links()
            where = testbed.where()
        finally:
            testbed.close()
    if table is None:
        out.print(f"{where}: no network emulation (clean links)")
        return
    _print_links(table)


def _print_links(table: LinkTable) -> None:
    for w in table.warnings:
        err.print(f"[yellow]warning:[/] {w}", highlight=False)
    shown = Table(title=table.title)
    for col in ("link", "addresses", "delay (ms)", "jitter (ms)", "loss (%)",
                "rate (Mbit/s)"):
        shown.add_column(col)
    for row in table.rows:
        shown.add_row(row.label, row.addresses, *_fmt_cond(row.conditions))
    out.print(shown)
    for note in table.notes:
        out.print(note)


@app.command()
def check(
    ctx: typer.Context,
    name: NameOpt = "default",
    link: Annotated[list[str] | None, typer.Option(help="Only these links (A-B, A-to-B); "
                                                   "repeatable.")] = None,
    pings: Annotated[int, typer.Option(help="Round trips per link pair.")] = 200,
    loss_packets: Annotated[int, typer.Option(help="UDP packets per link for loss (0: skip).")]
    = 2000,
    bandwidth: Annotated[bool, typer.Option(help="Measure TCP goodput of rate-limited "
                                            "links.")] = True,
    bandwidth_seconds: Annotated[float, typer.Option(help="Seconds per bandwidth probe.")]
    = 2.0,
    inventory: InventoryOpt = None,
    known_hosts: KnownHostsOpt = None,
) -> None:
    """Measure every link (round trip p50/p99, one-way delay, loss, bandwidth) and print
    it next to the configured values. With --inventory: the links between real hosts
    (round trip and loss per direction; one-way delay and bandwidth are not measured).

    Examples:
      casslab net check --name edge --link client-node1 --loss-packets 10000
      casslab net check --inventory hosts.yaml
    """
    with errors_to_exit():
        if inventory is not None:
            refuse_given(ctx, ("name", "loss_packets", "bandwidth", "bandwidth_seconds"),
                         "not with --inventory (between hosts, round trip and loss are "
                         "measured with --pings; not a lab's links, nor bandwidth)")
        testbed = open_testbed(name, inventory=inventory, known_hosts=known_hosts)
        try:
            with err.status("probing links where their packets start"):
                rows = testbed.check_links(only=link, pings=pings, loss_packets=loss_packets,
                                           bandwidth=bandwidth, bandwidth_s=bandwidth_seconds)
        finally:
            testbed.close()
    _print_checks(testbed.where(), rows)


def _print_checks(what: str, rows: list[net.LinkCheck]) -> None:
    table = Table(title=f"{what}: configured vs measured")
    for col in ("link", "one-way ms\nset / p50", "RTT ms set", "RTT p50", "RTT p99",
                "loss %\nset / measured", "reordered", "rate Mbit/s\nset / wire",
                "TCP goodput\nMbit/s"):
        table.add_column(col, justify="right")
    for r in rows:
        c = r.configured
        table.add_row(
            link_label((r.src, r.dst)),
            f"{_fmt_ms(c.delay_ms)} / {_fmt_ms(r.one_way_p50_ms)}",
            _fmt_ms(r.rtt_configured_ms), _fmt_ms(r.rtt_p50_ms), _fmt_ms(r.rtt_p99_ms),
            f"{c.loss_pct:g} / " + ("-" if r.loss_pct is None else f"{r.loss_pct:.2f}"),
            "-" if r.reordered is None else str(r.reordered),
            ("unlimited" if c.rate_mbit is None else f"{c.rate_mbit:g}") + " / "
            + ("-" if r.wire_rate_mbit is None else f"{r.wire_rate_mbit:.1f}"),
            "-" if r.rate_mbit is None else f"{r.rate_mbit:.1f}",
        )
    out.print(table)


@app.command()
def clear(ctx: typer.Context, name: NameOpt = "default", inventory: InventoryOpt = None,
          known_hosts: KnownHostsOpt = None) -> None:
    """Remove every link condition of a lab (stops casslab-netem, drops rules and queues),
    or with --inventory of every host in an inventory.

    Examples:
      casslab net clear --name edge
      casslab net clear --inventory hosts.yaml
    """
    with errors_to_exit():
        if inventory is not None:
            refuse_given(ctx, ("name",), "not with --inventory (every host of the inventory "
                         "is cleared)")
        testbed = open_testbed(name, inventory=inventory, known_hosts=known_hosts)
        try:
            testbed.clear_links()
        finally:
            testbed.close()
    out.print(f"{testbed.where()}: link conditions removed")
