"""Planner specs: YAML in, a validated `PlanSpec` out.

Every error names the file, the line, the field (as a path like `tenants[1].rf`) and
what would be valid, like experiment specs (the YAML-with-lines reader is shared with
casslab.experiment.spec).

Format (units in the key names; see docs/planner.md):

    name: seed001-case1
    mode: power                     # power (default) or cost
    vm_types:
      t2.micro: {cores: 1, memory_gb: 1, heap_gb: 0.5, price_hour: 0.0116}
    hosts: {count: 8, cores: 8, memory_gb: 16, pmax_w: 425, idle_fraction: 0.82}
    tenants:
      - {name: A, workload: RW, min_ops_s: 8000, rf: 3, dataset_gb: 0.5}
    throughput:                     # workload -> VM type -> {nodes: ops/s}
      RW: {t2.micro: {3: 2795, 6: 7899}}
    throughput_from:                # and/or fitted from a campaign's results database
      results: results/aws-ec2
      workloads: {RW: ycsb-a}
    placement: {one_replica_per_host: false, max_nodes_per_tenant: 64}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casslab.core import specio, units
from casslab.core.errors import UsageError
from casslab.core.specio import Doc as _Doc
from casslab.core.specio import Path_, SpecError
from casslab.core.specio import V as _V

MODES = ("power", "cost")
STATISTICS = ("median", "mean", "max", "peak")
TOP_KEYS = ("name", "description", "mode", "vm_types", "hosts", "tenants", "throughput",
            "throughput_from", "placement")
VM_KEYS = ("cores", "memory_gb", "heap_gb", "price_hour")
HOST_KEYS = ("name", "count", "cores", "memory_gb", "pmax_w", "idle_fraction")
TENANT_KEYS = ("name", "workload", "min_ops_s", "rf", "dataset_gb")
FROM_KEYS = ("results", "workloads", "vm_types", "factors", "statistic")
FACTOR_KEYS = ("workload", "vm_type", "nodes")
PLACEMENT_KEYS = ("one_replica_per_host", "max_nodes_per_tenant")
NAME_RE = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
MAX_HOSTS = 4096


class PlanSpecError(SpecError):
    """The planner spec is malformed; the message has file, line, field and what is valid."""


@dataclass(frozen=True)
class VmType:
    name: str
    cores: float
    memory_gb: float
    heap_gb: float
    price_hour: float | None = None


@dataclass(frozen=True)
class Host:
    name: str
    cores: float
    memory_gb: float
    pmax_w: float
    idle_fraction: float

    def kind(self) -> tuple[float, float, float, float]:
        """Hosts with equal kinds are interchangeable (used for symmetry breaking)."""
        return (self.cores, self.memory_gb, self.pmax_w, self.idle_fraction)


@dataclass(frozen=True)
class Tenant:
    name: str
    workload: str
    min_ops_s: float
    rf: int
    dataset_gb: float
    line: int = 0  # where the tenant is defined in the spec (for messages)


@dataclass(frozen=True)
class ResultsSource:
    """Fit throughput models from a campaign's results database."""

    path: Path
    workloads: dict[str, str] = field(default_factory=dict)  # planner -> campaign name
    vm_types: dict[str, str] = field(default_factory=dict)  # planner -> campaign profile
    workload_factor: str = "workload"
    vm_factor: str = "profile"
    nodes_factor: str = "nodes"
    statistic: str = "median"


@dataclass(frozen=True)
class PlanSpec:
    name: str
    source: str
    mode: str
    vm_types: tuple[VmType, ...]
    hosts: tuple[Host, ...]
    tenants: tuple[Tenant, ...]
    # (workload, vm type) -> ((nodes, ops/s), ...) sorted by nodes
    throughput: dict[tuple[str, str], tuple[tuple[int, float], ...]]
    results: ResultsSource | None = None
    one_replica_per_host: bool = False
    max_nodes_per_tenant: int | None = None
    description: str = ""
    text: str = ""

    def vm(self, name: str) -> VmType:
        return next(v for v in self.vm_types if v.name == name)

    def with_mode(self, mode: str) -> PlanSpec:
        """The same spec planned for `mode`; raises PlanSpecError if cost lacks prices."""
        if mode not in MODES:
            raise PlanSpecError(f"--mode {mode}: valid modes are {', '.join(MODES)}")
        if mode == "cost":
            missing = [v.name for v in self.vm_types if v.price_hour is None]
            if missing:
                raise PlanSpecError(f"{self.source}: mode cost needs price_hour on every VM "
                                    f"type; missing on {', '.join(missing)}")
        return PlanSpec(**{**self.__dict__, "mode": mode})


