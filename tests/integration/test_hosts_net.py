"""Link conditions across stand-in hosts: a 20 ms one-way delay between two hosts, set
over SSH with casslab-netem, is measured by `net check` across them, spares SSH, and
leaves no rule, qdisc or daemon once cleared; `casslab net set/show/check/clear
--inventory` do the same through the hosts testbed. Mode tc runs where the kernel has netem
(not this machine's); elsewhere asking for it fails naming the host."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from casslab.net.spec import NetSpec
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts import inventory as inv
from casslab.testbed.hosts import links
from casslab.testbed.hosts.ssh import Fleet, HostError

sys.path.insert(0, str(Path(__file__).parent.parent))
from labtools import casslab

# timing: measures delays between stand-in hosts and that SSH is not delayed; run alone
# (make test runs these after the rest, one at a time).
pytestmark = [pytest.mark.integration, pytest.mark.timing]

NETEM = Path(__file__).resolve().parents[2] / "target" / "release" / "casslab-netem"

# One TCP connect from this host, timed: a closed port answers with a reset, so the
# time to ConnectionRefusedError is one round trip, like an accepted connect.
CONNECT_MS = ("import socket,time,sys\nt=time.perf_counter()\ns=socket.socket()\n"
              "try: s.connect((sys.argv[1], int(sys.argv[2])))\n"
              "except ConnectionRefusedError: pass\n"
              "print((time.perf_counter()-t)*1000)")


@pytest.fixture(scope="module")
def inventory(ssh_hosts: SshHosts, tmp_path_factory: pytest.TempPathFactory) -> inv.Inventory:
    path = tmp_path_factory.mktemp("hostnet") / "hosts.yaml"
    path.write_text(yaml.safe_dump(ssh_hosts.ansible_inventory(nodes=2)))
    return inv.load(path)


async def _connect_ms(fleet: Fleet, src: inv.Host, dst: inv.Host, port: int) -> float:
    runs = [float((await fleet.run_on(
        src, f"python3 -c {shlex.quote(CONNECT_MS)} {dst.address} {port}")).stdout)
        for _ in range(3)]
    return min(runs)


async def _leftovers(fleet: Fleet, host: inv.Host) -> list[str]:
    out = await fleet.run_on(host, "iptables -t mangle -S; tc qdisc show dev "
                                   f"{host.data_interface}; ls {host.install_root}/net; "
                                   "ps -eo pid,args | grep '[b]in/casslab-netem run' || true")
    left = [line for line in out.stdout.splitlines()
            if "CASSLAB" in line or "htb" in line or line in ("state.json", "netem.pid",
                                                              "tc-device")
            or ("casslab-netem" in line and host.install_root in line)]
    return left


def test_a_delay_between_two_hosts_is_measured_spares_ssh_and_clears(
        ssh_hosts: SshHosts, inventory: inv.Inventory) -> None:
    a, b = inventory.nodes
    spec = NetSpec(links=((f"{a.name}-{b.name}", {"delay_ms": 20}),))

    async def go() -> tuple[links.HostsNetState, list[object], float, float, list[str]]:
        async with Fleet(inventory.hosts, known_hosts=ssh_hosts.known_hosts) as fleet:
            for h in inventory.hosts:
                await fleet.push(NETEM, f"{h.install_root}/bin/casslab-netem", hosts=[h],
                                 mode=0o755)
            state = await links.apply_hosts(fleet, inventory, spec, mode="netem")
            try:
                rows: list[object] = list(await links.check_hosts(fleet, state, pings=50))
                loaded = await links.load_hosts(fleet, inventory)
                assert loaded is not None and loaded.links == state.links
                ssh_ms = await _connect_ms(fleet, a, b, b.port)
                data_ms = await _connect_ms(fleet, a, b, 47999)
            finally:
                await links.clear_hosts(fleet, inventory)
            left = [x for h in inventory.hosts for x in await _leftovers(fleet, h)]
            assert await links.load_hosts(fleet, inventory) is None
        return state, rows, ssh_ms, data_ms, left

    state, rows, ssh_ms, data_ms, left = asyncio.run(go())
    assert {h.mode for h in state.hosts.values()} == {"netem"}
    by_link = {(r.src, r.dst): r for r in rows}  # type: ignore[attr-defined]
    for link in ((a.name, b.name), (b.name, a.name)):
        row = by_link[link]
        assert row.rtt_configured_ms == 40.0
        assert row.rtt_p50_ms is not None and 40.0 <= row.rtt_p50_ms < 60.0, row
        assert row.loss_pct == 0.0, row
    assert data_ms >= 40.0, f"a data-plane connect took {data_ms:.1f} ms"
    assert ssh_ms < 10.0, f"SSH between the hosts was delayed: {ssh_ms:.1f} ms"
    assert left == [], f"left after clear: {left}"


def test_mode_tc_shapes_where_the_kernel_has_netem_else_fails_naming_the_host(
        ssh_hosts: SshHosts, inventory: inv.Inventory) -> None:
    a, b = inventory.nodes
    spec = NetSpec(links=((f"{a.name}-{b.name}", {"delay_ms": 5}),))

    async def go() -> tuple[str, str, str, list[str]]:
        async with Fleet(inventory.hosts, known_hosts=ssh_hosts.known_hosts) as fleet:
            kernel = await links.detect_mode(fleet, a)
            message = qdisc = ""
            try:
                await links.apply_hosts(fleet, inventory, spec, mode="tc")
                qdisc = (await fleet.run_on(a, f"tc qdisc show dev {a.data_interface}")).stdout
                await links.clear_hosts(fleet, inventory)
            except HostError as exc:
                message = str(exc)
            left = [x for h in inventory.hosts for x in await _leftovers(fleet, h)]
        return kernel, message, qdisc, left

    kernel, message, qdisc, left = asyncio.run(go())
    if kernel == "tc":
        assert "netem" in qdisc and "delay 5ms" in qdisc, qdisc
    else:
        assert message.startswith((f"{a.name} ", f"{b.name} ")), message
        assert "\n" not in message and "qdisc" in message.lower(), message
    assert left == []


def test_the_net_commands_on_an_inventory_set_show_check_and_clear_through_the_testbed(
        ssh_hosts: SshHosts, inventory: inv.Inventory) -> None:
    a, b = inventory.nodes

    async def push() -> None:
        async with Fleet(inventory.hosts, known_hosts=ssh_hosts.known_hosts) as fleet:
            await asyncio.gather(*(fleet.push(NETEM, f"{h.install_root}/bin/casslab-netem",
                                              hosts=[h], mode=0o755) for h in inventory.hosts))

    asyncio.run(push())
    on = ["--inventory", inventory.source, "--known-hosts", str(ssh_hosts.known_hosts)]
    applied = casslab("net", "set", *on, "--link", f"{a.name}-{b.name}:delay=20ms")
    try:
        assert applied.returncode == 0, applied.stderr
        assert f"{a.address} -> {b.address}" in applied.stdout and "enforced by" in applied.stdout
        shown = casslab("net", "show", *on)
        assert shown.returncode == 0, shown.stderr
        assert f"hosts of {inventory.source}: link conditions" in shown.stdout
        assert f"{b.address} -> {a.address}" in shown.stdout
        checked = casslab("net", "check", *on, "--pings", "30")
        assert checked.returncode == 0, checked.stderr
        assert "configured vs measured" in checked.stdout
    finally:
        cleared = casslab("net", "clear", *on)
    assert cleared.returncode == 0, cleared.stderr
    assert casslab("net", "show", *on).stdout.strip().endswith(
        "no network emulation (clean links)")
