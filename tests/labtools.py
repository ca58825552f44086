"""Helpers shared by CLI and integration tests: run the real command, find leftovers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from casslab.cassandra.distribution import DEFAULT_VERSION, Distribution, resolve
from casslab.core.paths import default_cache, default_home
from casslab.lab.state import system_name
from casslab.system.sshhosts import SshHosts
from casslab.testbed.hosts import cluster
from casslab.testbed.hosts import inventory as inv
from casslab.testbed.hosts.provision import RemoteNode, provision
from casslab.testbed.hosts.ssh import Fleet

CASSLAB = str(Path(sys.executable).parent / "casslab")
RELEASE_BIN = Path(__file__).resolve().parents[1] / "target" / "release"


def casslab(*args: str, env: dict[str, str] | None = None,
            timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the real `casslab` command and capture its output."""
    return subprocess.run([CASSLAB, *args], capture_output=True, text=True, timeout=timeout_s,
                          env=env or dict(os.environ), check=False)


def hosts_name(prefix: str) -> str:
    """A stand-in hosts name of this test process: two pytest sessions on one machine
    never share hosts (a name is 10 letters or digits at most)."""
    return f"{prefix}{os.getpid() % 100_000}"


def leftovers(lab: str) -> list[str]:
    """Everything of lab `lab` (of this test run's home) still on this machine:
    processes, namespace, cgroups."""
    found = []
    home = default_home()
    sysname = system_name(lab, home)
    marker = f"{home}/labs/{lab}/node"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "CassandraDaemon" in cmdline:
            found.append(f"process {proc.name}")
        elif "casslab.lab.credit_daemon" in cmdline and f"{home}/labs/{lab}" in cmdline:
            found.append(f"CPU credit controller {proc.name}")
        elif "[lxc monitor]" in cmdline and f"{home}/labs/{lab}/lxc" in cmdline:
            found.append(f"LXC monitor {proc.name}")
    # The lab's namespace and, on runtime netns, its nodes' (casslab-<name>-nI); their
    # veth pairs and bridge exist only inside them.
    for ns in Path("/var/run/netns").glob(f"casslab-{sysname}*"):
        found.append(f"namespace {ns.name}")
    # The hierarchy's root (cgroup v2) and each v1 controller's (and v1's unified mount).
    root = Path("/sys/fs/cgroup")
    for ctrl in [root, *(d for d in root.iterdir() if d.is_dir())]:
        if (ctrl / "casslab" / sysname).exists():
            found.append(f"cgroup {ctrl / 'casslab' / sysname}")
        # Runtime lxc: LXC's own cgroups, named after the containers (<sysname>-nI).
        found += [f"cgroup {d}" for d in ctrl.glob(f"lxc.*.{sysname}-n*")]
    # Mounts on this host: a namespace's bind mount, a container's rootfs or binds.
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if f"{home}/labs/{lab}/" in point + "/" or f"/netns/casslab-{sysname}" in point:
            found.append(f"mount {point}")
    return found


@dataclass(frozen=True)
class TlsFiles:
    """A node keystore (PKCS12) whose self-signed certificate names `ip`, that
    certificate as PEM, and an unrelated certificate to fail verification with."""

    keystore: Path
    password: str
    ca_pem: Path
    other_ca_pem: Path

    def lab_overrides(self) -> list[str]:
        """`--set` items enabling optional client TLS (plain CQL keeps working)."""
        prefix = "client_encryption_options."
        return [f"{prefix}enabled=true", f"{prefix}optional=true",
                f"{prefix}keystore={self.keystore}", f"{prefix}keystore_password={self.password}",
                f"{prefix}store_type=PKCS12"]