def load_plan_spec(path: Path) -> PlanSpec:
    """Read and validate a planner spec file; raises PlanSpecError (file:line: field: problem)."""
    text = specio.read_text(path, "plan spec", PlanSpecError)
    return parse_plan_spec(text, source=str(path), base_dir=path.parent)


def parse_plan_spec(text: str, *, source: str = "plan", base_dir: Path | None = None) -> PlanSpec:
    """Validate planner spec text; raises PlanSpecError naming field, line and what is valid."""
    # a mapping key's errors point at the key's line (not its value's, which for a block
    # value is the next line)
    doc = _Doc(text, source, error=PlanSpecError, key_lines=True,
               empty="the spec is empty (it needs vm_types, hosts and tenants)")
    v = _V(doc)

    def err(path: Path_, message: str) -> PlanSpecError:
        return PlanSpecError(str(doc.error(path, message)))

    try:
        top = v.mapping(doc.root, (), TOP_KEYS)
        for key in ("vm_types", "hosts", "tenants"):
            if key not in top:
                raise err((key,), "is required (see docs/planner.md for the format)")
        name = v.string(top.get("name", Path(source).stem if source != "plan" else "plan"),
                        ("name",))
        mode = v.choice(top.get("mode", "power"), ("mode",), MODES, "mode")
        vms = _vm_types(v, err, top["vm_types"])
        hosts = _hosts(v, err, top["hosts"])
        tenants = _tenants(v, err, doc, top["tenants"])
        throughput = _throughput(v, err, top.get("throughput"), vms)
        results = _results(v, err, top.get("throughput_from"), base_dir)
        if not throughput and results is None:
            raise err(("throughput",), "a throughput model is required: give `throughput` "
                      "(workload -> VM type -> {nodes: ops_s}) or `throughput_from` "
                      "(a campaign results directory)")
        if results is None:
            known = sorted({w for w, _ in throughput})
            for i, t in enumerate(tenants):
                if t.workload not in known:
                    raise err(("tenants", i, "workload"),
                              f"{t.workload!r} has no throughput model (valid: "
                              f"{', '.join(known)})")
        pl = v.mapping(top.get("placement"), ("placement",), PLACEMENT_KEYS)
        one = v.boolean(pl.get("one_replica_per_host", False),
                        ("placement", "one_replica_per_host"))
        max_nodes = (v.integer(pl["max_nodes_per_tenant"], ("placement", "max_nodes_per_tenant"),
                               1, 100_000) if "max_nodes_per_tenant" in pl else None)
        spec = PlanSpec(name=name, source=source, mode="power", vm_types=vms, hosts=hosts,
                        tenants=tenants, throughput=throughput, results=results,
                        one_replica_per_host=one, max_nodes_per_tenant=max_nodes,
                        description=str(top.get("description") or ""), text=text)
        if mode == "cost":
            for vm in vms:
                if vm.price_hour is None:
                    raise err(("vm_types", vm.name, "price_hour"),
                              "is required with mode cost (price per VM-hour, >= 0)")
        return PlanSpec(**{**spec.__dict__, "mode": mode})
    except SpecError as exc:
        if isinstance(exc, PlanSpecError):
            raise
        raise PlanSpecError(str(exc)) from None


def _vm_types(v: _V, err: Any, raw: Any) -> tuple[VmType, ...]:
    path: Path_ = ("vm_types",)
    if not isinstance(raw, dict) or not raw:
        raise err(path, "must map VM type names to {cores, memory_gb, heap_gb[, price_hour]}")
    out = []
    for name, body in raw.items():
        p = (*path, name)
        if not re.fullmatch(NAME_RE, name):
            raise err(p, f"{name!r}: use letters, digits, '-', '_' or '.' (1-64)")
        m = v.mapping(body, p, VM_KEYS)
        for key in ("cores", "memory_gb", "heap_gb"):
            if key not in m:
                raise err((*p, key), f"is required (VM types need {', '.join(VM_KEYS[:3])})")
        cores = v.number(m["cores"], (*p, "cores"), 0.0, 1024.0, lo_open=True)
        mem = v.number(m["memory_gb"], (*p, "memory_gb"), 0.0, 65536.0, lo_open=True)
        heap = v.number(m["heap_gb"], (*p, "heap_gb"), 0.0, mem, lo_open=True)
        price = (v.number(m["price_hour"], (*p, "price_hour"), 0.0)
                 if m.get("price_hour") is not None else None)
        out.append(VmType(name, cores, mem, heap, price))
    return tuple(out)


