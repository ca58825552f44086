"""Apply, change, show and remove link conditions of a lab (library API).

State lives in `<lab_dir>/net.json` (configured table, daemon pid, settings) and
`<lab_dir>/net/` (daemon config, log, counters), so separate `casslab net` calls see
and change the same emulation. Everything on the packet path (iptables chain, htb
qdisc, the daemon process) lives in the lab's namespace and dies with it.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casslab.core.errors import CommandError, PrerequisiteError
from casslab.net import daemon, identity, rules
from casslab.net.errors import NetError, NetSpecError
from casslab.net.linkprofiles import LinkConditions
from casslab.net.spec import CLIENT, NetSpec, Table
from casslab.system import netns as netns_mod
from casslab.system.process import run

STATE_FILE = "net.json"
NET_DIR = "net"
CLIENT_ADDRESS = "127.0.0.1"
DEFAULT_CC = "cubic"
DEFAULT_QUEUE = 0
MTU = 1500


@dataclass(frozen=True)
class Routed:
    """A lab whose endpoints (nodes and client) each have a namespace of their own behind
    a veth, their packets routed through the emulation's namespace (rules.py, routed
    mode): runtimes netns and lxc."""

    client_address: str
    # Where rates shape: the device every routed packet leaves by (the lab's bridge).
    device: str
    # `nsenter --net` paths of the endpoints' own stacks: TCP (congestion control,
    # segmentation offloads) is set where the sender's socket lives.
    endpoints: tuple[str, ...] = ()
    # The endpoints' interface towards the router.
    interface: str = "eth0"


@dataclass
class NetState:
    """What is configured for a lab's links, and the daemon that enforces it."""

    netns: str
    addresses: dict[str, str]
    table: Table
    # node name -> cgroup v2 identity path, for the nodes whose identity cgroup existed
    # when the rules were installed (see rules.py: how packets are told apart).
    identities: dict[str, str] = field(default_factory=dict)
    cc: str = DEFAULT_CC
    seed: int = 1
    queue_num: int = DEFAULT_QUEUE
    daemon: daemon.DaemonInfo | None = None
    warnings: list[str] = field(default_factory=list)
    routed: Routed | None = None

    @property
    def node_count(self) -> int:
        return len(self.addresses) - 1

    def to_json(self) -> dict[str, Any]:
        return {
            "netns": self.netns,
            "addresses": self.addresses,
            "links": [{"src": s, "dst": d, **c.to_dict()} for (s, d), c in self.table.items()],
            "identities": self.identities,
            "cc": self.cc,
            "seed": self.seed,
            "queue_num": self.queue_num,
            "daemon": None if self.daemon is None else {
                "pid": self.daemon.pid, "start_ticks": self.daemon.start_ticks,
                "realtime": self.daemon.realtime},
            "warnings": self.warnings,
            "routed": None if self.routed is None else {
                "client_address": self.routed.client_address, "device": self.routed.device,
                "endpoints": list(self.routed.endpoints),
                "interface": self.routed.interface},
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> NetState:
        table = {(str(x["src"]), str(x["dst"])): LinkConditions(
            **{k: v for k, v in x.items() if k not in ("src", "dst")}) for x in raw["links"]}
        d = raw.get("daemon")
        r = raw.get("routed")
        return cls(netns=raw["netns"], addresses=dict(raw["addresses"]), table=table,
                   identities=dict(raw.get("identities", {})),
                   cc=raw.get("cc", DEFAULT_CC), seed=int(raw.get("seed", 1)),
                   queue_num=int(raw.get("queue_num", DEFAULT_QUEUE)),
                   daemon=daemon.DaemonInfo(**d) if d else None,
                   warnings=list(raw.get("warnings", [])),
                   routed=None if not r else Routed(
                       str(r["client_address"]), str(r["device"]),
                       tuple(str(e) for e in r.get("endpoints", [])),
                       str(r.get("interface", "eth0"))))


def addresses_for(node_addresses: list[str],
                  client_address: str = CLIENT_ADDRESS) -> dict[str, str]:
    return {CLIENT: client_address,
            **{f"node{i}": a for i, a in enumerate(node_addresses, start=1)}}


def load(lab_dir: Path) -> NetState | None:
    """The lab's emulation state, or None when no conditions were ever applied."""
    path = lab_dir / STATE_FILE
    try:
        return NetState.from_json(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NetError(f"network state {path} is unreadable: {exc}") from exc


def _save(lab_dir: Path, state: NetState) -> None:
    path = lab_dir / STATE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.to_json(), indent=2))
    os.replace(tmp, path)


