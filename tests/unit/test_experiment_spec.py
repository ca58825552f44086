"""Experiment specs: a good one parses; each bad one fails with file:line, field, and
what is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.experiment.spec import SpecError, estimate_size, load_spec, parse_spec

GOOD = """\
name: edge
lab:
  nodes: 3
  profile: rpi3
  set: {concurrent_writes: 16}
workload:
  name: ycsb-a
  records: 1000
  options: {field-length: 50}
factors:
  - {name: nodes, levels: [1, 3]}
  - {name: workload, levels: [ycsb-a, ycsb-c]}
  - {name: cl, levels: [one, QUORUM]}
  - {name: network.delay_ms, levels: [0, 10]}
  - {name: set.concurrent_reads, levels: [8, 32]}
  - {name: option.field-count, levels: [5, 10]}
design: {trials: 5, warmup_trials: 2, randomize: true, seed: 3, reset: truncate}
stop: {ops: 500, timeout_s: 120}
metrics: {interval_s: 0.5}
"""


def test_good_spec_parses() -> None:
    s = parse_spec(GOOD)
    assert s.name == "edge"
    assert s.lab.nodes == 3 and s.lab.profile == "rpi3"
    assert s.lab.overrides == {"concurrent_writes": 16}
    assert [f.name for f in s.factors] == ["nodes", "workload", "cl", "network.delay_ms",
                                           "set.concurrent_reads", "option.field-count"]
    assert [f.kind for f in s.factors] == ["lab", "schema", "workload", "network", "lab",
                                           "workload"]
    assert s.factor("cl").levels == ("ONE", "QUORUM")
    assert s.design.warmup_trials == 2 and s.design.reset == "truncate"
    assert s.stop.ops == 500 and s.stop.timeout_s == 120
    assert s.response == "runtime_s"
    assert s.metrics_interval_s == 0.5


def test_duration_stop_makes_throughput_the_response() -> None:
    s = parse_spec("workload: ycsb-b\nstop: {duration_s: 10, timeout_s: 30}\n")
    assert s.stop.ops is None and s.stop.duration_s == 10
    assert s.response == "ops_s"


def test_several_responses_keep_the_spec_order() -> None:
    s = parse_spec("workload: ycsb-a\nfactors:\n  - {name: workload, levels: [ycsb-a, "
                   "stress-write]}\nanalysis:\n  responses: [read.mean_ms, write.p99_ms, "
                   "all.p999_ms, node_cpu_pct.sum, host_cpu_pct]\n")
    assert s.responses == ("read.mean_ms", "write.p99_ms", "all.p999_ms", "node_cpu_pct.sum",
                           "host_cpu_pct")
    assert s.response == "read.mean_ms"


def test_one_response_is_a_one_element_list() -> None:
    assert parse_spec("workload: ycsb-a\nanalysis: {response: p99_ms}\n").responses == \
        ("p99_ms",)


def test_search_with_relative_levels() -> None:
    s = parse_spec("""\
workload: stress-write
factors:
  - {name: workload, levels: [stress-write, stress-read]}
  - {name: rate, levels: ["100%", "66%"]}
search:
  vary: in_flight
  start: 1
  multiply: 2
  stop_when: {throughput_drop_pct: 10, p99_ms: 50}