def _host(v: _V, err: Any, m: dict[str, Any], p: Path_) -> tuple[str | None, int, Host]:
    for key in ("cores", "memory_gb", "pmax_w", "idle_fraction"):
        if key not in m:
            raise err((*p, key), "is required (hosts need cores, memory_gb, pmax_w, "
                      "idle_fraction)")
    name = m.get("name")
    if name is not None and (not isinstance(name, str) or not re.fullmatch(NAME_RE, name)):
        raise err((*p, "name"), f"{name!r}: use letters, digits, '-', '_' or '.' (1-64)")
    count = v.integer(m.get("count", 1), (*p, "count"), 1, MAX_HOSTS)
    host = Host("", v.number(m["cores"], (*p, "cores"), 0.0, 100_000.0, lo_open=True),
                v.number(m["memory_gb"], (*p, "memory_gb"), 0.0, 1e7, lo_open=True),
                v.number(m["pmax_w"], (*p, "pmax_w"), 0.0, 1e6, lo_open=True),
                v.number(m["idle_fraction"], (*p, "idle_fraction"), 0.0, 1.0))
    return name, count, host


def _hosts(v: _V, err: Any, raw: Any) -> tuple[Host, ...]:
    path: Path_ = ("hosts",)
    if isinstance(raw, dict):
        groups = [(*_host(v, err, v.mapping(raw, path, HOST_KEYS), path), path)]
    elif isinstance(raw, list) and raw:
        groups = [(*_host(v, err, v.mapping(item, (*path, i), HOST_KEYS), (*path, i)),
                   (*path, i)) for i, item in enumerate(raw)]
    else:
        raise err(path, "must be a mapping {count, cores, memory_gb, pmax_w, idle_fraction} "
                  "or a non-empty list of them")
    hosts: list[Host] = []
    seen: set[str] = set()
    for name, count, h, p in groups:
        base = name or "server"
        names = [base] if name and count == 1 else [f"{base}{k}" for k in range(1, count + 1)]
        if not name:  # unnamed groups continue the server numbering
            names = [f"server{len(hosts) + k}" for k in range(1, count + 1)]
        for n in names:
            if n in seen:
                raise err((*p, "name"), f"host name {n!r} is used twice")
            seen.add(n)
            hosts.append(Host(n, h.cores, h.memory_gb, h.pmax_w, h.idle_fraction))
    if len(hosts) > MAX_HOSTS:
        raise err(path, f"{len(hosts)} hosts: at most {MAX_HOSTS}")
    return tuple(hosts)


def _tenants(v: _V, err: Any, doc: _Doc, raw: Any) -> tuple[Tenant, ...]:
    path: Path_ = ("tenants",)
    if not isinstance(raw, list) or not raw:
        raise err(path, "must be a non-empty list of {name, workload, min_ops_s, rf, "
                  "dataset_gb}")
    out: list[Tenant] = []
    for i, item in enumerate(raw):
        p = (*path, i)
        m = v.mapping(item, p, TENANT_KEYS)
        for key in ("name", "workload", "min_ops_s"):
            if key not in m:
                raise err((*p, key), "is required (tenants need name, workload, min_ops_s; "
                          "rf defaults to 3, dataset_gb to 0)")
        name = str(m["name"])
        if not re.fullmatch(NAME_RE, name):
            raise err((*p, "name"), f"{name!r}: use letters, digits, '-', '_' or '.' (1-64)")
        if any(t.name == name for t in out):
            raise err((*p, "name"), f"tenant {name!r} is defined twice")
        workload = v.string(m["workload"], (*p, "workload"))
        out.append(Tenant(name, workload,
                          v.number(m["min_ops_s"], (*p, "min_ops_s"), 0.0),
                          v.integer(m.get("rf", 3), (*p, "rf"), 1, 64),
                          v.number(m.get("dataset_gb", 0.0), (*p, "dataset_gb"), 0.0),
                          line=doc.line(p)))
    return tuple(out)


def _throughput(v: _V, err: Any, raw: Any, vms: tuple[VmType, ...]
                ) -> dict[tuple[str, str], tuple[tuple[int, float], ...]]:
    path: Path_ = ("throughput",)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise err(path, "must map workload -> VM type -> {nodes: ops_s}")
    vm_names = [vm.name for vm in vms]
    out: dict[tuple[str, str], tuple[tuple[int, float], ...]] = {}
    for workload, by_vm in raw.items():
        p = (*path, workload)
        if not isinstance(by_vm, dict) or not by_vm:
            raise err(p, f"must map VM types ({', '.join(vm_names)}) to {{nodes: ops_s}}")
        for vm, points in by_vm.items():
            q = (*p, vm)
            v.choice(vm, q, vm_names, "VM type")
            if not isinstance(points, dict) or not points:
                raise err(q, "must map cluster sizes to measured ops/s, e.g. {3: 2795, 6: 7899}")
            pts: list[tuple[int, float]] = []
            for n, ops in points.items():
                try:
                    nodes = int(n)
                except ValueError:
                    nodes = 0
                if nodes < 1 or str(nodes) != str(n).strip():
                    raise err((*q, n), f"{n!r}: cluster sizes must be integers >= 1")
                pts.append((nodes, v.number(ops, (*q, n), 0.0)))
            out[(str(workload), vm)] = tuple(sorted(pts))
    return out