def make_tls_files(directory: Path, ip: str = "127.0.1.1") -> TlsFiles:
    """Certificates made with the JDK's keytool, as a Cassandra operator would."""
    password = "casslab-it"

    def keytool(*args: str) -> None:
        subprocess.run(["keytool", *args, "-storepass", password], check=True,
                       capture_output=True, timeout=60)

    files = TlsFiles(directory / "node.p12", password, directory / "node.pem",
                     directory / "other.pem")
    # Both name the node's IP, so "other" fails verification only by its signer.
    for alias, store, pem in (("node", files.keystore, files.ca_pem),
                              ("other", directory / "other.p12", files.other_ca_pem)):
        keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", "2", "-dname", f"CN=casslab-{alias}", "-ext", f"SAN=ip:{ip}",
                "-keystore", str(store), "-storetype", "PKCS12", "-keypass", password)
        keytool("-exportcert", "-rfc", "-alias", alias, "-keystore", str(store),
                "-file", str(pem))
    return files


def wipe_node_data(hosts: SshHosts) -> None:
    """Remove what a node left in each stand-in host's install root (data, commit log,
    logs): the hosts outlive a test module, and the next cluster started there (another
    cluster name) would refuse that data. The configuration stays."""
    import shutil

    for h in hosts.hosts:
        for sub in ("data", "commitlog", "saved_caches", "hints", "cdc_raw", "logs"):
            shutil.rmtree(h.install_root / "node" / sub, ignore_errors=True)



@dataclass
class NodesOnHosts:
    """One lab's nodes provisioned on stand-in hosts under the user profile `small`."""

    hosts: SshHosts
    inventory: inv.Inventory
    nodes: list[RemoteNode]
    dist: Distribution
    profiles: Path
    lab: str
    started: list[cluster.Started] = field(default_factory=list)

    def fleet(self) -> Fleet:
        return Fleet(self.inventory.hosts, known_hosts=self.hosts.known_hosts)

    def start(self, heap_mib: int = 512) -> None:
        """Start every node under the profile and wait for CQL; stop them if that fails."""
        async def up() -> list[cluster.Started]:
            async with self.fleet() as fleet:
                started = await cluster.start(fleet, self.nodes, self.dist, heap_mib=heap_mib,
                                              lab=self.lab, profiles_file=self.profiles)
                try:
                    await cluster.wait_cql(fleet, started, timeout_s=240)
                except BaseException:
                    await cluster.stop(fleet, self.nodes)
                    raise
                return started
        self.started = asyncio.run(up())

    def stop(self) -> None:
        async def down() -> None:
            async with self.fleet() as fleet:
                await cluster.stop(fleet, self.nodes)
        asyncio.run(down())


def provision_small(hosts: SshHosts, directory: Path, *, nodes: int,
                    profile: dict[str, float], lab: str) -> NodesOnHosts:
    """Provision the first `nodes` stand-in hosts with the playbook, every one under the
    user profile `small` (`profile`'s fields), files under `directory`."""
    profiles = directory / "profiles.yaml"
    profiles.write_text(yaml.safe_dump({"small": profile}))
    doc = hosts.ansible_inventory(nodes=nodes)
    doc["all"]["vars"]["casslab_profile"] = "small"
    path = directory / "hosts.yaml"
    path.write_text(yaml.safe_dump(doc))
    inventory = inv.load(path, profiles)
    dist = resolve(DEFAULT_VERSION, default_cache())
    placed = provision(path, inventory, dist, RELEASE_BIN, directory / "staging",
                       default_cache(), lab_name=lab, overrides={}, ssh_args=hosts.ssh_args)
    return NodesOnHosts(hosts, inventory, placed, dist, profiles, lab)


def get_in(prefix: list[str], url: str) -> str:
    """GET `url` from inside a namespace (`prefix` enters it, e.g. a lab's exec_prefix()),
    where the lab's servers listen on its loopback."""
    code = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())"
    return subprocess.run([*prefix, sys.executable, "-c", code, url], check=True,
                          capture_output=True, text=True, timeout=30).stdout


def prom_query(prefix: list[str], addr: str, promql: str) -> list[dict[str, object]]:
    """An instant PromQL query to the Prometheus at `addr` (reached through `prefix`)."""
    url = f"http://{addr}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    body = json.loads(get_in(prefix, url))
    assert body["status"] == "success", body
    result: list[dict[str, object]] = body["data"]["result"]
    return result