""")
    assert s.search is not None and s.search.vary == "in_flight"
    assert s.search.drop_pct == 10 and s.search.p99_ms == 50
    assert s.factor("rate").relative


BAD = [
    # (spec text, line, substrings of the message)
    ("", None, ["empty"]),
    ("workload: [unclosed\n", 2, ["not valid YAML", "expected ',' or ']'"]),
    ("name: x\n", 1, ["workload", "required"]),
    ("workload: ycsb-z\n", 1, ["workload", "'ycsb-z'", "valid:", "ycsb-a"]),
    ("workload: ycsb-a\nlabs: {}\n", 2, ["labs", "unknown key", "valid:", "lab"]),
    ("workload: ycsb-a\nlab:\n  nodes: 0\n", 3, ["lab.nodes", "out of range", ">= 1"]),
    ("workload: ycsb-a\nlab:\n  nodes: three\n", 3, ["lab.nodes", "not an integer"]),
    ("workload: ycsb-a\nlab: {profile: rpi9}\n", 2, ["lab.profile", "'rpi9'", "rpi3"]),
    ("workload: ycsb-a\nlab: {network: carrier-pigeon}\n", 2,
     ["lab.network", "network profile", "wifi"]),
    ("workload: ycsb-a\nfactors: {nodes: [1]}\n", 2, ["factors", "list"]),
    ("workload: ycsb-a\nfactors:\n  - {name: colour, levels: [red]}\n", 3,
     ["factors[0].name", "unknown factor", "nodes, profile"]),
    ("workload: ycsb-a\nfactors:\n  - {name: nodes, levels: []}\n", 3,
     ["factors[0].levels", "non-empty"]),
    ("workload: ycsb-a\nfactors:\n  - name: nodes\n    levels: [1, 2]\n  - name: cl\n"
     "    levels:\n      - ONE\n      - MOST\n", 8,
     ["factors[1].levels[1]", "'MOST'", "consistency level", "QUORUM"]),
    ("workload: ycsb-a\nfactors:\n  - {name: nodes, levels: [1, 1]}\n", 3,
     ["factors[0].levels", "twice"]),
    ("workload: ycsb-a\nfactors:\n  - {name: nodes, levels: [1]}\n  - {name: nodes, "
     "levels: [2]}\n", 4, ["factors[1].name", "listed twice"]),
    ("workload: ycsb-a\nfactors:\n  - {name: network.delay_ms, levels: [-5]}\n", 3,
     ["factors[0].levels[0]", "out of range", ">= 0"]),
    ("workload: ycsb-a\nfactors:\n  - {name: network.loss_pct, levels: [150]}\n", 3,
     ["loss_pct", "<= 100"]),
    ("workload: ycsb-a\nfactors:\n  - {name: rf, levels: [3]}\n", 3,
     ["factors[0].levels[0]", "rf 3 exceeds the smallest node count 1"]),
    ("workload: ycsb-a\nfactors:\n  - {name: compaction, levels: [fast]}\n", 3,
     ["compaction", "stcs, lcs"]),
    ("workload: ycsb-a\nfactors:\n  - {name: rate, levels: ['66%']}\n", 3,
     ["relative to the peak", "no `search:`"]),
    ("workload: ycsb-a\nfactors:\n  - {name: records, levels: ['50%']}\n", 3,
     ["only for", "rate"]),
    ("workload: ycsb-a\nfactors:\n  - {name: cl, levels: [ONE]}\n  - {name: cl_read, "
     "levels: [ALL]}\n", 4, ["cl_read conflicts with factor cl"]),
    ("workload: ycsb-a\nlab: {runtime: docker}\n", 2,
     ["lab.runtime", "'docker'", "process, netns, lxc"]),
    ("workload: ycsb-a\nfactors:\n  - {name: runtime, levels: [process, vm]}\n", 3,
     ["factors[0].levels[1]", "'vm'", "process, netns, lxc"]),
    ("workload: ycsb-a\ndesign: {trials: 0}\n", 2, ["design.trials", ">= 1"]),
    ("workload: ycsb-a\nlab: {max_restarts: -1}\n", 2, ["lab.max_restarts", ">= 0"]),
    ("workload: ycsb-a\nlab: {max_restarts: 101}\n", 2, ["lab.max_restarts", "<= 100"]),
    ("workload: ycsb-a\ndesign: {randomize: maybe}\n", 2, ["design.randomize", "boolean"]),
    ("workload: ycsb-a\ndesign: {reset: reboot}\n", 2,
     ["design.reset", "'reboot'", "none, truncate, recreate, rebuild"]),
    ("workload: ycsb-a\nstop: {duration_s: 60, timeout_s: 30}\n", 2,
     ["stop.timeout_s", "must exceed duration_s"]),
    ("workload: ycsb-a\nstop: {ops: -1}\n", 2, ["stop.ops", ">= 1"]),
    ("workload:\n  name: ycsb-a\n  options: {ops: 5}\n", 3, ["workload.options.ops",
                                                             "stop:"]),
    ("workload:\n  name: ycsb-a\n  options: {hosts: x}\n", 3, ["workload.options.hosts",
                                                               "set by the runner"]),
    ("workload:\n  name: ycsb-a\n  load_options: {rate: 5}\n", 3,
     ["workload.load_options.rate", "shapes only the measured run"]),
    ("workload:\n  name: ycsb-a\n  load_options: {in-flight: 0}\n", 3,
     ["workload.load_options.in-flight", ">= 1"]),
    ("workload:\n  name: ycsb-a\n  load_options: {phase: run}\n", 3,
     ["workload.load_options.phase", "set by the runner"]),
    ("workload:\n  name: ycsb-a\n  load_options: [16]\n", 3,
     ["workload.load_options", "must be a mapping", "in-flight: 16"]),
    ("workload: ycsb-a\nsearch: {start: 1}\n", 2, ["search.vary", "required", "in_flight"]),
    ("workload: ycsb-a\nsearch: {vary: nodes}\n", 2, ["search.vary", "'nodes'", "rate"]),
    ("workload: ycsb-a\nsearch: {vary: rate, multiply: 2, add: 10}\n", 2,
     ["search.add", "either"]),
    ("workload: ycsb-a\nsearch: {vary: in_flight}\nfactors:\n  - {name: in_flight, "
     "levels: [1, 2]}\n", 4, ["in_flight is varied by `search:`", "relative"]),
    ("workload: ycsb-a\nmetrics: {interval_s: 0}\n", 2, ["metrics.interval_s", ">= 0.1"]),
    ("workload: ycsb-a\nanalysis: {response: speed}\n", 2, ["analysis.response", "ops_s"]),
    ("workload: ycsb-a\nanalysis:\n  responses: [read.p99_ms, node_cpu_pct.max]\n", 3,
     ["analysis.responses[1]", "'node_cpu_pct.max' is not a valid response",
      "<op>.<metric>", ".mean, .sum or .<node>"]),
    ("workload: ycsb-a\nanalysis: {responses: [write.mean_ms]}\n", 2,
     ["analysis.responses[0]", "no 'write' operations", "valid: all, read, update, insert"]),
    ("workload: ycsb-a\nanalysis: {responses: []}\n", 2, ["analysis.responses",
                                                           "non-empty list"]),
    ("workload: ycsb-a\nanalysis: {responses: [ops_s, ops_s]}\n", 2, ["listed twice"]),
    ("workload: ycsb-a\nanalysis: {response: ops_s, responses: [ops_s]}\n", 2,
     ["analysis.responses", "not both"]),
    ("workload: ycsb-a\nworkload: ycsb-b\n", 2, ["workload", "twice"]),
    ("name: 'bad name!'\nworkload: ycsb-a\n", 1, ["name", "letters, digits"]),
    ("workload: profiles/missing.yaml\n", 1, ["does not exist"]),
    # hardening: values that pass a naive range check or type test
    ("workload: ycsb-a\nlab:\n  timeout_s: .nan\n", 3, ["lab.timeout_s: .nan is not a finite"]),
    ("workload: ycsb-a\nstop: {duration_s: .inf}\n", 2, ["stop.duration_s: .inf is not a "
                                                          "finite number"]),
    ("workload: ycsb-a\nstop: {duration_s: 1.0e+9}\n", 2, ["stop.duration_s: 1000000000.0 is "
                                                         "out of range", "<= 604800"]),
    ("workload: ycsb-a\nstop: {ops: 1.0e+30}\n", 2, ["stop.ops: 1e+30 is a fraction, not an "
                                                   "integer"]),
    ("workload: ycsb-a\nstop: {ops: null}\n", 2, ["stop: a stop rule needs ops or "
                                                   "duration_s"]),
    ("workload: ycsb-a\nlab: {nodes: true}\n", 2, ["lab.nodes: True is a boolean, not an "
                                                    "integer"]),
    ("workload: ycsb-a\nlab: {nodes: 2.5}\n", 2, ["lab.nodes: 2.5 is a fraction"]),
    ("workload: ycsb-a\ndesign:\n  trails: 3\n", 3, ["design.trails: unknown key (did you "
                                                      "mean trials?)"]),
    ("workload: !!python/name:os.system ycsb-a\n", 1, ["workload: unknown YAML tag"]),
    ("workload: ycsb-a\nfactors:\n  - {name: network.delay_ms, levels: [.nan]}\n", 3,
     ["factors[0].levels[0]", "not a finite number"]),
    # casslab-load's own rules, at validate instead of in every trial
    ("workload: ycsb-a\nfactors:\n  - {name: cl, levels: [ONE, SERIAL]}\n", 3,
     ["factors[0].levels[1]", "'SERIAL'", "consistency level", "LOCAL_ONE"]),
    ("workload: ycsb-a\nfactors:\n  - {name: option.cl-read, levels: [LOCAL_SERIAL]}\n", 3,
     ["factors[0].levels[0]", "(factor option.cl-read) cl-read: 'LOCAL_SERIAL' must be one "
      "of ANY"]),
    ("workload: ycsb-a\nfactors:\n  - {name: cl, levels: [ONE]}\n  - {name: option.cl-read,"
     " levels: [ALL]}\n", 4, ["factors[1].name", "option.cl-read sets casslab-load option "
                              "cl-read, as does factor cl; keep one"]),
    ("workload: ycsb-a\nfactors:\n  - {name: in_flight, levels: [1]}\n  - {name: "
     "option.in-flight, levels: [2]}\n", 4, ["factors[1].name", "as does factor in_flight"]),
    ("workload:\n  name: ycsb-a\n  options:\n    in-flite: 8\n", 4,
     ["workload.options.in-flite", "unknown casslab-load option", "did you mean 'in-flight'"]),
    ("workload:\n  name: ycsb-a\n  options: {workers: 0}\n", 3,
     ["workload.options.workers", "0 must be an integer >= 1"]),
    ("workload:\n  name: ycsb-a\n  options: {field-count: 5}\nfactors:\n  - {name: workload,"
     " levels: [ycsb-a, stress-write]}\n", 3,
     ["workload.options.field-count", "unknown casslab-load option for stress", "(with "
      "workload stress-write)"]),
    ("workload: iot\nfactors:\n  - {name: option.mix, levels: ['insert=1', 'read=1']}\n", 3,
     ["factors[0].levels[1]", "(factor option.mix) mix:", "unknown operation 'read'"]),
    ("workload: ycsb-a\nfactors:\n  - {name: option.tick, levels: [2s]}\n", 3,
     ["factors[0].levels[0]", "'2s' must be a duration >= 1ms and <= 1s"]),
    ("workload: ycsb-a\nfactors:\n  - {name: option.tls-insecure, levels: [true, false]}\n"
     "  - {name: option.tls-ca, levels: [ca.pem]}\n", 3,
     ["factors: in the cell option.tls-insecure=True, option.tls-ca=ca.pem: tls-insecure: "
      "cannot be used with tls-ca"]),
    # casslab.net's own rules
    ("workload: ycsb-a\nfactors:\n  - {name: network.rate_mbit, levels: [1, 0.005]}\n", 3,
     ["factors[0].levels[1]", "rate_mbit: 0.005 is out of range"]),
    ("workload: ycsb-a\nlab:\n  network: {client: {rate_mbit: 0.005}}\n", 3,
     ["lab.network", "rate_mbit: 0.005 is out of range"]),
    ("workload: ycsb-a\nfactors:\n  - {name: nodes, levels: [2, 3]}\n  - {name: "
     "network.node2-node3.delay_ms, levels: [5]}\n", 4,
     ["factors[1].levels[0]", "unknown endpoint 'node3'", "(with 2 nodes)"]),
]


@pytest.mark.parametrize(("text", "line", "parts"), BAD,
                         ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_spec_messages(text: str, line: int | None, parts: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(text, source="s.yaml", base_dir=Path("/nonexistent"))
    msg = str(info.value)
    assert msg.startswith("s.yaml"), msg
    if line is not None:
        assert msg.startswith(f"s.yaml:{line}: "), msg
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"


LARGE = """\
workload: ycsb-a
factors:
  - {name: records, levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
  - {name: in_flight, levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
  - {name: rate, levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
  - {name: option.field-count, levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
  - {name: option.field-length, levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
  - {name: option.seed, levels: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}
"""


def test_a_huge_campaign_is_refused_before_planning_unless_allowed() -> None:
    with pytest.raises(SpecError, match=r"^s.yaml:3: factors: the campaign is too large: "
                       r"1000000 cells, 3000000 trials.*--allow-large$"):
        parse_spec(LARGE, source="s.yaml")
    size = estimate_size(parse_spec(LARGE, source="s.yaml", allow_large=True))
    assert (size.cells, size.trials, size.wall_s) == (10**6, 3 * 10**6, 3 * 10**6 * 600.0)


def test_wall_time_alone_can_make_a_campaign_too_large() -> None:
    text = "workload: ycsb-a\ndesign: {trials: 1000}\nstop: {duration_s: 3600, timeout_s: 4000}\n"
    with pytest.raises(SpecError, match=r"^s.yaml:2: design: .* up to 41.7 days"):
        parse_spec(text, source="s.yaml")
    assert parse_spec(text.replace("1000", "100"), source="s.yaml").design.trials == 100


def test_search_steps_count_in_the_estimate() -> None:
    s = parse_spec("workload: ycsb-a\nsearch: {vary: rate, max_steps: 4, trials: 2, "
                   "duration_s: 10}\nstop: {duration_s: 30}\ndesign: {trials: 3}\n")
    size = estimate_size(s)
    assert (size.cells, size.trials, size.wall_s) == (1, 3 + 8, 3 * 30 + 8 * 10)


def test_load_spec_not_utf8(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_bytes(b"workload: ycsb-a\ndescription: \xff\n")
    with pytest.raises(SpecError, match=rf"^{f}:2: not UTF-8 text"):
        load_spec(f)
def test_consistency_levels_are_spelled_as_casslab_load_takes_them() -> None:
    s = parse_spec("workload: ycsb-a\nfactors:\n  - {name: cl_read, levels: [local-quorum]}\n")
    assert s.factor("cl_read").levels == ("LOCAL_QUORUM",)


def test_load_spec_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read spec"):
        load_spec(tmp_path / "nope.yaml")


def test_user_profile_path_is_relative_to_the_spec(tmp_path: Path) -> None:
    (tmp_path / "prof.yaml").write_text("keyspace: k\n")
    (tmp_path / "s.yaml").write_text("workload: prof.yaml\n")
    s = load_spec(tmp_path / "s.yaml")
    assert s.workload.name == str((tmp_path / "prof.yaml").resolve())


def test_examples_are_valid() -> None:
    # Campaign specs are examples/NNN-*.yaml or examples/NNN-*/*.yaml (a study split into
    # its experiments); plan-*.yaml are planner specs (tested there).
    root = Path(__file__).parents[2] / "examples"
    examples = sorted([*root.glob("[0-9]*.yaml"), *root.glob("[0-9]*/*.yaml")])
    assert len(examples) >= 5
    for path in examples:
        load_spec(path)


def test_link_conditions_combine_with_every_runtime() -> None:
    s = parse_spec("workload: ycsb-a\nlab: {network: wifi}\nfactors:\n"
                   "  - {name: runtime, levels: [process, netns, lxc]}\n")
    assert s.lab.network == "wifi" and s.factor("runtime").levels == ("process", "netns", "lxc")


def test_runtime_is_a_lab_factor_that_rebuilds_and_defaults_to_process() -> None:
    s = parse_spec("workload: ycsb-a\nfactors:\n  - {name: runtime, levels: [process, lxc]}\n")
    assert s.lab.runtime == "process"
    f = s.factor("runtime")
    assert (f.kind, f.levels) == ("lab", ("process", "lxc"))
    assert parse_spec("workload: ycsb-a\nlab: {runtime: netns}\n").lab.runtime == "netns"


def test_a_written_stop_rule_needs_ops_or_duration() -> None:
    with pytest.raises(SpecError, match="stop: a stop rule needs ops or duration_s"):
        parse_spec("workload: ycsb-a\nstop: {timeout_s: 60}\n")
    assert parse_spec("workload: ycsb-a\n").stop.ops == 1000


def test_a_staged_workload_stops_with_its_stages_file() -> None:
    staged = "workload: {name: iot, options: {stages: s.yaml}}\n"
    s = parse_spec(staged + "stop: {timeout_s: 90}\n")
    assert (s.stop.ops, s.stop.duration_s, s.stop.timeout_s) == (None, None, 90.0)
    assert parse_spec(staged).stop.ops is None
    with pytest.raises(SpecError, match=r"^s.yaml:2: stop.duration_s: a staged workload "
                       r"\(workload.options.stages\) ends with its stages file; give only "
                       r"timeout_s$"):
        parse_spec(staged + "stop: {duration_s: 10}\n", source="s.yaml")


def test_threads_levels_conflicting_with_in_flight_name_the_level() -> None:
    text = ("workload: {name: stress-read, options: {in_flight: 8}}\n"
            "factors:\n  - {name: threads, levels: [150, 450]}\n")
    with pytest.raises(SpecError) as info:
        parse_spec(text)
    message = str(info.value)
    assert "factors[0].levels[0]" in message and "cannot be used with in-flight" in message
    assert "\n" not in message


def test_a_ycsb_workload_file_in_a_spec_is_the_builtin_with_its_overrides() -> None:
    repo = Path(__file__).resolve().parents[2]
    spec = parse_spec("workload:\n  ycsb:\n    file: workloads/workloadb\n    props:\n"
                      "      recordcount: 5000\n      threadcount: 4\n"
                      "  options: {threads: 2}\n", base_dir=repo)
    assert spec.workload.name == "ycsb-b"
    assert spec.workload.records == 5000
    assert spec.workload.options == {"threads": 2}  # workload.options win over props


def test_a_bad_ycsb_property_in_a_spec_names_its_line() -> None:
    with pytest.raises(SpecError, match=r"^spec:4: workload\.ycsb\.props\.insertorder: "
                                        r"insertorder=ordered: casslab-load supports only"):
        parse_spec("workload:\n  ycsb:\n    props:\n      insertorder: ordered\n")
    with pytest.raises(SpecError, match=r"workload\.ycsb: operationcount/maxexecutiontime "
                                        r"set ops: a campaign stops trials with `stop:`"):
        parse_spec("workload:\n  ycsb:\n    props: {operationcount: 10}\n")


HOSTS_INVENTORY = """\
all:
  children:
    nodes:
      hosts:
        n1: {ansible_host: 10.0.0.1}
        n2: {ansible_host: 10.0.0.2}
    clients:
      hosts:
        c1: {ansible_host: 10.0.0.9}
"""


def _hosts_spec(tmp_path: Path, lab: str, factors: str = "") -> str:
    (tmp_path / "hosts.yaml").write_text(HOSTS_INVENTORY)
    return (f"name: h\nlab: {{backend: hosts, inventory: hosts.yaml{lab}}}\n"
            f"workload: stress-write\n{factors}")


def test_backend_hosts_takes_its_node_count_and_absolute_path_from_the_inventory(
        tmp_path: Path) -> None:
    spec = parse_spec(_hosts_spec(tmp_path, ""), base_dir=tmp_path)
    assert spec.lab.backend == "hosts"
    assert spec.lab.nodes == 2
    assert spec.lab.inventory == str((tmp_path / "hosts.yaml").resolve())


@pytest.mark.parametrize(("lab", "factors", "message"), [
    (", nodes: 3", "", "lab.nodes: 3: the inventory has 2 nodes"),
    (", profile: rpi3", "", "lab.profile: not with backend hosts"),
    (", runtime: lxc", "", "lab.runtime: not with backend hosts"),
    ("", "factors: [{name: nodes, levels: [1, 2]}]\n", "nodes: not a factor with backend hosts"),
    ("", "factors: [{name: profile.cpu_cores, levels: [1, 2]}]\n",
     "profile.cpu_cores: not a factor with backend hosts"),
    ("", "factors: [{name: profile.memory_mib, levels: [1024, 2048]}]\n",
     "profile.memory_mib: not a factor with backend hosts"),
])
def test_backend_hosts_refuses_what_the_inventory_fixes(tmp_path: Path, lab: str,
                                                         factors: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace(".", r"\.", 1)):
        parse_spec(_hosts_spec(tmp_path, lab, factors), base_dir=tmp_path)


@pytest.mark.parametrize(("lab", "message"), [
    ("{backend: hosts}", "lab.inventory: is required with backend hosts"),
    ("{backend: hosts, inventory: nope.yaml}", "lab.inventory: nope.yaml: no such file"),
    ("{inventory: hosts.yaml}", "lab.inventory: only with `backend: hosts`"),
    ("{backend: cloud}", "lab.backend"),
])
def test_backend_and_inventory_errors_name_the_field(tmp_path: Path, lab: str,
                                                     message: str) -> None:
    (tmp_path / "hosts.yaml").write_text(HOSTS_INVENTORY)
    with pytest.raises(SpecError, match=message):
        parse_spec(f"name: h\nlab: {lab}\nworkload: stress-write\n", base_dir=tmp_path)
def test_workload_clients_defaults_to_one_and_takes_up_to_64() -> None:
    assert parse_spec("workload: ycsb-a\n").workload.clients == 1
    assert parse_spec("workload: {name: ycsb-a, clients: 4}\n").workload.clients == 4
    for bad in ("0", "65", "2.5"):
        with pytest.raises(SpecError) as info:
            parse_spec(f"workload: {{name: ycsb-a, clients: {bad}}}\n", source="s.yaml")
        msg = str(info.value)
        assert "workload.clients" in msg and "\n" not in msg, msg


def test_lab_max_restarts_defaults_to_3_and_0_turns_restarts_off() -> None:
    assert parse_spec("workload: ycsb-a\n").lab.max_restarts == 3
    assert parse_spec("workload: ycsb-a\nlab: {max_restarts: 0}\n").lab.max_restarts == 0


def test_backend_hosts_refuses_kept_labs(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"design\.labs: keep pauses local nodes"):
        parse_spec(_hosts_spec(tmp_path, "", "design: {labs: keep}\n"), base_dir=tmp_path)
