"""Several casslab-load clients of one run, their histograms merged by absolute time.

K clients run the same LoadSpec, each with `--client I/K` (casslab-load then does its
interleaved share: the run's ops, rate and load-phase records are the K clients' totals)
and one `--start-at` a few seconds ahead, so they start together after connecting. All
get the same --seed: keys and values derive from it, so every client reads the data any
client loaded; their op choices still differ, because each draws from its own cycles
(I, I+K, ...), which is what a per-client seed would give without splitting the data.
Each writes an HdrHistogram interval log; `casslab-load merge` adds the logs by absolute
time into the merged summary and intervals, and each client's own summary is kept (a
saturated client shows as the one with the low rate or the high tail).

With --prometheus HOST:PORT, client I (0-based) serves its live metrics on HOST:PORT+I
(K processes cannot share one port), each series labelled client="I" by casslab-load;
Prometheus scrapes all K and `sum by (le)` merges their latency histograms.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from casslab.core.errors import UsageError
from casslab.load.options import SchemaOptions
from casslab.load.runner import (
    LoadError,
    LoadResult,
    LoadSpec,
    build_command,
    find_binary,
    run_command,
)
from casslab.load.summary import RunSummary

MAX_CLIENTS = 64
# Time the clients get to start, connect and prepare before the shared start.
START_MARGIN_S = 5.0


@dataclass(frozen=True)
class ClientPlace:
    """Where one client runs.

    prefix: argv that runs a command there (`nsenter --net=NS` for the local lab, an ssh
    argv for a host). binary: casslab-load's path there. workdir: a directory there for
    the client's HdrHistogram log. fetch(path_there, local_path): brings a file from there
    to the controller. files: the controller's files the command names (a user profile)
    and the path of their copy there; a command's argument equal to a key is replaced.
    """

    name: str
    prefix: tuple[str, ...]
    binary: str
    workdir: str
    fetch: Callable[[str, Path], None]
    files: Mapping[str, str] = field(default_factory=dict)

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` (a casslab-load command line built on the controller) as run here."""
        return [*self.prefix, *(self.files.get(a, a) for a in argv)]


def copy_file(path: str, dest: Path) -> None:
    """fetch for a place on this machine (a namespace shares the file system); nothing
    to do when the client wrote its log where the controller reads it."""
    if Path(path).resolve() != dest.resolve():
        shutil.copyfile(path, dest)


def local_places(k: int, prefix: Sequence[str], workdir: Path,
                 binary: str | None = None) -> list[ClientPlace]:
    """K clients on this machine, each run with `prefix` (e.g. the lab's exec prefix)."""
    check_count(k, "clients")
    if k > 1:  # one client runs as run_load does and writes no log (see run_clients)
        workdir.mkdir(parents=True, exist_ok=True)
    exe = binary or find_binary()
    return [ClientPlace(f"client{i + 1}", tuple(prefix), exe, str(workdir), copy_file)
            for i in range(k)]


def check_count(k: int, name: str) -> None:
    """Raises UsageError unless 1 <= k <= MAX_CLIENTS."""
    if not 1 <= k <= MAX_CLIENTS:
        raise UsageError(f"{name}: {k} is not a client count (valid: 1..{MAX_CLIENTS})")


def client_command(spec: LoadSpec, place: ClientPlace, index: int, count: int,
                   hosts: list[str], start_at_s: float) -> list[str]:
    """The full command of one client: its place's prefix, its log, its slice."""
    log = f"{place.workdir.rstrip('/')}/{place.name}.hlog"
    options = replace(spec.options, hdr_log=Path(log), client=f"{index}/{count}",
                      start_at_s=round(start_at_s, 3))
    if options.prometheus is not None:
        options = replace(options, prometheus=prometheus_addr(options.prometheus, index))
    if isinstance(options, SchemaOptions):
        options = replace(options, drop=None)  # dropped once before (schema_spec)
    one = LoadSpec(spec.workload, options, _extra_for_client(spec.extra, index))
    return place.command(build_command(one, hosts, place.binary))


def prometheus_addr(addr: str, index: int) -> str:
    """Client `index`'s --prometheus address: HOST:PORT+index (port 0, any free port,
    stays 0). Raises UsageError naming the address unless it is HOST:PORT."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--prometheus {addr!r}: give HOST:PORT, e.g. 127.0.0.1:9470")
    if int(port) == 0:
        return addr
    if int(port) + index > 65535:
        raise UsageError(f"--prometheus {addr}: client {index} would need port "
                         f"{int(port) + index}; give a port at most {65535 - index}")
    return f"{host}:{int(port) + index}"


def with_lab_label(spec: LoadSpec, lab: str) -> LoadSpec:
    """`spec` with --prometheus-label lab=LAB when it serves live metrics and names no lab
    label itself, so a lab's runs are told apart in one Prometheus."""
    extra = list(spec.extra)
    serves = spec.options.prometheus is not None or any(
        a == "--prometheus" or a.startswith("--prometheus=") for a in extra)
    named = any(a.startswith(("lab=", "--prometheus-label=lab=")) for a in extra) or (
        spec.options.prometheus_label or "").startswith("lab=")
    if not serves or named:
        return spec
    return LoadSpec(spec.workload, spec.options, [*extra, "--prometheus-label", f"lab={lab}"])