def _results(v: _V, err: Any, raw: Any, base_dir: Path | None) -> ResultsSource | None:
    path: Path_ = ("throughput_from",)
    if raw is None:
        return None
    m = v.mapping(raw, path, FROM_KEYS)
    if "results" not in m:
        raise err((*path, "results"), "is required (a campaign results directory or its "
                  "results.db)")
    where = Path(v.string(m["results"], (*path, "results")))
    if not where.is_absolute() and base_dir is not None:
        where = base_dir / where

    def str_map(key: str) -> dict[str, str]:
        val = m.get(key) or {}
        if not isinstance(val, dict) or not all(isinstance(x, str) for x in val.values()):
            raise err((*path, key), "must map planner names to campaign names (strings)")
        return {str(a): b for a, b in val.items()}

    factors = v.mapping(m.get("factors"), (*path, "factors"), FACTOR_KEYS)
    names = {k: v.string(factors[k], (*path, "factors", k)) for k in factors}
    return ResultsSource(
        path=where, workloads=str_map("workloads"), vm_types=str_map("vm_types"),
        workload_factor=names.get("workload", "workload"),
        vm_factor=names.get("vm_type", "profile"), nodes_factor=names.get("nodes", "nodes"),
        statistic=v.choice(m.get("statistic", "median"), (*path, "statistic"), STATISTICS,
                           "statistic"))


def parse_duration_s(value: str, what: str = "--time-limit") -> float:
    """Seconds (> 0) from '60s', '2m', '500ms', '1h' (casslab.core.units' grammar)."""
    out = units.parse_duration_s(value, what)
    if out <= 0:
        raise UsageError(f"{what}: {value.strip()} must be > 0, e.g. 60s")
    return out


def json_schema() -> specio.JsonSchema:
    """The planner spec format as JSON Schema for editors (`parse_plan_spec` also checks
    names, cross references and the throughput model)."""
    obj, num, integer = specio.schema_object, specio.schema_number, specio.schema_integer
    host = obj({"name": {"type": "string", "pattern": f"^{NAME_RE}$"},
                "count": integer(1, MAX_HOSTS), "cores": num(0, 100_000, lo_open=True),
                "memory_gb": num(0, 1e7, lo_open=True), "pmax_w": num(0, 1e6, lo_open=True),
                "idle_fraction": num(0, 1)},
               required=("cores", "memory_gb", "pmax_w", "idle_fraction"))
    names = specio.schema_map({"type": "string"})
    return specio.schema_document("casslab plan spec", obj({
        "name": {"type": "string"}, "description": {"type": "string"},
        "mode": specio.schema_enum(MODES),
        "vm_types": specio.schema_map(obj(
            {"cores": num(0, 1024, lo_open=True), "memory_gb": num(0, 65536, lo_open=True),
             "heap_gb": num(0, lo_open=True), "price_hour": num(0)},
            required=("cores", "memory_gb", "heap_gb")), "VM type name -> its size"),
        "hosts": {"oneOf": [host, {"type": "array", "items": host, "minItems": 1}]},
        "tenants": {"type": "array", "minItems": 1, "items": obj(
            {"name": {"type": "string", "pattern": f"^{NAME_RE}$"},
             "workload": {"type": "string"}, "min_ops_s": num(0), "rf": integer(1, 64),
             "dataset_gb": num(0)}, required=("name", "workload", "min_ops_s"))},
        "throughput": specio.schema_map(specio.schema_map(specio.schema_map(num(0))),
                                        "workload -> VM type -> {nodes: ops_s}"),
        "throughput_from": obj(
            {"results": {"type": "string"}, "workloads": names, "vm_types": names,
             "factors": obj({k: {"type": "string"} for k in FACTOR_KEYS}),
             "statistic": specio.schema_enum(STATISTICS)}, required=("results",)),
        "placement": obj({"one_replica_per_host": {"type": "boolean"},
                          "max_nodes_per_tenant": integer(1, 100_000)}),
    }, required=("vm_types", "hosts", "tenants")))
