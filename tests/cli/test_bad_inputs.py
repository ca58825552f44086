"""The bad-input battery: every command and both Rust binaries, fed what careless and
hostile users type. Each case must give ONE line on stderr that names the offending
field or value, the documented exit code (2 usage, 1 runtime failure), no traceback or
backtrace, and leave nothing behind: no file or folder but the inputs, no lab, lock,
namespace, cgroup or process.

Cases are grouped by the classes of issue "Hardening"; no lab is started by any of them.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from casslab.lab.state import system_name

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import CASSLAB

ROOT = Path(__file__).resolve().parents[2]
LOAD = str(ROOT / "target" / "release" / "casslab-load")
NETEM = str(ROOT / "target" / "release" / "casslab-netem")
USAGE, RUNTIME = 2, 1

GOOD_SPEC = """\
name: battery
workload: {name: ycsb-a, records: 100}
factors:
  - {name: nodes, levels: [1]}
design: {trials: 1}
stop: {ops: 100, timeout_s: 60}
"""


def spec(**replace: str) -> str:
    """GOOD_SPEC with whole lines replaced (key -> new line(s))."""
    lines = GOOD_SPEC.splitlines()
    out = []
    for line in lines:
        key = line.split(":", 1)[0]
        out.append(replace.pop(key) if key in replace else line)
    out.extend(replace.values())
    return "\n".join(out) + "\n"


GOOD_PLAN = (ROOT / "examples" / "plan-seed001.yaml").read_text()
GOOD_RULES = """\
twcs:
  - {ttl_s: 180, read_share: 0.1, compaction_window_size: 1,
     compaction_window_unit: MINUTES, min_threshold: 6}
