"""Build a casslab-load command, run it (inside a lab's namespace), read its JSON lines."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from casslab.core.errors import CasslabError, PrerequisiteError, UsageError
from casslab.load.options import LoadOptions, from_mapping
from casslab.load.summary import RunSummary

# casslab's workload names -> casslab-load subcommand and fixed arguments.
WORKLOADS: dict[str, list[str]] = {
    **{f"ycsb-{w}": ["ycsb", "--workload", w] for w in "abcdefi"},
    "stress-write": ["stress", "write"],
    "stress-read": ["stress", "read"],
    "stress-mixed": ["stress", "mixed"],
    # seed 003's reads (LIMIT 500), and the forms casslab had before as a variant.
    "iot": ["iot", "--reads", "study"],
    "iot-full-latest": ["iot", "--reads", "full-latest"],
}


class LoadError(CasslabError):
    """casslab-load failed before it could report a summary."""


@dataclass(frozen=True)
class LoadSpec:
    """One run of the load generator.

    workload: a name of WORKLOADS or the path of a cassandra-stress user profile (.yaml).
    options: the typed casslab-load options of its family (casslab.load.options).
    extra: raw arguments appended last, unchecked.
    """

    workload: str
    options: LoadOptions
    extra: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, workload: str, options: Mapping[str, Any] | None = None,
           extra: list[str] | None = None, where: str = "options") -> LoadSpec:
        """A spec from options spelled as casslab-load flags, e.g. {"ops": 10000,
        "in-flight": 32}; raises OptionError (a UsageError) naming a bad one."""
        workload_args(workload)  # an unknown name would read as a user profile's options
        return cls(workload, from_mapping(workload, options or {}, where), list(extra or []))


@dataclass(frozen=True)
class LoadResult:
    """A run's summary and interval lines; with several clients (casslab.load.multi) the
    merged ones, and each client's own summary in `clients` (empty for one client)."""

    summary: RunSummary
    intervals: list[dict[str, Any]]
    command: list[str]
    clients: tuple[RunSummary, ...] = ()


def find_binary() -> str:
    """casslab-load: $CASSLAB_LOAD_BIN, the repository's release build, or PATH."""
    env = os.environ.get("CASSLAB_LOAD_BIN")
    if env:
        return env
    repo_build = Path(__file__).resolve().parents[3] / "target" / "release" / "casslab-load"
    if repo_build.exists():
        return str(repo_build)
    found = shutil.which("casslab-load")
    if found:
        return found
    raise PrerequisiteError("casslab-load not found: run `make setup` (cargo build --release) "
                            "or set CASSLAB_LOAD_BIN")


def workload_args(workload: str) -> list[str]:
    """The subcommand part of the command line for a workload name or profile path."""
    if workload in WORKLOADS:
        return list(WORKLOADS[workload])
    if workload.endswith((".yaml", ".yml")):
        if not Path(workload).exists():
            raise UsageError(f"workload profile {workload} does not exist")
        return ["user", "--profile", str(Path(workload).resolve())]
    raise UsageError(f"unknown workload '{workload}' (valid: {', '.join(WORKLOADS)}, or a "
                     "cassandra-stress user profile .yaml)")


def build_command(spec: LoadSpec, hosts: list[str], binary: str,
                  text_format: str = "json") -> list[str]:
    """The full casslab-load command line. The format is forced (last, after the raw
    extras): json puts the JSON lines on stdout; ycsb puts YCSB's text there and the JSON
    lines on stderr, where run_load still reads the summary."""
    if not hosts or not all(h.strip() for h in hosts):
        # The caller's lab says why (e.g. its nodes died); casslab-load could only say
        # that a contact point is empty.
        raise CasslabError(f"no Cassandra node to run {spec.workload} against: the contact "
                           f"points are {hosts!r}")
    options = replace(spec.options, hosts=tuple(hosts), format=None)
    forced = type(spec.options)(format=text_format)
    return [binary, *workload_args(spec.workload), *options.to_argv(), *spec.extra,
            *forced.to_argv()]