def _extra_for_client(extra: Sequence[str], index: int) -> list[str]:
    """`extra` (casslab-load arguments as given) with a --prometheus address moved to
    client `index`'s port."""
    out = list(extra)
    for i, arg in enumerate(out):
        if arg == "--prometheus" and i + 1 < len(out):
            out[i + 1] = prometheus_addr(out[i + 1], index)
        elif arg.startswith("--prometheus="):
            out[i] = "--prometheus=" + prometheus_addr(arg.split("=", 1)[1], index)
    return out


def schema_spec(spec: LoadSpec) -> LoadSpec:
    """A run of no operations that creates (and with --drop first drops) the schema, so
    K clients never race on DDL."""
    options = replace(spec.options.for_load_phase(), phase="run", ops=0)
    return LoadSpec(spec.workload, options, list(spec.extra))


def run_clients(spec: LoadSpec, *, hosts: list[str], places: Sequence[ClientPlace],
                work_dir: Path, start_margin_s: float = START_MARGIN_S) -> LoadResult:
    """Run K = len(places) clients of `spec` together and merge their results.

    work_dir: a directory on the controller for the fetched logs and the merged log.
    One place runs exactly as run_load. Raises LoadError naming the first client that
    failed (after all have ended), UsageError for a client count outside 1..64.
    """
    k = len(places)
    check_count(k, "clients")
    first = places[0]
    if k == 1:  # as run_load, with the place's files
        return run_command(first.command(build_command(spec, hosts, first.binary)))
    run_command(first.command(build_command(schema_spec(spec), hosts, first.binary)))
    start_at = time.time() + start_margin_s
    cmds = [client_command(spec, p, i, k, hosts, start_at) for i, p in enumerate(places)]
    results = _run_all(cmds, [p.name for p in places])
    work_dir.mkdir(parents=True, exist_ok=True)
    logs = []
    for p in places:
        local = work_dir / f"{p.name}.hlog"
        p.fetch(f"{p.workdir.rstrip('/')}/{p.name}.hlog", local)
        logs.append(local)
    merged = merge_logs(logs, work_dir / "merged.hlog")
    summaries = [r.summary for r in results]
    starts = [log_start_s(log) for log in logs]
    summary = merged_summary(summaries, merged[-1])
    intervals = merged_intervals(merged[:-1], merged[-1], [r.intervals for r in results],
                                 starts)
    return LoadResult(RunSummary.from_json(summary), intervals, cmds[0], tuple(summaries))