"""


@dataclass(frozen=True)
class Case:
    """One bad input. `argv[0]` is casslab, casslab-load or casslab-netem; `{tmp}` in an
    argument is the case's own directory; `files` are written there first."""

    id: str
    argv: tuple[str, ...]
    code: int
    names: str  # what the one line must contain (case-insensitive)
    files: dict[str, str | bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def c(id: str, cmd: str, code: int, names: str, files: dict[str, str | bytes] | None = None,
      env: dict[str, str] | None = None) -> Case:
    import shlex
    return Case(id, tuple(shlex.split(cmd)), code, names, files or {}, env or {})


# ---- classes of bad input ------------------------------------------------------------------

TRACEBACKS = [
    c("spec-not-utf8", "casslab experiment validate {tmp}/s.yaml", USAGE, "utf-8",
      {"s.yaml": b"name: caf\xe9\nworkload: ycsb-a\n"}),
    c("spec-unknown-tag", "casslab experiment validate {tmp}/s.yaml", USAGE, "!!python",
      {"s.yaml": "workload: !!python/object:os.system ls\n"}),
    c("spec-custom-tag", "casslab experiment validate {tmp}/s.yaml", USAGE, "!env",
      {"s.yaml": "workload: !env WORKLOAD\n"}),
    c("spec-binary", "casslab experiment validate {tmp}/s.yaml", USAGE, "s.yaml",
      {"s.yaml": bytes(range(256))}),
    c("spec-is-dir", "casslab experiment validate {tmp}", USAGE, "{tmp}"),
    c("spec-missing", "casslab experiment validate {tmp}/nope.yaml", USAGE, "nope.yaml"),
    c("plan-not-utf8", "casslab plan {tmp}/p.yaml", USAGE, "utf-8",
      {"p.yaml": b"name: \xff\xfe\n"}),
    c("plan-unknown-tag", "casslab plan {tmp}/p.yaml", USAGE, "!!python",
      {"p.yaml": "name: !!python/name:os.system\n"}),
    c("rules-not-utf8", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "utf-8", {"r.yaml": b"twcs: \xff\n"}),
    c("rules-unknown-tag", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "!!python", {"r.yaml": "twcs: !!python/tuple [1]\n"}),
    c("profiles-not-utf8", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE, "utf-8",
      {"p.yaml": b"board: {cpu_cores: \xff}\n"}),
    c("profiles-unknown-tag", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "!!python", {"p.yaml": "board: !!python/object:x {}\n"}),
    c("markup-in-lab-name", "casslab lab status --name [/]", USAGE, "[/]"),
    c("markup-in-lab-name-bold", "casslab lab down --name [bold]x", USAGE, "[bold]x"),
    c("markup-in-profile", "casslab lab up --name bat --profile [/red]", USAGE, "[/red]"),
    c("markup-in-net-profile", "casslab lab up --name bat --net [/]", USAGE, "[/]"),
    c("markup-in-workload", "casslab run [red]x --hosts 127.0.0.1", USAGE, "[red]x"),
    c("results-is-file", "casslab report {tmp}/r", USAGE, "{tmp}/r", {"r": "not a dir"}),
    c("export-results-is-file", "casslab experiment export {tmp}/r", USAGE, "{tmp}/r",
      {"r": "not a dir"}),
    c("run-results-is-file", "casslab experiment run {tmp}/s.yaml --results {tmp}/r", USAGE,
      "{tmp}/r", {"s.yaml": GOOD_SPEC, "r": "x"}),
    c("report-corrupt-db", "casslab report {tmp}/r", RUNTIME, "results.db",
      {"r/results.db": b"this is not sqlite" * 100}),
    c("export-corrupt-db", "casslab experiment export {tmp}/r", RUNTIME, "results.db",
      {"r/results.db": b"SQLite format 3\x00" + b"\x00" * 200}),
    c("run-corrupt-db", "casslab experiment run {tmp}/s.yaml --results {tmp}/r", RUNTIME,
      "results.db", {"s.yaml": GOOD_SPEC, "r/results.db": b"garbage" * 50}),
    c("plan-throughput-from-corrupt-db", "casslab plan {tmp}/p.yaml", RUNTIME, "results.db",
      {"p.yaml": GOOD_PLAN.split("throughput:")[0]
       + "throughput_from: {results: " + "{tmp}/r}\n",
       "r/results.db": b"garbage" * 50}),
    c("home-is-file", "casslab lab list", USAGE, "CASSLAB_HOME", {"home": "x"},
      {"CASSLAB_HOME": "{tmp}/home"}),
    c("home-is-file-status", "casslab lab status --name x", USAGE, "CASSLAB_HOME",
      {"home": "x"}, {"CASSLAB_HOME": "{tmp}/home"}),
    c("home-unwritable", "casslab lab up --name bat --nodes 1", USAGE, "CASSLAB_HOME",
      {}, {"CASSLAB_HOME": "/proc/casslab-home"}),
    c("run-nan-rate", "casslab run ycsb-a --hosts 127.0.0.1 --rate nan", USAGE, "nan"),
    c("run-inf-rate", "casslab run ycsb-a --hosts 127.0.0.1 --rate inf", USAGE, "inf"),
    c("run-bad-format", "casslab run ycsb-a --hosts 127.0.0.1 --format xml", USAGE, "xml"),
    c("ycsb-unknown-property", "casslab run ycsb -p recordcont=5 --hosts 127.0.0.1", USAGE,
      "recordcont"),
    c("ycsb-file-unknown-property", "casslab run ycsb -P {tmp}/w --hosts 127.0.0.1", USAGE,
      "w:2: unknown YCSB property 'bogusprop'", {"w": "recordcount=10\nbogusprop=1\n"}),
    c("ycsb-insert-range-beyond-records", "casslab run ycsb -p recordcount=100 -p "
      "insertstart=60 -p insertcount=50 --hosts 127.0.0.1", USAGE,
      "insertstart=60 + insertcount=50 is more than recordcount=100"),
    c("run-insert-range-beyond-records", "casslab run ycsb-a --records 100 -p insertstart=60 "
      "-p insertcount=50 --hosts 127.0.0.1", USAGE,
      "--insert-count: insert-start 60 + insert-count 50 is more than records 100"),
    c("stress-malformed-option", "casslab stress write n=10 -rate thread=5 -node 127.0.0.1",
      USAGE, "-rate thread=5"),
    c("stress-unknown-option", "casslab stress write -frobnicate x=1 -node 127.0.0.1",
      USAGE, "-frobnicate"),
    c("tune-nan-min-change", "casslab tune --keyspace k --min-change nan --once", USAGE,
      "nan"),
    c("tune-inf-time-scale", "casslab tune rules --time-scale inf", USAGE, "inf"),
    c("tune-nan-margin", "casslab tune --keyspace k --switch-margin nan --once", USAGE,
      "nan"),
    c("lab-up-nan-timeout", "casslab lab up --name bat --timeout nan", USAGE, "nan"),
    c("lab-start-inf-timeout", "casslab lab start 1 --name bat --timeout inf", USAGE, "inf"),
    c("net-check-nan-seconds", "casslab net check --name bat --bandwidth-seconds nan",
      USAGE, "nan"),
    c("spec-huge-campaign", "casslab experiment plan {tmp}/s.yaml", USAGE, "--allow-large",
      {"s.yaml": spec(factors="factors:\n" + "".join(
          f"  - {{name: set.k{i}, levels: [{', '.join(str(j) for j in range(40))}]}}\n"
          for i in range(8)).rstrip("\n"))}),
]

ACCEPTED_SILENTLY = [
    c("spec-nan-trials", "casslab experiment validate {tmp}/s.yaml", USAGE, "trials",
      {"s.yaml": spec(design="design: {trials: .nan}")}),
    c("spec-inf-timeout", "casslab experiment validate {tmp}/s.yaml", USAGE, "timeout_s",
      {"s.yaml": spec(stop="stop: {ops: 100, timeout_s: .inf}")}),
    c("spec-nan-ops", "casslab experiment validate {tmp}/s.yaml", USAGE, "ops",
      {"s.yaml": spec(stop="stop: {ops: .nan, timeout_s: 60}")}),
    c("spec-nan-duration", "casslab experiment validate {tmp}/s.yaml", USAGE, "duration_s",
      {"s.yaml": spec(stop="stop: {duration_s: .nan, timeout_s: 60}")}),
    c("spec-inf-duration", "casslab experiment validate {tmp}/s.yaml", USAGE, "duration_s",
      {"s.yaml": spec(stop="stop: {duration_s: .inf}")}),
    c("spec-absurd-ops", "casslab experiment validate {tmp}/s.yaml", USAGE, "ops",
      {"s.yaml": spec(stop="stop: {ops: 1000000000000000000000, timeout_s: 60}")}),
    c("spec-stop-without-end", "casslab experiment validate {tmp}/s.yaml", USAGE, "stop",
      {"s.yaml": spec(stop="stop: {timeout_s: 60}")}),
    c("spec-nan-delay-level", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "network.delay_ms", {"s.yaml": spec(factors="factors:\n  - {name: network.delay_ms, "
                                          "levels: [0, .nan]}")}),
    c("spec-tiny-rate", "casslab experiment validate {tmp}/s.yaml", USAGE, "rate_mbit",
      {"s.yaml": spec(factors="factors:\n  - {name: network.rate_mbit, levels: [0.005]}")}),
    c("spec-loss-over-100", "casslab experiment validate {tmp}/s.yaml", USAGE, "loss",
      {"s.yaml": spec(factors="factors:\n  - {name: network.loss_pct, levels: [150]}")}),
    c("spec-cl-serial", "casslab experiment validate {tmp}/s.yaml", USAGE, "SERIAL",
      {"s.yaml": spec(factors="factors:\n  - {name: cl, levels: [SERIAL]}")}),
    c("spec-bad-workload-option", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "field-lenght", {"s.yaml": spec(workload="workload: {name: ycsb-a, records: 100, "
                                      "options: {field-lenght: 10}}")}),
    c("spec-bad-workload-option-value", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "field-length", {"s.yaml": spec(workload="workload: {name: ycsb-a, records: 100, "
                                      "options: {field-length: -3}}")}),
    c("spec-option-factor-typo", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "option.in-fligth", {"s.yaml": spec(factors="factors:\n  - {name: option.in-fligth, "
                                          "levels: [1, 2]}")}),
    c("spec-two-factors-one-option", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "cl-read", {"s.yaml": spec(factors="factors:\n  - {name: cl, levels: [ONE]}\n"
                                 "  - {name: option.cl-read, levels: [ALL]}")}),
    c("spec-link-unknown-node", "casslab experiment validate {tmp}/s.yaml", USAGE, "node7",
      {"s.yaml": spec(factors="factors:\n  - {name: network.node1-node7.delay_ms, "
                      "levels: [5]}")}),
    c("spec-link-to-itself", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "node1-node1", {"s.yaml": spec(factors="factors:\n"
                                     "  - {name: network.node1-node1.delay_ms, levels: [5]}")}),
    c("spec-bool-trials", "casslab experiment validate {tmp}/s.yaml", USAGE, "trials",
      {"s.yaml": spec(design="design: {trials: true}")}),
    c("spec-fraction-nodes", "casslab experiment validate {tmp}/s.yaml", USAGE, "nodes",
      {"s.yaml": spec(factors="factors:\n  - {name: nodes, levels: [1.5]}")}),
    c("plan-nan-min-ops", "casslab plan {tmp}/p.yaml", USAGE, "min_ops_s",
      {"p.yaml": GOOD_PLAN.replace("min_ops_s: 8000", "min_ops_s: .nan", 1)}),
    c("plan-inf-pmax", "casslab plan {tmp}/p.yaml", USAGE, "pmax_w",
      {"p.yaml": GOOD_PLAN.replace("pmax_w: 425", "pmax_w: .inf")}),
    c("plan-nan-idle", "casslab plan {tmp}/p.yaml", USAGE, "idle_fraction",
      {"p.yaml": GOOD_PLAN.replace("idle_fraction: 0.82", "idle_fraction: .nan")}),
    c("plan-bool-count", "casslab plan {tmp}/p.yaml", USAGE, "count",
      {"p.yaml": GOOD_PLAN.replace("count: 8", "count: true")}),
    c("plan-fraction-count", "casslab plan {tmp}/p.yaml", USAGE, "count",
      {"p.yaml": GOOD_PLAN.replace("count: 8", "count: 7.5")}),
    c("plan-nan-throughput", "casslab plan {tmp}/p.yaml", USAGE, "throughput",
      {"p.yaml": GOOD_PLAN.replace("{3: 2795, 6: 7899}", "{3: .nan, 6: 7899}")}),
    c("rules-nan-ttl", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "ttl_s", {"r.yaml": GOOD_RULES.replace("ttl_s: 180", "ttl_s: .nan")}),
    c("rules-inf-share", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "read_share", {"r.yaml": GOOD_RULES.replace("read_share: 0.1", "read_share: .inf")}),
    c("rules-bool-window", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "compaction_window_size",
      {"r.yaml": GOOD_RULES.replace("compaction_window_size: 1", "compaction_window_size: true")}),
    c("rules-fraction-threshold", "casslab tune --keyspace k --rules {tmp}/r.yaml --once",
      USAGE, "min_threshold",
      {"r.yaml": GOOD_RULES.replace("min_threshold: 6", "min_threshold: 6.5")}),
    c("profiles-bool-memory", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "memory_mib", {"p.yaml": "board: {cpu_cores: 1, memory_mib: true}\n"}),
    c("profiles-fraction-memory", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "memory_mib", {"p.yaml": "board: {cpu_cores: 1, memory_mib: 512.5}\n"}),
    c("profiles-nan-cores", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "cpu_cores", {"p.yaml": "board: {cpu_cores: .nan}\n"}),
    c("profiles-inf-disk", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "disk_write", {"p.yaml": "board: {disk_write_mbps: .inf}\n"}),
    c("profiles-bool-heap", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "heap_mib", {"p.yaml": "board: {heap_mib: false}\n"}),
    c("profiles-unknown-burst", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "board.burst: 't3.micro'", {"p.yaml": "board: {cpu_cores: 1, burst: t3.micro}\n"}),
    c("credit-time-scale-zero", "casslab lab up --name bat --nodes 1 --profile t2.micro",
      USAGE, "CASSLAB_CREDIT_TIME_SCALE=0", env={"CASSLAB_CREDIT_TIME_SCALE": "0"}),
    c("net-spec-nan-delay", "casslab net set --name bat --spec {tmp}/n.yaml", USAGE,
      "delay", {"n.yaml": "all: {delay_ms: .nan}\n"}),
    c("net-spec-link-unknown-key", "casslab net set --name bat --spec {tmp}/n.yaml", USAGE,
      "delya_ms", {"n.yaml": "links:\n  node1-node2: {delya_ms: 5}\n"}),
    c("net-spec-link-to-itself", "casslab net set --name bat --spec {tmp}/n.yaml", USAGE,
      "node2-node2", {"n.yaml": "links:\n  node2-node2: {delay_ms: 5}\n"}),
    c("net-link-to-itself", "casslab net set --name bat --link node1-node1:delay=5ms", USAGE,
      "node1-node1"),
]

SEVERAL_LINES = [
    c("click-bad-int-nodes", "casslab lab up --name bat --nodes three", USAGE, "three"),
    c("click-bad-float-timeout", "casslab lab up --name bat --timeout soon", USAGE, "soon"),
    c("click-bad-int-lines", "casslab lab logs 1 --name bat --lines many", USAGE, "many"),
    c("click-bad-int-pings", "casslab net check --name bat --pings lots", USAGE, "lots"),
    c("click-bad-int-ops", "casslab run ycsb-a --hosts 127.0.0.1 --ops 1e3x", USAGE, "1e3x"),
    c("click-bad-float-rate", "casslab run ycsb-a --hosts 127.0.0.1 --rate fast", USAGE,
      "fast"),
    c("click-unknown-option", "casslab lab up --name bat --nodez 3", USAGE, "--nodez"),
    c("click-unknown-command", "casslab lab upp", USAGE, "upp"),
    c("click-unknown-top-command", "casslab labs", USAGE, "labs"),
    c("click-missing-argument", "casslab report", USAGE, "DIR"),
    c("click-missing-spec", "casslab experiment validate", USAGE, "SPEC"),
    c("click-missing-value", "casslab lab up --name", USAGE, "--name"),
    c("click-bad-int-iterations", "casslab tune --keyspace k --iterations x", USAGE, "x"),
    c("click-bad-int-trials", "casslab tune learn --trials x", USAGE, "x"),
    c("click-bad-float-min-change", "casslab tune --keyspace k --min-change big", USAGE,
      "big"),
    c("click-bad-int-seed", "casslab net set --name bat --seed abc", USAGE, "abc"),
    c("profiles-bad-yaml", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "p.yaml:", {"p.yaml": "board: {cpu_cores: [1\n"}),
    c("net-spec-bad-yaml", "casslab net set --name bat --spec {tmp}/n.yaml", USAGE, "n.yaml:",
      {"n.yaml": "links: {a: [\n"}),
    c("rules-bad-yaml", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "r.yaml:", {"r.yaml": "twcs: [\n"}),
    c("plan-bad-yaml", "casslab plan {tmp}/p.yaml", USAGE, "p.yaml:",
      {"p.yaml": "hosts: {count: [\n"}),
    c("load-unknown-flag", "casslab-load ycsb --workload a --bogus 1", USAGE, "--bogus"),
    c("load-bad-int", "casslab-load ycsb --workload a --records lots", USAGE, "lots"),
    c("load-missing-subcommand", "casslab-load", USAGE, "subcommand"),
    c("load-unknown-subcommand", "casslab-load ycsbb", USAGE, "ycsbb"),
    c("load-bad-workload-letter", "casslab-load ycsb --workload z", USAGE, "z"),
    c("load-bad-cl", "casslab-load ycsb --workload a --cl-read SOMETIMES", USAGE,
      "SOMETIMES"),
    c("load-bad-duration", "casslab-load ycsb --workload a --duration forever", USAGE,
      "forever"),
    c("netem-unknown-flag", "casslab-netem --bogus", USAGE, "--bogus"),
    c("netem-missing-config", "casslab-netem check-config --config {tmp}/none.json", RUNTIME,
      "none.json"),
    c("netem-bad-json", "casslab-netem check-config --config {tmp}/c.json", RUNTIME,
      "c.json",
      {"c.json": "{not json"}),
    c("netem-backtrace-env", "casslab-netem check-config --config {tmp}/c.json", RUNTIME,
      "c.json",
      {"c.json": "{not json"}, {"RUST_BACKTRACE": "1"}),
    c("load-backtrace-env", "casslab-load iot --stages {tmp}/st.yaml",
      USAGE, "st.yaml", {}, {"RUST_BACKTRACE": "full"}),
]

UNNAMED_CAUSE = [
    c("load-negative-ops", "casslab-load ycsb --workload a --ops -1", USAGE, "-1"),
    c("load-negative-duration", "casslab-load ycsb --workload a --duration -5s", USAGE,
      "-5s"),
    c("load-zero-workers", "casslab-load ycsb --workload a --workers 0", USAGE, "workers"),
    c("load-stages-unknown-key", "casslab-load iot --stages {tmp}/st.yaml", USAGE,
      "duratoin", {"st.yaml": "- {duratoin: 10s}\n"}),
    c("load-stages-not-list", "casslab-load iot --stages {tmp}/st.yaml", USAGE, "st.yaml",
      {"st.yaml": "stage: 1\n"}),
    c("load-empty-hosts", "casslab-load ycsb --workload a --hosts ''", USAGE, "hosts"),
    c("load-hosts-comma-only", "casslab-load ycsb --workload a --hosts ,", USAGE, "hosts"),
    c("run-empty-hosts", "casslab run ycsb-a --hosts ''", USAGE, "--hosts"),
    c("run-hosts-commas", "casslab run ycsb-a --hosts ,,", USAGE, "--hosts"),
    c("tune-empty-hosts", "casslab tune --keyspace k --hosts '' --once", USAGE, "--hosts"),
    c("netem-config-missing-field", "casslab-netem check-config --config {tmp}/c.json", RUNTIME,
      "c.json",
      {"c.json": "{}"}),
    c("netem-config-wrong-type", "casslab-netem check-config --config {tmp}/c.json", RUNTIME,
      "c.json",
      {"c.json": "[1, 2, 3]"}),
    c("run-negative-ops", "casslab run ycsb-a --hosts 127.0.0.1 --ops -1", USAGE, "--ops"),
    c("run-zero-workers", "casslab run ycsb-a --hosts 127.0.0.1 --workers 0", USAGE,
      "--workers"),
    c("run-bad-phase", "casslab run ycsb-a --hosts 127.0.0.1 --phase warm", USAGE, "warm"),
    c("run-bad-duration", "casslab run ycsb-a --hosts 127.0.0.1 --duration 10x", USAGE,
      "10x"),
    c("run-bare-duration", "casslab run ycsb-a --hosts 127.0.0.1 --duration 10", USAGE,
      "--duration"),
    c("run-bad-warmup", "casslab run ycsb-a --hosts 127.0.0.1 --warmup soon", USAGE, "soon"),
    c("run-bad-cl", "casslab run ycsb-a --hosts 127.0.0.1 --cl-read MOST", USAGE, "MOST"),
    c("run-unknown-workload", "casslab run ycsb-q --hosts 127.0.0.1", USAGE, "ycsb-q"),
    c("run-missing-profile-file", "casslab run {tmp}/none.yaml --hosts 127.0.0.1", USAGE,
      "none.yaml"),
    c("run-zero-rf", "casslab run ycsb-a --hosts 127.0.0.1 --rf 0", USAGE, "--rf"),
    c("run-negative-records", "casslab run ycsb-a --hosts 127.0.0.1 --records -5", USAGE,
      "--records"),
    c("run-negative-rate", "casslab run ycsb-a --hosts 127.0.0.1 --rate -10", USAGE,
      "--rate"),
    c("run-bad-host", "casslab run ycsb-a --hosts 'exa mple:9042'", USAGE, "exa mple"),
    c("run-bad-port", "casslab run ycsb-a --hosts 127.0.0.1:99999", USAGE, "99999"),
    c("tune-bad-interval", "casslab tune --keyspace k --interval fast --once", USAGE, "fast"),
    c("tune-bare-interval", "casslab tune --keyspace k --interval 10 --once", USAGE,
      "--interval"),
    c("tune-zero-interval", "casslab tune --keyspace k --interval 0s --once", USAGE,
      "--interval"),
    c("tune-bad-min-interval", "casslab tune --keyspace k --min-interval x --once", USAGE,
      "x"),
    c("tune-negative-min-change", "casslab tune --keyspace k --min-change -1 --once", USAGE,
      "--min-change"),
    c("tune-bad-rate-source", "casslab tune --keyspace k --rate-source magic --once", USAGE,
      "magic"),
    c("tune-bad-keyspace", "casslab tune --keyspace 'a b' --once", USAGE, "a b"),
    c("tune-missing-keyspace", "casslab tune --once", USAGE, "--keyspace"),
    c("tune-missing-rules", "casslab tune --keyspace k --rules {tmp}/none.yaml --once",
      USAGE, "none.yaml"),
    c("tune-zero-time-scale", "casslab tune rules --time-scale 0", USAGE, "--time-scale"),
    c("tune-tiny-time-scale", "casslab tune rules --time-scale 1e-9", USAGE,
      "--time-scale 1e-09: valid is 1/60 (0.01667) to 1"),
    c("tune-large-time-scale", "casslab tune rules --time-scale 3", USAGE,
      "--time-scale 3: valid is 1/60"),
    c("tune-daemon-tiny-time-scale", "casslab tune --keyspace k --time-scale 1e-9 --once",
      USAGE, "--time-scale 1e-09: valid is 1/60"),
    c("learn-bad-windows", "casslab tune learn --windows 1m,x", USAGE, "x"),
    c("learn-negative-ttls", "casslab tune learn --ttls -5", USAGE, "--ttls"),
    c("learn-share-over-one", "casslab tune learn --read-shares 1.5", USAGE, "1.5"),
    c("learn-bad-ucs", "casslab tune learn --ucs X4", USAGE, "X4"),
    c("learn-zero-trials", "casslab tune learn --trials 0", USAGE, "--trials"),
    c("learn-bad-duration", "casslab tune learn --duration long", USAGE, "long"),
    c("learn-bad-profile", "casslab tune learn --profile rpi9", USAGE, "rpi9"),
    c("learn-zero-nodes", "casslab tune learn --nodes 0", USAGE, "--nodes"),
    c("plan-bad-mode", "casslab plan {tmp}/p.yaml --mode speed", USAGE, "speed",
      {"p.yaml": GOOD_PLAN}),
    c("plan-bad-time-limit", "casslab plan {tmp}/p.yaml --time-limit soon", USAGE, "soon",
      {"p.yaml": GOOD_PLAN}),
    c("plan-missing", "casslab plan {tmp}/none.yaml", USAGE, "none.yaml"),
    c("plan-empty", "casslab plan {tmp}/p.yaml", USAGE, "p.yaml", {"p.yaml": ""}),
    c("plan-unknown-key", "casslab plan {tmp}/p.yaml", USAGE, "hostz",
      {"p.yaml": GOOD_PLAN.replace("hosts:", "hostz:")}),
    c("plan-unknown-vm-type", "casslab plan {tmp}/p.yaml", USAGE, "t9.huge",
      {"p.yaml": GOOD_PLAN.replace("    t2.micro:  {3: 2795", "    t9.huge:  {3: 2795")}),
    c("export-bad-format", "casslab experiment export {tmp}/r --format xls", USAGE, "xls",
      {"r/placeholder": ""}),
    c("export-missing-dir", "casslab experiment export {tmp}/none", USAGE, "none"),
    c("report-missing-dir", "casslab report {tmp}/none", USAGE, "none"),
    c("report-empty-dir", "casslab report {tmp}/r", USAGE, "results.db",
      {"r/placeholder": ""}),
    c("lab-up-zero-nodes", "casslab lab up --name bat --nodes 0", USAGE, "--nodes"),
    c("lab-up-negative-nodes", "casslab lab up --name bat --nodes -2", USAGE, "--nodes"),
    c("lab-up-bad-set", "casslab lab up --name bat --set =5", USAGE, "=5"),
    c("lab-up-bad-version", "casslab lab up --name bat --cassandra-version 5.x", USAGE,
      "5.x"),
    c("lab-up-missing-profiles-file",
      "casslab lab up --name bat --profiles-file {tmp}/none.yaml --profile b", USAGE,
      "none.yaml"),
    c("lab-up-missing-net-file", "casslab lab up --name bat --net {tmp}/none.yaml", USAGE,
      "none.yaml"),
    c("lab-up-long-name", "casslab lab up --name " + "x" * 80, USAGE, "x" * 20),
    c("lab-up-slash-name", "casslab lab up --name a/b", USAGE, "a/b"),
    c("lab-up-dotdot-name", "casslab lab up --name ..", USAGE, ".."),
    c("lab-cql-bad-cl", "casslab lab cql 'SELECT 1' --name bat --cl MOST", USAGE, "MOST"),
    c("lab-logs-negative-lines", "casslab lab logs 1 --name bat --lines -3", USAGE,
      "--lines"),
    c("lab-logs-bad-node", "casslab lab logs nodeX --name bat", USAGE, "nodeX"),
    c("lab-stop-bad-node", "casslab lab stop 0 --name bat", USAGE, "0"),
    c("net-bad-delay", "casslab net set --name bat --delay 10parsecs", USAGE, "10parsecs"),
    c("net-bare-delay", "casslab net set --name bat --delay 10", USAGE, "--delay"),
    c("net-negative-delay", "casslab net set --name bat --delay -5ms", USAGE, "-5ms"),
    c("net-loss-150", "casslab net set --name bat --loss 150%", USAGE, "150%"),
    c("net-loss-negative", "casslab net set --name bat --loss -1%", USAGE, "-1%"),
    c("net-bad-rate", "casslab net set --name bat --rate 10mbps", USAGE, "10mbps"),
    c("net-zero-rate", "casslab net set --name bat --rate 0mbit", USAGE, "0mbit"),
    c("net-bad-jitter", "casslab net set --name bat --jitter lots", USAGE, "lots"),
    c("net-bad-burst", "casslab net set --name bat --burst -2", USAGE, "--burst"),
    c("net-bad-cc", "casslab net set --name bat --cc vegas", USAGE, "vegas"),
    c("net-bad-profile", "casslab net set --name bat --profile dialup", USAGE, "dialup"),
    c("net-bad-client-delay", "casslab net set --name bat --client-delay 1ms,x", USAGE, "x"),
    c("net-bad-node-delay", "casslab net set --name bat --node-delay ,", USAGE,
      "--node-delay"),
    c("net-bad-link-syntax", "casslab net set --name bat --link node1node2", USAGE,
      "node1node2"),
    c("net-bad-link-field", "casslab net set --name bat --link node1-node2:dly=5ms", USAGE,
      "dly"),
    c("net-bad-link-endpoint", "casslab net set --name bat --link router-node2:delay=5ms",
      USAGE, "router"),
    c("net-missing-spec-file", "casslab net set --name bat --spec {tmp}/none.yaml", USAGE,
      "none.yaml"),
    c("net-check-zero-pings", "casslab net check --name bat --pings 0", USAGE, "--pings"),
    c("net-check-negative-loss", "casslab net check --name bat --loss-packets -1", USAGE,
      "--loss-packets"),
    c("net-check-bad-link", "casslab net check --name bat --link x-y", USAGE, "x-y"),
    c("spec-empty", "casslab experiment validate {tmp}/s.yaml", USAGE, "empty",
      {"s.yaml": ""}),
    c("spec-list", "casslab experiment validate {tmp}/s.yaml", USAGE, "mapping",
      {"s.yaml": "- a\n- b\n"}),
    c("spec-duplicate-key", "casslab experiment validate {tmp}/s.yaml", USAGE, "workload",
      {"s.yaml": "workload: ycsb-a\nworkload: ycsb-b\n"}),
    c("spec-unknown-top-key", "casslab experiment validate {tmp}/s.yaml", USAGE, "factor",
      {"s.yaml": GOOD_SPEC + "factor: []\n"}),
    c("spec-unknown-profile", "casslab experiment validate {tmp}/s.yaml", USAGE, "rpi9",
      {"s.yaml": GOOD_SPEC + "lab: {profile: rpi9}\n"}),
    c("spec-unknown-factor", "casslab experiment validate {tmp}/s.yaml", USAGE, "colour",
      {"s.yaml": spec(factors="factors:\n  - {name: colour, levels: [red]}")}),
    c("spec-empty-levels", "casslab experiment validate {tmp}/s.yaml", USAGE, "levels",
      {"s.yaml": spec(factors="factors:\n  - {name: nodes, levels: []}")}),
    c("spec-duplicate-factor", "casslab experiment validate {tmp}/s.yaml", USAGE, "nodes",
      {"s.yaml": spec(factors="factors:\n  - {name: nodes, levels: [1]}\n"
                      "  - {name: nodes, levels: [2]}")}),
    c("spec-zero-trials", "casslab experiment validate {tmp}/s.yaml", USAGE, "trials",
      {"s.yaml": spec(design="design: {trials: 0}")}),
    c("spec-negative-warmup", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "warmup_trials", {"s.yaml": spec(design="design: {trials: 1, warmup_trials: -1}")}),
    c("spec-bad-reset", "casslab experiment validate {tmp}/s.yaml", USAGE, "reset",
      {"s.yaml": spec(design="design: {trials: 1, reset: reboot}")}),
    c("spec-too-many-nodes", "casslab experiment validate {tmp}/s.yaml", USAGE, "nodes",
      {"s.yaml": spec(factors="factors:\n  - {name: nodes, levels: [99]}")}),
    c("spec-bad-net-profile", "casslab experiment validate {tmp}/s.yaml", USAGE, "dialup",
      {"s.yaml": GOOD_SPEC + "lab: {network: dialup}\n"}),
    c("spec-string-trials", "casslab experiment validate {tmp}/s.yaml", USAGE, "trials",
      {"s.yaml": spec(design="design: {trials: five}")}),
    c("spec-ops-and-duration-zero", "casslab experiment validate {tmp}/s.yaml", USAGE,
      "ops", {"s.yaml": spec(stop="stop: {ops: 0}")}),
    c("spec-plan-unknown-key", "casslab experiment plan {tmp}/s.yaml", USAGE, "desing",
      {"s.yaml": GOOD_SPEC.replace("design:", "desing:")}),
    c("rules-empty", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "r.yaml", {"r.yaml": ""}),
    c("rules-unknown-key", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "twcz", {"r.yaml": GOOD_RULES.replace("twcs:", "twcz:")}),
    c("rules-bad-unit", "casslab tune --keyspace k --rules {tmp}/r.yaml --once", USAGE,
      "FORTNIGHTS", {"r.yaml": GOOD_RULES.replace("MINUTES", "FORTNIGHTS")}),
    c("rules-share-over-one", "casslab tune --keyspace k --rules {tmp}/r.yaml --once",
      USAGE, "read_share", {"r.yaml": GOOD_RULES.replace("read_share: 0.1", "read_share: 3")}),
    c("profiles-unknown-key", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "cpu_core", {"p.yaml": "board: {cpu_core: 1}\n"}),
    c("profiles-negative-cores", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE,
      "cpu_cores", {"p.yaml": "board: {cpu_cores: -1}\n"}),
    c("profiles-missing-file", "casslab profiles --profiles-file {tmp}/none.yaml", USAGE,
      "none.yaml"),
    c("profiles-list", "casslab profiles --profiles-file {tmp}/p.yaml", USAGE, "p.yaml",
      {"p.yaml": "- board\n"}),
    c("fetch-bad-version", "casslab fetch --cassandra-version latest", USAGE, "latest"),
    c("schema-unknown-kind", "casslab schema recipes", USAGE, "recipes"),
    c("compare-missing-dirs", "casslab compare {tmp}/a {tmp}/b", USAGE, "{tmp}/a"),
]

LEFT_BEHIND = [
    c("down-missing-lab", "casslab lab down --name ghost", RUNTIME, "ghost"),
    c("status-missing-lab", "casslab lab status --name ghost", RUNTIME, "ghost"),
    c("stop-missing-lab", "casslab lab stop 1 --name ghost", RUNTIME, "ghost"),
    c("start-missing-lab", "casslab lab start 1 --name ghost", RUNTIME, "ghost"),
    c("logs-missing-lab", "casslab lab logs 1 --name ghost", RUNTIME, "ghost"),
    c("exec-missing-lab", "casslab lab exec --name ghost -- true", RUNTIME, "ghost"),
    c("cql-missing-lab", "casslab lab cql 'SELECT 1' --name ghost", RUNTIME, "ghost"),
    c("net-show-missing-lab", "casslab net show --name ghost", RUNTIME, "ghost"),
    c("net-clear-missing-lab", "casslab net clear --name ghost", RUNTIME, "ghost"),
    c("net-check-missing-lab", "casslab net check --name ghost", RUNTIME, "ghost"),
    c("run-missing-lab", "casslab run ycsb-a --name ghost", RUNTIME, "ghost"),
    c("tune-missing-lab", "casslab tune --keyspace k --name ghost --once", RUNTIME, "ghost"),
    c("up-bad-version-no-lock", "casslab lab up --name ghost --cassandra-version 9.9.9",
      RUNTIME, "9.9.9", {}, {"CASSLAB_CACHE": "{tmp}/cache", "PATH": "/usr/bin:/bin"}),
    c("export-no-db-no-folder", "casslab experiment export {tmp}/r", USAGE, "results.db",
      {"r/placeholder": ""}),
]

VALUE_BEFORE_LAB = [
    c("net-loss-before-lab", "casslab net set --name ghost --loss 150%", USAGE, "150%"),
    c("net-delay-before-lab", "casslab net set --name ghost --delay tenms", USAGE, "tenms"),
    c("net-rate-before-lab", "casslab net set --name ghost --rate fast", USAGE, "fast"),
    c("net-link-before-lab", "casslab net set --name ghost --link a-b:delay=1ms", USAGE,
      "a-b"),
    c("run-ops-before-lab", "casslab run ycsb-a --name ghost --ops -1", USAGE, "--ops"),
    c("run-workload-before-lab", "casslab run ycsb-q --name ghost", USAGE, "ycsb-q"),
    c("cql-cl-before-lab", "casslab lab cql 'SELECT 1' --name ghost --cl MOST", USAGE,
      "MOST"),
    c("tune-interval-before-lab", "casslab tune --keyspace k --name ghost --interval x",
      USAGE, "x"),
    c("logs-lines-before-lab", "casslab lab logs 1 --name ghost --lines -1", USAGE,
      "--lines"),
    c("start-timeout-before-lab", "casslab lab start 1 --name ghost --timeout -1", USAGE,
      "--timeout"),
    c("node-profile-form", "casslab lab up --name ghost --node-profile node3", USAGE,
      "--node-profile 'node3'"),
    c("node-profile-node", "casslab lab up --name ghost --nodes 3 --node-profile node5=rpi3",
      USAGE, "node5"),
    c("node-profile-profile", "casslab lab up --name ghost --node-profile node2=rpi9", USAGE,
      "rpi9"),
]

ALL = (TRACEBACKS + ACCEPTED_SILENTLY + SEVERAL_LINES + UNNAMED_CAUSE + LEFT_BEHIND
       + VALUE_BEFORE_LAB)
BINARIES: dict[str, Callable[[], str]] = {"casslab": lambda: CASSLAB,
                                          "casslab-load": lambda: LOAD,
                                          "casslab-netem": lambda: NETEM}


def snapshot(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


def take_down_labs(home: Path, env: dict[str, str]) -> None:
    labs = home / "labs"
    for lab in sorted(labs.iterdir()) if labs.is_dir() else []:
        if (lab / "lab.json").exists():
            subprocess.run([CASSLAB, "lab", "down", "--name", lab.name], env=env,
                           capture_output=True, timeout=120, check=False)


def kernel_state(home: Path) -> set[str]:
    """The namespaces and cgroups of labs of `home`, the case's own CASSLAB_HOME: they
    carry its tag. Labs of other homes may come and go beside a case and are not its
    own: the user's (~/.casslab, a reproduction in the background), the other xdist
    worker's (`make check` runs two), an integration run's."""
    tag = system_name("x", home).rsplit("-", 1)[1]
    found = set()
    netns = Path("/var/run/netns")
    if netns.exists():
        found |= {f"netns {p.name}" for p in netns.iterdir()}
    for ctrl in Path("/sys/fs/cgroup").iterdir():
        cg = ctrl / "casslab"
        if cg.is_dir():
            found |= {f"cgroup {p}" for p in cg.iterdir() if p.is_dir()}
    return {e for e in found if f"-{tag}" in e}


def test_the_battery_is_large_and_ids_are_unique() -> None:
    ids = [case.id for case in ALL]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 150


@pytest.mark.parametrize("case", ALL, ids=[case.id for case in ALL])
def test_bad_input_gives_one_named_line_and_leaves_nothing(case: Case, tmp_path: Path) -> None:
    work = tmp_path / "case"
    work.mkdir()
    home = tmp_path / "casslab-home"
    for name, content in case.files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content.replace("{tmp}", str(work)))
    if (work / "r" / "results.db").exists():
        # Make sure the corrupt database really is corrupt for sqlite.
        with pytest.raises(sqlite3.DatabaseError):
            sqlite3.connect(work / "r" / "results.db").execute("SELECT * FROM sqlite_master")
    argv = [BINARIES[case.argv[0]](), *(a.replace("{tmp}", str(work)) for a in case.argv[1:])]
    env = dict(os.environ, CASSLAB_HOME=str(home), COLUMNS="100")
    env.pop("CASSLAB_DEBUG", None)
    env.update({k: v.replace("{tmp}", str(work)) for k, v in case.env.items()})
    if "PATH" in case.env:
        env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    # the case's own home: a case may set CASSLAB_HOME itself
    case_home = Path(env["CASSLAB_HOME"])
    before_files, before_kernel = snapshot(work), kernel_state(case_home)
    try:
        res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60,
                             check=False)
    finally:
        # A case that wrongly got as far as building a lab (or timed out doing so) must
        # not leave it running for the rest of the suite: take down whatever it made.
        take_down_labs(home, env)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    where = f"{case.id}: exit {res.returncode}\nstderr: {res.stderr!r}"
    assert "Traceback" not in res.stderr and "stack backtrace" not in res.stderr, where
    assert len(lines) == 1, where
    assert lines[0].startswith("error: "), where
    assert case.names.replace("{tmp}", str(work)).lower() in lines[0].lower(), where
    assert res.returncode == case.code, where
    assert snapshot(work) == before_files, f"{where}\nfiles left: " \
        f"{sorted(snapshot(work) - before_files)}"
    assert not home.exists() or not any((home / "labs").glob("*")), \
        f"{where}\nlab state left: {sorted(map(str, home.rglob('*')))}"
    assert kernel_state(case_home) <= before_kernel, \
        f"{where}\nleft: {kernel_state(case_home) - before_kernel}"