@contextmanager
def _net_lock(lab_dir: Path) -> Iterator[None]:
    """Serialise `net` changes of one lab (blocking: changes are quick)."""
    (lab_dir / NET_DIR).mkdir(parents=True, exist_ok=True)
    fd = os.open(lab_dir / NET_DIR / ".lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def apply(lab_dir: Path, netns: str, node_addresses: list[str], spec: NetSpec, *,
          replace: bool = True, system_name: str | None = None,
          routed: Routed | None = None) -> NetState:
    """Apply `spec` to the lab's links and return the resulting state.

    `replace=True` starts from clean links (what `lab up --net PROFILE` wants);
    `replace=False` changes only what `spec` names, on top of the current table
    (what `casslab net set` does). Sets up the namespace for realism (lo MTU 1500,
    TSO/GSO off, congestion control, client source address 127.0.0.1), writes the
    daemon config, starts or reloads casslab-netem, installs iptables and tc rules.

    Node i's traffic is recognised by its cgroup v2 identity cgroup
    `casslab/<system_name>/node<i>` (`system_name` defaults to the namespace name
    without its `casslab-` prefix); a node without one gets a warning, and the
    conditions of links it opens do not apply. With `routed` (runtimes netns, lxc),
    `netns` is the namespace that routes between the endpoints, and addresses alone
    tell links apart (see rules.py).

    Raises NetSpecError for bad input, NetError when the namespace is missing or a
    step fails, PrerequisiteError when iptables, tc, ethtool or the daemon are missing.
    """
    if not netns_mod.exists(netns):
        raise NetError(f"network namespace {netns} does not exist (is the lab up?)")
    if not node_addresses:
        raise NetSpecError("node_addresses: a lab needs at least one node address")
    with _net_lock(lab_dir):
        old = load(lab_dir)
        if old is not None and old.netns != netns:
            old = None
        base = None if replace or old is None else old.table
        table = spec.resolve(len(node_addresses), base)
        sys_name = system_name or identity.system_name_of(netns)
        state = NetState(
            netns=netns, table=table, routed=routed,
            addresses=addresses_for(node_addresses, routed.client_address if routed
                                    else CLIENT_ADDRESS),
            identities={} if routed else identity.existing(sys_name, len(node_addresses)),
            cc=spec.cc or (old.cc if old and not replace else DEFAULT_CC),
            seed=spec.seed if spec.seed is not None else (old.seed if old else 1),
            daemon=old.daemon if old and old.daemon and old.daemon.alive() else None,
        )
        if state.cc == "bbr" and any(c.loss_pct > 0 for c in table.values()):
            state.warnings.append("BBR ignores random loss: lossy links barely slow TCP "
                                  "(use cc cubic for textbook loss response)")
        if routed is None:
            _warn_missing_identities(state, sys_name)
            _prepare_namespace(state)
        else:
            _prepare_endpoints(state, routed)
        _apply_packet_path(lab_dir, state)
        _save(lab_dir, state)
        return state


def set_links(lab_dir: Path, spec: NetSpec, node_addresses: list[str] | None = None,
              netns: str | None = None) -> NetState:
    """Change conditions of a lab that has emulation state (merging into its table)."""
    old = load(lab_dir)
    if old is None and (node_addresses is None or netns is None):
        raise NetError(f"no network emulation state in {lab_dir}")
    ns = netns or (old.netns if old else "")
    addrs = node_addresses or ([old.addresses[f"node{i}"] for i in range(1, old.node_count + 1)]
                               if old else [])
    return apply(lab_dir, ns, addrs, spec, replace=False, routed=old.routed if old else None)


def clear(lab_dir: Path, netns: str | None = None) -> None:
    """Remove every condition: stop the daemon, drop our rules and qdisc, forget state.

    Safe when the namespace is already gone (then only the state is removed).
    """
    with _net_lock(lab_dir):
        state = load(lab_dir)
        ns = netns or (state.netns if state else None)
        if state and state.daemon:
            daemon.stop(state.daemon)
        if ns and netns_mod.exists(ns):
            _remove_rules(ns, state.routed.device if state and state.routed else rules.DEV)
        (lab_dir / STATE_FILE).unlink(missing_ok=True)