def _run_all(cmds: list[list[str]], names: list[str]) -> list[LoadResult]:
    """Runs the commands at once; all end before the first failure is raised."""
    out: list[LoadResult | None] = [None] * len(cmds)
    errors: list[tuple[int, str]] = []

    def one(i: int) -> None:
        try:
            out[i] = run_command(cmds[i])
        except LoadError as exc:
            errors.append((i, str(exc)))

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(cmds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        i, msg = min(errors)
        raise LoadError(f"load client {names[i]} ({i + 1} of {len(cmds)}): {msg}")
    return [r for r in out if r is not None]


def merge_logs(logs: list[Path], output: Path) -> list[dict[str, Any]]:
    """`casslab-load merge --intervals`: the merged interval lines, then its summary."""
    cmd = [find_binary(), "merge", "--intervals", "--output", str(output),
           *map(str, logs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise LoadError(f"casslab-load merge exited {proc.returncode}: "
                        f"{tail[0].removeprefix('error: ')}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def log_start_s(log: Path) -> float:
    """The StartTime (seconds since the epoch) of an interval log casslab-load wrote."""
    with log.open() as f:
        for line in f:
            if line.startswith("#[StartTime:"):
                return float(line.split()[1])
            if not line.startswith("#"):
                break
    raise LoadError(f"{log}: no #[StartTime: ...] line (not a casslab-load interval log)")


_COUNTS = ("ok", "not_found", "errors", "retries")


def _rate(n: float, seconds: float) -> float:
    return round(n / seconds, 3) if seconds > 0 else 0.0


def merged_summary(clients: list[RunSummary], merged: dict[str, Any]) -> dict[str, Any]:
    """The run's summary in casslab-load's summary shape: counts summed over the clients,
    percentiles and histograms from the merged logs, each client's summary under
    `clients`. Run time is the longest client's (they start together)."""
    raws = [c.raw for c in clients]
    elapsed = max(float(r["elapsed_s"]) for r in raws)
    by_op = {name: _summed_block([r["by_op"].get(name, {}) for r in raws],
                                 merged.get("by_op", {}).get(name) or raws[0]["by_op"][name],
                                 elapsed)
             for name in raws[0]["by_op"]}
    # Parts (the read and update inside a YCSB rmw): percentiles from their own tags in
    # the merged logs, counts from the clients' summaries.
    part_names = sorted({n for r in raws for n in r.get("parts", {})})
    parts = {name: _summed_block([r.get("parts", {}).get(name, {}) for r in raws],
                                 merged.get("parts", {}).get(name, {}), elapsed)
             for name in part_names}
    total = sum(int(r["ops"]) for r in raws)
    counts = {key: sum(int(r.get(key, 0)) for r in raws) for key in _COUNTS}
    all_block = dict(merged["all"])
    all_block.update(ops=total, ops_s=_rate(total, elapsed), **counts)
    ended = [r["ended_by"] for r in raws if r["ended_by"] != "completed"]
    return {
        **raws[0],
        "ended_by": ended[0] if ended else "completed",
        "elapsed_s": elapsed,
        "wall_s": max(float(r.get("wall_s", 0.0)) for r in raws),
        "ops": total,
        "ops_s": _rate(total, elapsed),
        **counts,
        "by_op": by_op,
        "all": all_block,
        "parts": parts,
        "stages": _stages(raws),
        "concurrency": {**raws[0].get("concurrency", {}),
                        "clients": sum(int(r.get("concurrency", {}).get("clients", 0))
                                       for r in raws),
                        "load_clients": len(raws)},
        "merged": {k: merged[k]
                   for k in ("logs", "start_s", "interval_s", "intervals", "ops")},
        "clients": raws,
    }


def _summed_block(ops: list[dict[str, Any]], merged: dict[str, Any],
                  elapsed: float) -> dict[str, Any]:
    """One operation's block: the merged log's percentiles and histograms, the clients'
    counts (a log holds no ok / not found / errors / retries) summed."""
    block = dict(merged)
    block["ops"] = sum(int(o.get("ops", 0)) for o in ops)
    block["ops_s"] = _rate(block["ops"], elapsed)
    for key in _COUNTS:
        block[key] = sum(int(o.get(key, 0)) for o in ops)
    kinds: dict[str, int] = {}
    for o in ops:
        for kind, n in o.get("error_kinds", {}).items():
            kinds[kind] = kinds.get(kind, 0) + int(n)
    block["error_kinds"] = kinds
    block["first_errors"] = [e for o in ops for e in o.get("first_errors", [])][:5]
    return block


def _stages(raws: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, stage in enumerate(raws[0].get("stages", [])):
        same = [r["stages"][i] for r in raws if len(r.get("stages", [])) > i]
        out.append({**stage, "ops": sum(int(s["ops"]) for s in same),
                    "errors": sum(int(s.get("errors", 0)) for s in same),
                    "elapsed_s": max(float(s["elapsed_s"]) for s in same)})
    return out


def merged_intervals(lines: list[dict[str, Any]], merged: dict[str, Any],
                     clients: list[list[dict[str, Any]]], starts: list[float]
                     ) -> list[dict[str, Any]]:
    """The merged interval lines with the counts a log does not hold (ok, not found,
    errors, retries) added from the clients' interval lines of the same time slot."""
    slot_s = float(merged["interval_s"]) or 1.0
    t0 = float(merged["start_s"])
    by_slot = {round(float(iv["t_s"]) / slot_s) - 1: {**iv, "stage": None, "recorded": True,
                                                      **dict.fromkeys(_COUNTS, 0)}
               for iv in lines}
    for ivs, start in zip(clients, starts, strict=True):
        for iv in ivs:
            if not iv.get("recorded", True):
                continue  # warm-up: not in the logs
            mid = start + float(iv["t_s"]) - float(iv["interval_s"]) / 2 - t0
            slot = max(0, int(mid // slot_s))
            line = by_slot.setdefault(slot, {
                "type": "interval", "t_s": round((slot + 1) * slot_s, 3),
                "interval_s": slot_s, "ops": 0, "ops_s": 0.0, "by_op": {},
                "stage": None, "recorded": True, **dict.fromkeys(_COUNTS, 0)})
            line["stage"] = line["stage"] or iv.get("stage")
            for key in _COUNTS:
                line[key] += int(iv.get(key, 0))
    for line in by_slot.values():
        # Operations that ended in an error are counted, not timed (as in one client).
        line["ops"] = int(line["ops"]) + int(line["errors"])
        line["ops_s"] = _rate(line["ops"], slot_s)
    return [by_slot[s] for s in sorted(by_slot)]
