"""Spike for issue "VMs": one Cassandra node in a QEMU/KVM VM vs the same node as a process.

Builds once, under ~/.cache/casslab/vm/, a Debian 12 root filesystem with mmdebstrap
(openjdk-17-jre-headless, iproute2, linux-image-amd64 and its initramfs; PID 1 is a small
shell init baked into the image) as an ext4 image, with the kernel and initrd copied out.
Each trial boots that image under KVM (`-enable-kvm -cpu host`; vCPUs and memory from a
hardware profile), root on virtio-blk through a throw-away qcow2 overlay, the Cassandra
jars shared read-only over 9p, the node's config (rendered by casslab.cassandra.config)
over a second 9p share, and a tap device on a bridge inside a network namespace this
script creates: the guest's address is reachable from that namespace only.

Measured per trial, VM and process node taking turns: start-to-CQL time (qemu started /
`lab up` called, until the node answers on its CQL port) and insert throughput of
casslab-load (ycsb load phase, RF 1) run from the node's namespace. The process node is
a casslab `process` lab of the same profile (CPU quota, memory, heap).

The issue's rule: if KVM does not boot the guest here, or the VM node reaches less than
half the process node's throughput, the spike is blocked; the numbers are written to
BENCHMARKS.md either way. Teardown (qemu, namespace with its tap and bridge, overlay,
lab) runs on every exit path, Ctrl-C and SIGTERM included; nothing is mounted on the host.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from benchmd import machine, today, write_section

from casslab.cassandra.config import NodeLayout, jvm_command, render_cassandra_yaml
from casslab.cassandra.distribution import DEFAULT_VERSION, Distribution
from casslab.core.errors import CasslabError
from casslab.core.paths import default_cache, default_home
from casslab.hardware.profiles import BUILTIN_PROFILES, HardwareProfile
from casslab.load.runner import LoadSpec, run_load
from casslab.testbed import open_lab

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("openjdk-17-jre-headless", "iproute2", "linux-image-amd64", "initramfs-tools",
            "kmod", "procps")
IMAGE_SIZE = "3G"
GUEST_JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
GUEST_NODE_DIR = Path("/var/lib/casslab/node1")
# One set of names per accelerator, so a KVM and a TCG run can go side by side.
NETNS = "casslab-spikevm21"
BRIDGE, TAP = "br-spike", "tap-spike"
HOST_ADDR, GUEST_ADDR = "10.121.0.1", "10.121.0.2"


def use_names(accel: str) -> None:
    """Give this run the namespace, tap and work names of its accelerator."""
    global NETNS, TAP
    NETNS, TAP = f"casslab-spikevm21-{accel}", f"tap-spike-{accel}"
CQL_PORT = 9042
PROCESS_LAB = "spike-vm21-proc"  # one at a time: runs share it
# The guest kernel's first console line: without it within the boot timeout, the
# accelerator never ran the kernel (what a KVM that cannot run this guest looks like).
KERNEL_BANNER = "Linux version"

Say = Callable[[str], None]

# PID 1 of the guest: mounts, the two 9p shares, the address, then the node; power off
# when the node exits so qemu ends with it.
GUEST_INIT = """#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sys /sys 2>/dev/null
mount -t devtmpfs dev /dev 2>/dev/null
mount -o remount,rw /
echo "casslab-init: up $(cut -d' ' -f1 /proc/uptime) s"
for m in virtio_net 9pnet_virtio 9p; do modprobe $m; done
mkdir -p /casslab/jars /casslab/run
mount -t 9p -o trans=virtio,version=9p2000.L,ro jars /casslab/jars
mount -t 9p -o trans=virtio,version=9p2000.L run /casslab/run
. /casslab/run/guest.env
ip link set lo up
ip addr add "$GUEST_CIDR" dev eth0
ip link set eth0 up
echo "casslab-init: network $GUEST_CIDR at $(cut -d' ' -f1 /proc/uptime) s"
sh /casslab/run/start.sh
echo "casslab-init: node exited, powering off"
echo o > /proc/sysrq-trigger
sleep 10
"""


class SpikeError(Exception):
    """A step of the spike failed; the message says which and why."""


@dataclass(frozen=True)
class VmImage:
    rootfs: Path
    kernel: Path
    initrd: Path


@dataclass(frozen=True)
class Trial:
    runtime: str
    ready_s: float
    ops_s: float


def run(cmd: list[str], *, timeout_s: float | None = None) -> None:
    """Run a command; SpikeError with its last output lines when it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
        raise SpikeError(f"{cmd[0]} failed (rc {proc.returncode}): {tail}")