def is_active(state: NetState) -> bool:
    """True when the namespace exists and, if needed, the daemon is alive."""
    if not netns_mod.exists(state.netns):
        return False
    needs = any(c.needs_daemon for c in state.table.values())
    return not needs or (state.daemon is not None and state.daemon.alive())


def stats(lab_dir: Path) -> dict[str, Any] | None:
    """The daemon's last counters (written about once a second), if any."""
    try:
        raw: dict[str, Any] = json.loads((lab_dir / NET_DIR / "netem-stats.json").read_text())
        return raw
    except (OSError, ValueError):
        return None


# ---- steps ---------------------------------------------------------------------------

def _ns(state: NetState, *cmd: str, input_: str | None = None) -> str:
    full = [*netns_mod.exec_prefix(state.netns), *cmd]
    try:
        if input_ is None:
            return run(full)
        proc = subprocess.run(full, input=input_, capture_output=True, text=True,
                              timeout=60, check=False)
        if proc.returncode != 0:
            raise CommandError(full, proc.returncode, proc.stderr)
        return proc.stdout
    except FileNotFoundError as exc:
        raise PrerequisiteError(f"`{cmd[0]}` not found: install iproute2, iptables, "
                                "ethtool") from exc
    except CommandError as exc:
        raise NetError(f"in namespace {state.netns}: {exc}") from exc


def _prepare_namespace(state: NetState) -> None:
    """Loopback that behaves like a NIC, the chosen congestion control, and clients
    that send from 127.0.0.1 (by default the kernel picks the node's own address as the
    source of a connection to it, which would hide client links among node links)."""
    _ns(state, "ip", "link", "set", "lo", "mtu", str(MTU))
    _ns(state, "ethtool", "-K", "lo", "tso", "off", "gso", "off")
    available = _ns(state, "cat", "/proc/sys/net/ipv4/tcp_available_congestion_control")
    if state.cc not in available.split():
        with suppress(CommandError, FileNotFoundError):
            run(["modprobe", f"tcp_{state.cc}"])
    _allow_congestion_control(state)
    try:
        _ns(state, "sysctl", "-q", "-w", f"net.ipv4.tcp_congestion_control={state.cc}")
    except NetError as exc:
        raise NetError(f"congestion control '{state.cc}' cannot be set in {state.netns} "
                       f"(available: {available.strip()}): {exc}") from exc
    for name, addr in state.addresses.items():
        if name != CLIENT:
            _ns(state, "ip", "route", "replace", "local", addr, "dev", "lo", "table", "local",
                "proto", "kernel", "scope", "host", "src", CLIENT_ADDRESS)


def _prepare_endpoints(state: NetState, routed: Routed) -> None:
    """In each endpoint's own stack: the chosen congestion control, and no segmentation
    offloads, or one "packet" held or dropped is a 64 KB burst."""
    _load_congestion_control(state.cc)
    _allow_congestion_control(state)
    for path in routed.endpoints:
        if not Path(path).exists():
            continue  # a node not running now (e.g. a stopped container)
        enter = netns_mod.enter_prefix(Path(path))
        try:
            run([*enter, "sysctl", "-q", "-w", f"net.ipv4.tcp_congestion_control={state.cc}"])
            run([*enter, "ethtool", "-K", routed.interface, "tso", "off", "gso", "off"])
        except FileNotFoundError as exc:
            raise PrerequisiteError("`nsenter`, `sysctl` or `ethtool` not found: install "
                                    "util-linux, procps, ethtool") from exc
        except CommandError as exc:
            raise NetError(f"cannot set up endpoint stack {path}: {exc}") from exc


def _load_congestion_control(cc: str) -> None:
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    with suppress(OSError):
        if cc in available.read_text().split():
            return
    with suppress(CommandError, FileNotFoundError):
        run(["modprobe", f"tcp_{cc}"])


