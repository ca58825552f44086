"""Planner specs: good ones parse, bad ones are refused naming file:line, field, what is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from casslab.core.errors import UsageError
from casslab.plan.spec import (
    PlanSpecError,
    load_plan_spec,
    parse_duration_s,
    parse_plan_spec,
)

GOOD = """\
name: small
vm_types:
  micro: {cores: 1, memory_gb: 1, heap_gb: 0.5, price_hour: 0.01}
  medium: {cores: 2, memory_gb: 4, heap_gb: 2}
hosts: {count: 3, cores: 8, memory_gb: 16, pmax_w: 400, idle_fraction: 0.7}
tenants:
  - {name: A, workload: RW, min_ops_s: 8000, rf: 3, dataset_gb: 1}
throughput:
  RW: {micro: {3: 2795, 6: 7899}}
"""


def test_good_spec_parses() -> None:
    spec = parse_plan_spec(GOOD)
    assert spec.name == "small" and spec.mode == "power"
    assert [h.name for h in spec.hosts] == ["server1", "server2", "server3"]
    assert spec.vm("medium").price_hour is None
    assert spec.tenants[0].line == 7
    assert spec.throughput[("RW", "micro")] == ((3, 2795.0), (6, 7899.0))


def test_host_list_names_and_counts() -> None:
    text = GOOD.replace(
        "hosts: {count: 3, cores: 8, memory_gb: 16, pmax_w: 400, idle_fraction: 0.7}",
        "hosts:\n  - {name: big, count: 2, cores: 16, memory_gb: 64, pmax_w: 500, "
        "idle_fraction: 0.7}\n  - {name: edge, cores: 4, memory_gb: 8, pmax_w: 60, "
        "idle_fraction: 0.5}")
    spec = parse_plan_spec(text)
    assert [h.name for h in spec.hosts] == ["big1", "big2", "edge"]
    assert spec.hosts[2].pmax_w == 60


@pytest.mark.parametrize(("old", "new", "message"), [
    ("name: small\n", "name: small\ncolour: blue\n",
     "plan:2: colour: unknown key (valid: name, description, mode, vm_types, hosts, tenants, "
     "throughput, throughput_from, placement)"),
    ("rf: 3,", "rf: 0,", "plan:7: tenants[0].rf: 0 is out of range (valid: >= 1 and <= 64)"),
    ("min_ops_s: 8000", "min_ops_s: fast",
     "plan:7: tenants[0].min_ops_s: 'fast' is not a number (valid: >= 0)"),
    ("idle_fraction: 0.7", "idle_fraction: 1.5",
     "plan:5: hosts.idle_fraction: 1.5 is out of range (valid: >= 0 and <= 1)"),
    ("pmax_w: 400, ", "", "plan:5: hosts.pmax_w: is required (hosts need cores, memory_gb, "
     "pmax_w, idle_fraction)"),
    ("heap_gb: 2}", "heap_gb: 8}",
     "plan:4: vm_types.medium.heap_gb: 8 is out of range (valid: > 0 and <= 4)"),
    ("workload: RW,", "workload: scan,",
     "plan:7: tenants[0].workload: 'scan' has no throughput model (valid: RW)"),
    ("RW: {micro:", "RW: {huge:",
     "plan:9: throughput.RW.huge: 'huge' is not a valid VM type (valid: micro, medium)"),
    ("{3: 2795,", "{three: 2795,",
     "plan:9: throughput.RW.micro.three: 'three': cluster sizes must be integers >= 1"),
    ("name: small\n", "name: small\nmode: green\n",
     "plan:2: mode: 'green' is not a valid mode (valid: power, cost)"),
    ("name: small\n", "name: small\nmode: cost\n",
     "plan:5: vm_types.medium.price_hour: is required with mode cost"),
    ("tenants:\n  - {name: A,",
     "tenants:\n  - {name: A, workload: RW, min_ops_s: 1}\n  - {name: A,",
     "plan:8: tenants[1].name: tenant 'A' is defined twice"),
    ("throughput:\n  RW: {micro: {3: 2795, 6: 7899}}\n", "",
     "plan:1: throughput: a throughput model is required"),
    ("tenants:", "tenant:", "plan:6: tenant: unknown key"),
    ("vm_types:\n", "vm_types: [\n", "plan:4: not valid YAML"),
])
def test_bad_specs_are_refused_with_their_messages(old: str, new: str, message: str) -> None:
    assert old in GOOD
    with pytest.raises(PlanSpecError) as info:
        parse_plan_spec(GOOD.replace(old, new, 1))
    assert str(info.value).startswith(message), str(info.value)


def test_missing_sections_and_files() -> None:
    with pytest.raises(PlanSpecError, match=r"plan:1: hosts: is required"):
        parse_plan_spec(GOOD.replace("hosts:", "#hosts:"))
    with pytest.raises(PlanSpecError, match="it needs vm_types, hosts and tenants"):
        parse_plan_spec("")
    with pytest.raises(PlanSpecError, match="cannot read plan spec"):
        load_plan_spec(Path("/nonexistent/plan.yaml"))


def test_cost_mode_needs_prices() -> None:
    spec = parse_plan_spec(GOOD)
    with pytest.raises(PlanSpecError, match="mode cost needs price_hour on every VM type; "
                       "missing on medium"):
        spec.with_mode("cost")
    with pytest.raises(PlanSpecError, match="--mode speed: valid modes are power, cost"):
        spec.with_mode("speed")


def test_throughput_from_resolves_relative_paths(tmp_path: Path) -> None:
    text = GOOD + "throughput_from: {results: res, workloads: {RW: ycsb-a}, " \
                  "factors: {vm_type: profile}, statistic: mean}\n"
    (tmp_path / "p.yaml").write_text(text)
    spec = load_plan_spec(tmp_path / "p.yaml")
    assert spec.results is not None
    assert spec.results.path == tmp_path / "res"
    assert spec.results.workloads == {"RW": "ycsb-a"}
    assert spec.results.statistic == "mean"


@pytest.mark.parametrize(("text", "seconds"), [("60s", 60.0), ("2m", 120.0), ("500ms", 0.5),
                                                ("90s", 90.0), ("1h", 3600.0)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize(("text", "message"), [
    ("0s", "must be > 0"), ("-1s", "negative"), ("soon", "is not a duration"),
    ("5 days", "unknown unit 'days'"), ("90", "add a unit, e.g. 90ms or 90s")])
def test_bad_durations(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=f"^--time-limit: .*{message}"):
        parse_duration_s(text)


# (old, new, start of the message): values a naive range check or type test lets through
HARDENED = [
    ("idle_fraction: 0.7", "idle_fraction: .nan",
     "plan:5: hosts.idle_fraction: .nan is not a finite number"),
    ("min_ops_s: 8000", "min_ops_s: .inf", "plan:7: tenants[0].min_ops_s: .inf is not a finite"),
    ("count: 3", "count: true", "plan:5: hosts.count: True is a boolean, not an integer"),
    ("rf: 3", "rf: 2.5", "plan:7: tenants[0].rf: 2.5 is a fraction, not an integer"),
    ("mode", "mdoe", "plan:1: mdoe: unknown key (did you mean mode?)"),
    ("heap_gb: 2}", "heap_gb: 2, heap: 1}",
     "plan:4: vm_types.medium.heap: unknown key (did you mean heap_gb?)"),
    ("name: small", "name: !secret small", "plan:1: name: unknown YAML tag '!secret'"),
]


@pytest.mark.parametrize(("old", "new", "message"), HARDENED)
def test_hardened_values_are_refused_on_one_line(old: str, new: str, message: str) -> None:
    text = GOOD.replace(old, new, 1) if old != "mode" else "mdoe: power\n" + GOOD
    with pytest.raises(PlanSpecError) as info:
        parse_plan_spec(text)
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)