# ---- the image ----------------------------------------------------------------------


def image_dir(cache: Path) -> Path:
    """The cached image's folder, named for what goes into it (packages and init)."""
    key = hashlib.sha256("\n".join([SUITE, *PACKAGES, GUEST_INIT]).encode()).hexdigest()[:12]
    return cache / "vm" / f"debian12-{key}"


def build_image(cache: Path, say: Say) -> VmImage:
    """The image, built once: mmdebstrap into a folder, kernel and initrd copied out, the
    folder packed into ext4 with `mkfs.ext4 -d` (no loop mount on the host)."""
    out = image_dir(cache)
    image = VmImage(out / "rootfs.ext4", out / "vmlinuz", out / "initrd.img")
    if (out / ".complete").exists():
        return image
    work = out.with_name(out.name + ".partial")
    tree = work / "rootfs"
    if not (work / ".mmdebstrap-done").exists():
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        say(f"building the Debian {SUITE} root filesystem (mmdebstrap, several minutes)")
        run(["mmdebstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
             "--aptopt=Acquire::Retries \"3\"", SUITE, str(tree), MIRROR], timeout_s=3600)
        (work / ".mmdebstrap-done").touch()
    init = tree / "sbin" / "casslab-init"
    init.write_text(GUEST_INIT)
    init.chmod(0o755)
    kernels = sorted((tree / "boot").glob("vmlinuz-*"))
    initrds = sorted((tree / "boot").glob("initrd.img-*"))
    if not kernels or not initrds:
        raise SpikeError(f"{tree / 'boot'}: no vmlinuz-*/initrd.img-* (linux-image-amd64 "
                         "and initramfs-tools must be in the image)")
    shutil.copy2(kernels[-1], work / "vmlinuz")
    shutil.copy2(initrds[-1], work / "initrd.img")
    say("packing it into ext4")
    run(["mkfs.ext4", "-q", "-F", "-L", "casslab-root", "-d", str(tree),
         str(work / "rootfs.ext4"), IMAGE_SIZE], timeout_s=1800)
    shutil.rmtree(tree)
    (work / ".complete").touch()
    shutil.rmtree(out, ignore_errors=True)
    work.rename(out)
    return image


# ---- the guest's node files -----------------------------------------------------------