ALLOWED_CC = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def _allow_congestion_control(state: NetState) -> None:
    """A namespace other than the host's may only pick a congestion control that the
    host's tcp_allowed_congestion_control lists (else EPERM): add it there if missing.
    This host-wide list only says what unprivileged sockets may choose."""
    try:
        allowed = ALLOWED_CC.read_text().split()
    except OSError:
        return
    if state.cc in allowed:
        return
    try:
        ALLOWED_CC.write_text(" ".join([*allowed, state.cc]))
    except OSError as exc:
        raise NetError(f"cannot allow congestion control '{state.cc}' in {ALLOWED_CC}: "
                       f"{exc}") from exc
    state.warnings.append(f"added '{state.cc}' to the host's {ALLOWED_CC} (needed to "
                          "choose it inside a namespace)")


def _warn_missing_identities(state: NetState, sys_name: str) -> None:
    missing = [f"node{i}" for i in range(1, state.node_count + 1)
               if f"node{i}" not in state.identities]
    conditioned = any((c.needs_daemon or c.rate_mbit is not None)
                      and CLIENT not in (s, d) for (s, d), c in state.table.items())
    if missing and conditioned:
        paths = ", ".join(identity.node_paths(sys_name, state.node_count)[n] for n in missing)
        state.warnings.append(
            f"no cgroup v2 identity cgroup for {', '.join(missing)} ({paths}): connections "
            "these nodes open are not recognised, so their node<->node conditions do not "
            "apply (and, sent from 127.0.0.1, they count as client traffic)")


def _apply_packet_path(lab_dir: Path, state: NetState) -> None:
    net_dir = lab_dir / NET_DIR
    net_dir.mkdir(parents=True, exist_ok=True)
    cfg = rules.daemon_config(state.table, state.addresses, state.seed)
    tmp = net_dir / "netem.json.tmp"
    tmp.write_text(json.dumps(cfg, indent=1))
    os.replace(tmp, net_dir / "netem.json")
    if cfg["links"]:
        if state.daemon is not None and state.daemon.alive():
            daemon.reload(state.daemon)
        else:
            state.daemon = daemon.start(state.netns, net_dir, state.queue_num)
            if not state.daemon.realtime:
                state.warnings.append("chrt -f 50 not permitted: casslab-netem runs at normal "
                                      "priority (delays less precise under load)")
    routed = state.routed
    restore = (rules.routed_iptables_restore(state.table, state.addresses, state.queue_num)
               if routed else rules.iptables_restore(state.table, state.addresses,
                                                      state.queue_num, state.identities))
    _ns(state, "iptables-restore", "--noflush", input_=restore)
    # PREROUTING: ours first. OUTPUT: after the lab's CASSLAB_ID owner marks (appended
    # at `lab up`), so a new node connection is already marked when it gets here.
    hooks = [("PREROUTING", rules.CHAIN, ["-I", "PREROUTING", "1"])]
    if routed is None:
        hooks.append(("OUTPUT", rules.OUT_CHAIN, ["-A", "OUTPUT"]))
    for hook, chain, add in hooks:
        try:
            _ns(state, "iptables", "-t", "mangle", "-C", hook, "-j", chain)
        except NetError:
            _ns(state, "iptables", "-t", "mangle", *add, "-j", chain)
    if not cfg["links"] and state.daemon is not None:
        daemon.stop(state.daemon)
        state.daemon = None
    dev = routed.device if routed else rules.DEV
    _delete_qdisc(state.netns, dev)
    batch = rules.tc_batch(state.table, state.addresses, dev)
    if batch:
        path = net_dir / "tc.batch"
        path.write_text("\n".join(batch) + "\n")
        _ns(state, "tc", "-batch", str(path))


def _delete_qdisc(ns: str, dev: str) -> None:
    run([*netns_mod.exec_prefix(ns), "tc", "qdisc", "del", "dev", dev, "root"],
        check=False)


def _remove_rules(ns: str, dev: str) -> None:
    ipt = [*netns_mod.exec_prefix(ns), "iptables", "-t", "mangle"]
    for hook, chain in (("PREROUTING", rules.CHAIN), ("OUTPUT", rules.OUT_CHAIN)):
        run([*ipt, "-D", hook, "-j", chain], check=False)
    listing = run([*ipt, "-S"], check=False)
    ours = [line.split()[1] for line in listing.splitlines()
            if line.startswith("-N ") and line.split()[1].startswith(rules.CHAIN_PREFIX)]
    for chain in ours:  # flush all first: OUT_CHAIN jumps to the others
        run([*ipt, "-F", chain], check=False)
    for chain in ours:
        run([*ipt, "-X", chain], check=False)
    _delete_qdisc(ns, dev)
