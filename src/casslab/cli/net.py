"""`casslab net ...`: emulate links of a running lab (delay, jitter, loss, bandwidth)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.table import Table

from casslab import net
from casslab.cli.common import err, errors_to_exit, open_lab, out, refuse_given
from casslab.core.errors import LabStateError, UsageError
from casslab.core.units import parse_duration_s, parse_fraction, parse_rate_bit_s
from casslab.net.profiles import (
    BUILTIN_PROFILES,
    LinkConditions,
    load_profiles_file,
    parse_burst,
)
from casslab.net.spec import CONGESTION_CONTROLS, NetSpec, link_label, parse_link_option

if TYPE_CHECKING:
    from casslab.hosts.inventory import Inventory
    from casslab.hosts.ssh import Fleet
    from casslab.lab.state import LabState

T = TypeVar("T")

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


def _on_hosts(path: Path, known_hosts: Path | None,
              work: Callable[[Fleet, Inventory], Awaitable[T]]) -> T:
    """`work` with one SSH connection to each host of the inventory that has a role."""
    import asyncio

    from casslab.hosts import inventory as inv
    from casslab.hosts.ssh import Fleet

    hosts = inv.load(path)

    async def go() -> T:
        async with Fleet([h for h in hosts.hosts if h.roles],
                         known_hosts=known_hosts) as fleet:
            return await work(fleet, hosts)

    return asyncio.run(go())


def _lab_state(name: str) -> LabState:
    state = open_lab(name).state()
    if not state.netns:
        raise LabStateError(f"lab '{name}' has no network namespace (made with --no-netns): "
                            "network emulation needs the lab's own namespace")
    return state


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
        items = dict(BUILTIN_PROFILES)
        if profiles_file:
            items.update(load_profiles_file(profiles_file))
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
        hosts = None
        if inventory is not None:
            refuse_given(ctx, ("name", "replace"), "not with --inventory (the links between "
                         "its hosts are set, always from clean links)")
            from casslab.hosts.inventory import load
            from casslab.testbed.hostrules import translate_link_option

            hosts = load(inventory)
        # Everything the user gave is checked before the lab is looked up; link names
        # against the lab's size after. Links may name hosts: their form is checked as
        # the table's names, and they stay as given until `checked_for_hosts`.
        links = [parse_link_option(x, None) if hosts is None else
                 (x.partition(":")[0].strip(),
                  parse_link_option(translate_link_option(x, hosts), None)[1])
                 for x in link or []]
        request = NetSpec.from_yaml(spec) if spec else NetSpec()
        all_fields: dict[str, Any] = {k: v for k, v in (("delay", delay), ("jitter", jitter),
                                                         ("loss", loss), ("burst", burst),
                                                         ("rate", rate)) if v is not None}
        request = request.merged(NetSpec(
            profile=profile, profiles_file=profiles_file, all=all_fields,
            client_delay_ms=client_delay, node_delay_ms=node_delay,
            links=tuple(links), cc=cc, seed=seed))
        if hosts is not None:
            from casslab.testbed.hostrules import checked_for_hosts

            request = checked_for_hosts(request, hosts)  # a --spec file may name hosts too
        request.check()
        if inventory is not None:
            _set_hosts(inventory, known_hosts, request)
            return
        lab = _lab_state(name)
        n = len(lab.nodes)
        for x in link or []:
            parse_link_option(x, n)
        from casslab.testbed import apply_net  # the lab stack loads with a lab only

        state = apply_net(lab, request, replace=replace)
    for w in state.warnings:
        err.print(f"[yellow]warning:[/] {w}", highlight=False)
    _print_table(name, state)


def _set_hosts(path: Path, known_hosts: Path | None, request: NetSpec) -> None:
    from casslab.testbed import hostnet

    async def work(fleet: Fleet, hosts: Inventory) -> hostnet.HostsNetState:
        return await hostnet.apply_hosts(fleet, hosts, request)

    state = _on_hosts(path, known_hosts, work)
    for w in state.warnings:
        err.print(f"[yellow]warning:[/] {w}", highlight=False)
    table = Table(title=f"hosts of {path}: link conditions")
    for col in ("link", "addresses", "delay ms", "jitter ms", "loss %", "rate Mbit/s"):
        table.add_column(col, justify="right")
    for k in state.links:
        table.add_row(k.label, f"{k.src.address} -> {k.dst.address}", *_fmt_cond(k.conditions))
    out.print(table)
    modes = ", ".join(f"{h.host}: {h.mode} on {h.device}" for h in state.hosts.values())
    out.print(f"enforced by {modes}")


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
def show(name: NameOpt = "default") -> None:
    """Print the configured conditions of every directed link of a lab.

    Example: casslab net show --name edge
    """
    with errors_to_exit():
        lab = _lab_state(name)
        state = net.load(Path(lab.directory))
    if state is None:
        out.print(f"lab {name}: no network emulation (clean loopback links)")
        return
    _print_table(name, state)
    if not net.is_active(state):
        err.print("[yellow]warning:[/] not enforced now (namespace or casslab-netem gone); "
                  f"apply again with `casslab net set --name {name} --replace ...`")


def _print_table(name: str, state: net.NetState) -> None:
    d = state.daemon
    table = Table(title=f"lab {name}: links (one-way), congestion control {state.cc}, "
                  f"seed {state.seed}, casslab-netem "
                  f"{'pid ' + str(d.pid) if d and d.alive() else 'not running'}")
    for col in ("link", "addresses", "delay (ms)", "jitter (ms)", "loss (%)",
                "rate (Mbit/s)"):
        table.add_column(col)
    for src, dst in state.table:
        c = state.table[(src, dst)]
        table.add_row(link_label((src, dst)),
                      f"{state.addresses[src]} -> {state.addresses[dst]}", *_fmt_cond(c))
    out.print(table)


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
    if inventory is not None:
        with errors_to_exit():
            refuse_given(ctx, ("name", "loss_packets", "bandwidth", "bandwidth_seconds"),
                         "not with --inventory (between hosts, round trip and loss are "
                         "measured with --pings; not a lab's links, nor bandwidth)")
        _print_checks(f"hosts of {inventory}", _check_hosts(inventory, known_hosts, link,
                                                             pings))
        return
    with errors_to_exit():
        # the prober: only this command imports it.
        from casslab.net.linkcheck import check, check_options

        check_options(links=link, pings=pings, loss_packets=loss_packets,
                      bandwidth_s=bandwidth_seconds)
        lab = _lab_state(name)
        state = net.load(Path(lab.directory))
        if state is None:
            raise LabStateError(f"lab '{name}' has no network emulation; set some with "
                                f"`casslab net set --name {name} --profile wifi`")
        from casslab.testbed import probe_endpoints

        with err.status("probing links where their packets start"):
            rows = check(state, links=link, pings=pings, loss_packets=loss_packets,
                         bandwidth=bandwidth, bandwidth_s=bandwidth_seconds,
                         endpoints=probe_endpoints(lab))
    _print_checks(f"lab {name}", rows)


def _check_hosts(path: Path, known_hosts: Path | None, link: list[str] | None,
                 pings: int) -> list[net.LinkCheck]:
    with errors_to_exit():
        if link:
            raise UsageError("--link: not with --inventory (every link between the hosts "
                             "is checked)")
        from casslab.testbed import hostnet

        async def work(fleet: Fleet, hosts: Inventory) -> list[net.LinkCheck]:
            state = await hostnet.load_hosts(fleet, hosts)
            if state is None:
                raise LabStateError(f"no link conditions on the hosts of {path}")
            return await hostnet.check_hosts(fleet, state, pings=pings)

        with err.status("probing links between the hosts"):
            return _on_hosts(path, known_hosts, work)


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
    if inventory is not None:
        with errors_to_exit():
            refuse_given(ctx, ("name",), "not with --inventory (every host of the inventory "
                         "is cleared)")
            from casslab.testbed import hostnet

            _on_hosts(inventory, known_hosts, hostnet.clear_hosts)
        out.print(f"hosts of {inventory}: link conditions removed")
        return
    with errors_to_exit():
        lab = _lab_state(name)
        from casslab.testbed import net_target

        net.clear(Path(lab.directory), net_target(lab).netns)
    out.print(f"lab {name}: network emulation removed")