def write_run_share(share: Path, host_dist: Distribution, heap_mib: int) -> None:
    """The node's config as the guest sees it: cassandra.yaml and logback.xml rendered by
    casslab with the guest's paths, the JVM command line, the guest's address."""
    node = NodeLayout(1, GUEST_ADDR, GUEST_NODE_DIR)
    config = render_cassandra_yaml(lab_name="spikevm", node=node, node_count=1,
                                   seeds=[GUEST_ADDR], overrides={})
    import yaml  # only needed here

    from casslab.cassandra.config import LOGBACK_XML

    (share / "conf").mkdir(parents=True, exist_ok=True)
    (share / "conf" / "cassandra.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (share / "conf" / "logback.xml").write_text(LOGBACK_XML.format(log_dir=node.log_dir))
    guest_dist = Distribution(host_dist.version, Path("/casslab/jars/lib"), GUEST_JAVA)
    cmd = jvm_command(guest_dist, node, heap_mib, [])
    if host_dist.jamm_jar is not None:  # the guest path cannot be globbed from here
        cmd.insert(cmd.index("-cp"), f"-javaagent:/casslab/jars/lib/{host_dist.jamm_jar.name}")
    dirs = " ".join(str(GUEST_NODE_DIR / d) for d in
                    ("conf", "logs", "data", "commitlog", "saved_caches", "hints", "cdc_raw"))
    (share / "start.sh").write_text(
        # system.log onto the share, so the host can read why a node did not come up.
        f"mkdir -p {dirs} /casslab/run/logs\ncp /casslab/run/conf/* {node.conf_dir}/\n"
        f"mount --bind /casslab/run/logs {node.log_dir}\n"
        f"exec {' '.join(_sh_quote(c) for c in cmd)} > /dev/ttyS0 2>&1\n")
    (share / "guest.env").write_text(f"GUEST_CIDR={GUEST_ADDR}/24\n")


def _sh_quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


# ---- the VM and its network ---------------------------------------------------------


@contextlib.contextmanager
def sandbox_network() -> Iterator[None]:
    """A namespace with a bridge (host side of the guest's link) and a tap on it; gone,
    with the tap and bridge inside, when the block ends."""
    subprocess.run(["ip", "netns", "del", NETNS], capture_output=True, check=False)
    run(["ip", "netns", "add", NETNS])
    try:
        for cmd in (["link", "set", "lo", "up"],
                    ["link", "add", BRIDGE, "type", "bridge"],
                    ["addr", "add", f"{HOST_ADDR}/24", "dev", BRIDGE],
                    ["link", "set", BRIDGE, "up"],
                    ["tuntap", "add", "dev", TAP, "mode", "tap"],
                    ["link", "set", TAP, "master", BRIDGE],
                    ["link", "set", TAP, "up"]):
            run(["ip", "-n", NETNS, *cmd])
        yield
    finally:
        run(["ip", "netns", "del", NETNS])


def qemu_command(image: VmImage, overlay: Path, share: Path, jars: Path,
                 profile: HardwareProfile, accel: str) -> list[str]:
    """The qemu command line of the spike's guest (run inside the namespace)."""
    cpus = max(1, round(profile.cpu_cores or os.cpu_count() or 1))
    memory = profile.memory_mib or 2048
    # `-cpu host` alone makes QEMU 7.2 abort on this machine's KVM ("failed to set MSR
    # 0x10a", IA32_ARCH_CAPABILITIES); without that MSR the guest gets to run at all.
    cpu = (["-enable-kvm", "-cpu", "host,-arch-capabilities"] if accel == "kvm"
           else ["-accel", "tcg,thread=multi", "-cpu", "max"])
    return ["qemu-system-x86_64", *cpu, "-machine", "q35", "-smp", str(cpus),
            "-m", str(memory), "-nodefaults", "-display", "none", "-no-reboot",
            "-kernel", str(image.kernel), "-initrd", str(image.initrd),
            "-append", "root=/dev/vda rw console=ttyS0 earlyprintk=serial,ttyS0,115200 "
            "net.ifnames=0 panic=-1 "
            "init=/sbin/casslab-init",
            "-drive", f"file={overlay},if=virtio,format=qcow2,cache=none,aio=threads",
            "-virtfs", f"local,path={jars},mount_tag=jars,security_model=none,readonly=on",
            "-virtfs", f"local,path={share},mount_tag=run,security_model=none",
            "-netdev", f"tap,id=n0,ifname={TAP},script=no,downscript=no",
            "-device", "virtio-net-pci,netdev=n0",
            "-serial", f"file:{share / 'serial.log'}"]


@contextlib.contextmanager
def running_vm(cmd: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    """qemu started in the namespace; killed and reaped when the block ends."""
    proc = subprocess.Popen(["ip", "netns", "exec", NETNS, *cmd], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def cql_port_open(address: str) -> bool:
    """Whether the CQL port accepts a connection, tried from inside the namespace."""
    probe = f"import socket; socket.create_connection(('{address}', {CQL_PORT}), 2).close()"
    return subprocess.run(["ip", "netns", "exec", NETNS, sys.executable, "-c", probe],
                          capture_output=True, check=False).returncode == 0


def wait_for_cql(proc: subprocess.Popen[bytes], serial: Path, *, kernel_timeout_s: float,
                 timeout_s: float, started: float) -> float:
    """Seconds from `started` until the guest answers on its CQL port. SpikeError when
    qemu exits, the kernel prints nothing in time, or CQL does not answer in time."""
    while True:
        elapsed = time.monotonic() - started
        text = serial.read_text(errors="replace") if serial.exists() else ""
        if proc.poll() is not None:
            err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")
            raise SpikeError(f"qemu exited (rc {proc.returncode}): {err.strip()[-400:]}; "
                             f"serial tail: {text.strip()[-400:]}")
        if KERNEL_BANNER not in text and elapsed > kernel_timeout_s:
            raise SpikeError(f"guest kernel printed nothing in {kernel_timeout_s:.0f} s "
                             f"(serial: {text.strip()[-200:]!r})")
        if elapsed > timeout_s:
            raise SpikeError(f"guest CQL {GUEST_ADDR}:{CQL_PORT} not answering after "
                             f"{timeout_s:.0f} s; serial tail: {text.strip()[-600:]}")
        if "casslab-init: network" in text and cql_port_open(GUEST_ADDR):
            return time.monotonic() - started
        time.sleep(1.0)


# ---- trials ---------------------------------------------------------------------------


def insert_ops_s(hosts: list[str], prefix: list[str], records: int) -> float:
    """Insert throughput of casslab-load's ycsb load phase (RF 1)."""
    spec = LoadSpec.of("ycsb-a", {"records": records, "rf": 1, "workers": 2, "in-flight": 16,
                                  "seed": 1, "phase": "load"})
    result = run_load(spec, hosts=hosts, prefix=prefix)
    if result.summary.ops == 0:
        raise SpikeError("the load phase recorded no operation")
    return float(result.summary.ops_s)


def vm_trial(image: VmImage, profile: HardwareProfile, heap_mib: int, dist: Distribution,
             args: argparse.Namespace, say: Say) -> Trial:
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    share = work / "share"
    share.mkdir(parents=True)
    overlay = work / "overlay.qcow2"
    run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(image.rootfs),
         str(overlay)])
    write_run_share(share, dist, heap_mib)
    cmd = qemu_command(image, overlay, share, dist.lib_dir.parent, profile, args.accel)
    try:
        with sandbox_network():
            started = time.monotonic()
            with running_vm(cmd) as proc:
                ready_s = wait_for_cql(proc, share / "serial.log",
                                       kernel_timeout_s=args.kernel_timeout,
                                       timeout_s=args.cql_timeout, started=started)
                say(f"vm: CQL after {ready_s:.1f} s; inserting {args.records:,} rows")
                ops_s = insert_ops_s([f"{GUEST_ADDR}:{CQL_PORT}"],
                                     ["ip", "netns", "exec", NETNS], args.records)
    finally:
        # The overlay is the guest's whole disk: gigabytes once Cassandra wrote to it.
        overlay.unlink(missing_ok=True)
    return Trial("vm", ready_s, ops_s)


def process_trial(profile_name: str, args: argparse.Namespace) -> Trial:
    from casslab.lab import LabOptions

    lab = open_lab(PROCESS_LAB, home=default_home(), cache=default_cache())
    if lab.exists():
        lab.down(wipe=True)
    started = time.monotonic()
    try:
        lab.up(LabOptions(nodes=1, runtime="process", profile=profile_name,
                          timeout_s=args.cql_timeout), lambda _: None)
        ready_s = time.monotonic() - started
        hosts = [f"{n.address}:{CQL_PORT}" for n in lab.state().nodes]
        ops_s = insert_ops_s(hosts, lab.exec_prefix(), args.records)
    finally:
        if lab.exists():
            lab.down(wipe=True)
    return Trial("process", ready_s, ops_s)


# ---- leftovers, signals, report -------------------------------------------------------


def leftovers() -> list[str]:
    """What this spike could have left behind: its namespace, a qemu of its image, its lab."""
    found = []
    if Path(f"/run/netns/{NETNS}").exists():
        found.append(f"namespace {NETNS}")
    qemus = subprocess.run(["pgrep", "-f", f"ifname={TAP}"], capture_output=True, text=True,
                           check=False).stdout.split()
    found += [f"qemu pid {p}" for p in qemus]
    if open_lab(PROCESS_LAB, home=default_home(), cache=default_cache()).exists():
        found.append(f"lab {PROCESS_LAB}")
    return found


def _raise_interrupt(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")



def kvm_facts() -> str:
    """What backs /dev/kvm here: hardware virtualisation (vmx/svm) or PVM, the
    paravirtual KVM for machines without it, which runs only guests built for it."""
    flags = next((ln.split(":", 1)[1].split() for ln in Path("/proc/cpuinfo").read_text()
                  .splitlines() if ln.startswith("flags")), [])
    hw = [f for f in ("vmx", "svm") if f in flags]
    modules = sorted(m for m in os.listdir("/sys/module") if m.startswith("kvm"))
    return (f"/dev/kvm {'present' if Path('/dev/kvm').exists() else 'absent'}; CPU flags "
            f"{'/'.join(hw) if hw else 'without vmx/svm'}"
            f"{', hypervisor' if 'hypervisor' in flags else ''}; modules {', '.join(modules)}")


def report_lines(trials: list[Trial], blocked: str | None, args: argparse.Namespace,
                 profile: HardwareProfile, heap_mib: int, loads: tuple[float, float]) -> list[str]:
    lines = [f"Measured {today()} on {machine()}; load average {loads[0]:.1f} at the start, "
             f"{loads[1]:.1f} at the end (the machine is shared by ~8 engineers running "
             f"their own labs and builds: absolute numbers are inflated by their load). "
             f"Profile `{profile.name}` ({profile.cpu_cores} core, {profile.memory_mib} MiB, "
             f"heap {heap_mib} MiB); Cassandra {args.cassandra_version}, one node, "
             f"casslab-load ycsb load phase ({args.records:,} rows, RF 1, 2 workers x 16 in "
             f"flight) from the node's namespace; accelerator `{args.accel}` "
             f"(`scripts/spike_vm.py`).", ""]
    if trials:
        lines += ["| runtime | start to CQL (s) | insert throughput (ops/s) | runs |",
                  "|---|---:|---:|---:|"]
        for rt in ("vm", "process"):
            mine = [t for t in trials if t.runtime == rt]
            if mine:
                lines.append(f"| {rt} | {statistics.median(t.ready_s for t in mine):.1f} | "
                             f"{statistics.median(t.ops_s for t in mine):,.0f} | {len(mine)} |")
        lines.append("")
    lines.append(f"KVM here: {kvm_facts()}.")
    lines.append(f"Verdict: {blocked}" if blocked else "Verdict: the spike passes.")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--profile", default="vm-2g")
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--accel", choices=("kvm", "tcg"), default="kvm")
    ap.add_argument("--kernel-timeout", type=float, default=60.0, help="seconds")
    ap.add_argument("--cql-timeout", type=float, default=600.0, help="seconds")
    ap.add_argument("--cassandra-version", default=DEFAULT_VERSION)
    ap.add_argument("--work", default="/tmp/casslab-spike-vm21")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-process", action="store_true", help="Only the VM trials.")
    ap.add_argument("--no-write", action="store_true", help="Print only, leave BENCHMARKS.md.")
    args = ap.parse_args()
    if args.profile not in BUILTIN_PROFILES:
        print(f"error: --profile '{args.profile}': valid: {', '.join(BUILTIN_PROFILES)}",
              file=sys.stderr)
        return 2
    profile = BUILTIN_PROFILES[args.profile]
    use_names(args.accel)
    args.work = f"{args.work}-{args.accel}"
    signal.signal(signal.SIGTERM, _raise_interrupt)

    def say(msg: str) -> None:
        print(msg, flush=True)

    from casslab.cassandra.distribution import resolve

    image = build_image(default_cache(), say)
    if args.build_only:
        say(f"image: {image.rootfs} ({image.rootfs.stat().st_size / 2**30:.1f} GiB)")
        return 0
    dist = resolve(args.cassandra_version, default_cache())
    heap_mib = profile.effective_heap_mib(profile.memory_mib or 2048)
    loads_start = os.getloadavg()[0]
    trials: list[Trial] = []
    blocked: str | None = None
    failures: list[str] = []
    try:
        for rep in range(args.reps):
            try:
                t = vm_trial(image, profile, heap_mib, dist, args, say)
            except SpikeError as e:
                blocked = f"blocked: the VM node did not come up under `{args.accel}`: {e}"
                say(blocked)
            else:
                trials.append(t)
                say(f"rep {rep + 1} vm: CQL after {t.ready_s:.1f} s, {t.ops_s:,.0f} inserts/s")
            # Without a VM the process node's numbers are still the record's baseline.
            if not args.no_process:
                try:
                    p = process_trial(args.profile, args)
                except (CasslabError, SpikeError) as e:
                    # Recorded like the VM's failure: the run's load is part of the story.
                    failures.append(f"process node, rep {rep + 1}: {str(e).splitlines()[0]}")
                    say(failures[-1])
                    continue
                trials.append(p)
                say(f"rep {rep + 1} process: CQL after {p.ready_s:.1f} s, "
                    f"{p.ops_s:,.0f} inserts/s")
            if blocked:
                break
    finally:
        left = leftovers()
        if left:
            say(f"LEFT BEHIND: {', '.join(left)}")
    vm = [t.ops_s for t in trials if t.runtime == "vm"]
    proc = [t.ops_s for t in trials if t.runtime == "process"]
    if blocked is None and vm and proc:
        ratio = statistics.median(vm) / statistics.median(proc)
        say(f"VM/process insert throughput: {ratio:.2f}")
        if args.accel == "tcg":
            # Emulation is no VM runtime candidate: the rule is about KVM.
            blocked = f"reference only (TCG, not KVM): VM/process throughput {ratio:.2f}"
        elif ratio < 0.5:
            blocked = f"blocked: VM/process throughput {ratio:.2f} < 0.5"
    lines = report_lines(trials, blocked, args, profile, heap_mib,
                         (loads_start, os.getloadavg()[0]))
    lines[-1:-1] = [f"Failed: {f}." for f in failures]
    print("\n".join(lines))
    if not args.no_write:
        title = ("Spike: a Cassandra node in a QEMU/KVM VM vs a process" if args.accel == "kvm"
                 else "Spike, reference only: the same VM under TCG (software emulation)")
        write_section(f"spike-vm-{args.accel}", title, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