class _JsonLines:
    """Reads casslab-load's JSON lines: intervals, the summary, other text kept apart."""

    def __init__(self, on_interval: Callable[[dict[str, Any]], None] | None,
                 sink: IO[str] | None,
                 on_other: Callable[[str], None] | None = None) -> None:
        self.on_interval = on_interval
        self.sink = sink
        self.on_other = on_other
        self.intervals: list[dict[str, Any]] = []
        self.summary: dict[str, Any] | None = None
        self.other: list[str] = []

    def feed(self, line: str) -> None:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            obj = None
        if not isinstance(obj, dict):
            self.other.append(line)
            if self.on_other:
                self.on_other(line)
            return
        if self.sink:
            self.sink.write(line)
        if obj.get("type") == "interval":
            self.intervals.append(obj)
            if self.on_interval:
                self.on_interval(obj)
        elif obj.get("type") == "summary":
            self.summary = obj

    def feed_all(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.feed(line)


def run_load(spec: LoadSpec, *, hosts: list[str], prefix: list[str],
             on_interval: Callable[[dict[str, Any]], None] | None = None,
             raw_out: Path | None = None, text_format: str = "json",
             on_text: Callable[[str], None] | None = None,
             binary: str | None = None, env: Mapping[str, str] | None = None,
             stop_when: Callable[[dict[str, Any]], bool] | None = None,
             on_status: Callable[[str], None] | None = None) -> LoadResult:
    """Run casslab-load to the end and return its summary.

    prefix: e.g. `nsenter --net=/var/run/netns/casslab-LAB` to run inside a lab.
    text_format: json or ycsb, what casslab-load prints on stdout; `on_text` gets each
    stdout line as printed (to pass it through); with ycsb, `on_status` gets each other
    stderr line as printed (YCSB's status lines, which go to stderr as YCSB writes them).
    raw_out receives the JSON lines.
    binary: casslab-load's path where `prefix` runs it (default: find_binary(); the prefix
    may run it elsewhere, e.g. casslab.testbed.hosts.sshrun's over ssh).
    env: variables added to casslab-load's environment (e.g. CASSLAB_USER/PASSWORD).
    stop_when: asked with each interval line; once true, casslab-load is interrupted (it
    ends early with its summary, ended_by "interrupted").
    Raises LoadError with the tool's last stderr lines when it gives no summary.
    """
    cmd = [*prefix, *build_command(spec, hosts, binary or find_binary(), text_format)]
    return run_command(cmd, on_interval=on_interval, raw_out=raw_out,
                       text_format=text_format, on_text=on_text, env=env, stop_when=stop_when,
                       on_status=on_status)


def run_command(cmd: list[str], *, on_interval: Callable[[dict[str, Any]], None] | None = None,
                raw_out: Path | None = None, text_format: str = "json",
                on_text: Callable[[str], None] | None = None,
                env: Mapping[str, str] | None = None,
                stop_when: Callable[[dict[str, Any]], bool] | None = None,
                on_status: Callable[[str], None] | None = None) -> LoadResult:
    """Run a built casslab-load command line (see run_load) and return its summary."""
    sink = raw_out.open("w") if raw_out else None
    stopped: list[bool] = []

    def interval(obj: dict[str, Any]) -> None:
        if on_interval:
            on_interval(obj)
        if stop_when and not stopped and stop_when(obj):
            stopped.append(True)
            proc.send_signal(signal.SIGINT)  # casslab-load then ends with its summary

    reader = _JsonLines(interval, sink, on_status if text_format == "ycsb" else None)
    try:
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, **env} if env else None) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            if text_format == "ycsb":
                # JSON on stderr, text on stdout: both read at once so neither pipe fills.
                side = threading.Thread(target=reader.feed_all, args=(proc.stderr,),
                                        daemon=True)
                side.start()
                for line in proc.stdout:
                    if on_text:
                        on_text(line)
                side.join()
                stderr = "".join(reader.other)
            else:
                for line in proc.stdout:
                    if on_text:
                        on_text(line)
                    reader.feed(line)
                stderr = proc.stderr.read()
            code = proc.wait()
    finally:
        if sink:
            sink.close()
    if reader.summary is None:
        # casslab-load's own errors are one line `error: ...`; the prefix is ours to add.
        tail = " | ".join(ln.removeprefix("error: ")
                          for ln in stderr.strip().splitlines()[-3:]) or "(no output)"
        raise LoadError(f"casslab-load exited {code} without a summary: {tail}")
    return LoadResult(RunSummary.from_json(reader.summary), reader.intervals, cmd)
