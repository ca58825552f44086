"""The one spec reader: every bad input is ONE line `file:line: field.path: what is valid`,
and no generated input, however odd, escapes as a traceback."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casslab.core.errors import UsageError
from casslab.core.specio import Doc, SpecError, V, closest, read_text
from casslab.experiment.spec import parse_spec
from casslab.hardware.profiles import load_profiles_file as load_hardware_profiles
from casslab.net.linkprofiles import load_link_profiles
from casslab.net.spec import NetSpec
from casslab.plan.spec import parse_plan_spec
from casslab.tune.rules import parse_rules

# (text, line, start of the message after "f.yaml:LINE: ")
DOC_BAD = [
    ("a: [1, 2\n", 2, "not valid YAML"),
    ("a: !python/object:os.system x\n", 1, "a: unknown YAML tag '!python/object:os.system'"),
    ("a:\n  b: !foo {c: 1}\n", 2, "a.b: unknown YAML tag '!foo'"),
    ("a: !!int ten\n", 1, "a: 'ten'"),
    ("a: 1\nb: 2\na: 3\n", 3, "a: is given twice"),
    ("a: .nan\n", 1, "a: .nan is not a finite number"),
    ("a:\n  - 1\n  - -.inf\n", 3, "a[1]: -.inf is not a finite number"),
    ("a: &x [*x]\n", 1, "a[0]: an alias refers to itself"),
    ("? [1, 2]\n: 3\n", 1, "(top level): a key must be a plain value"),
]


@pytest.mark.parametrize(("text", "line", "start"), DOC_BAD)
def test_bad_yaml_is_one_line_with_file_line_and_path(text: str, line: int, start: str) -> None:
    with pytest.raises(SpecError) as info:
        Doc(text, "f.yaml")
    msg = str(info.value)
    assert msg.startswith(f"f.yaml:{line}: "), msg
    assert msg.split(": ", 1)[1].startswith(start) or start in msg, msg
    assert "\n" not in msg


def test_exploding_aliases_are_refused() -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    with pytest.raises(SpecError, match="expands to more than"):
        Doc("\n".join(levels) + "\n", "f.yaml")


def test_dates_are_kept_as_written() -> None:
    assert Doc("a: 2026-11-23\n", "f.yaml").root == {"a": "2026-11-23"}


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_bytes(b"name: x\nworkload: caf\xe9\n")
    with pytest.raises(SpecError, match=rf"^{f}:2: not UTF-8 text \(byte 0xe9"):
        read_text(f, "spec")


# (value, check, message after "f.yaml:1: a: ")
V_BAD: list[tuple[str, Callable[[V, Any], Any], str]] = [
    ("true", lambda v, x: v.integer(x, ("a",), 1), "True is a boolean, not an integer"),
    ("2.5", lambda v, x: v.integer(x, ("a",), 1), "2.5 is a fraction, not an integer"),
    ("3.0", lambda v, x: v.integer(x, ("a",), 1), "3.0 is a fraction, not an integer"),
    ("false", lambda v, x: v.number(x, ("a",), 0.0), "False is not a number"),
    ("'1'", lambda v, x: v.number(x, ("a",), 0.0), "'1' is not a number"),
    ("0", lambda v, x: v.number(x, ("a",), 0.0, lo_open=True), "0 is out of range (valid: > 0)"),
    ("tru", lambda v, x: v.boolean(x, ("a",)), "'tru' is not a boolean"),
    ("lcz", lambda v, x: v.choice(x, ("a",), ("stcs", "lcs")),
     "'lcz' is not a valid value (did you mean lcs?)"),
]


@pytest.mark.parametrize(("value", "check", "message"), V_BAD)
def test_typed_checks_refuse_lookalikes(value: str, check: Callable[[V, Any], Any],
                                        message: str) -> None:
    doc = Doc(f"a: {value}\n", "f.yaml")
    with pytest.raises(SpecError) as info:
        check(V(doc), doc.root["a"])
    assert str(info.value).startswith(f"f.yaml:1: a: {message}"), str(info.value)


def test_unknown_key_suggests_the_closest() -> None:
    doc = Doc("top:\n  trails: 3\n", "f.yaml")
    with pytest.raises(SpecError, match=r"^f.yaml:2: top.trails: unknown key \(did you mean "
                       r"trials\?\) \(valid: trials, seed\)$"):
        V(doc).mapping(doc.root["top"], ("top",), ("trials", "seed"))
    assert closest("zzz", ("trials",)) == ""


# ---- fuzz: generated specs never escape as anything but a one-line UsageError -----------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["ycsb-a", "1%", "100%", "rpi3", "wifi", "stcs",
                                           "ONE", "nodes", "rate", "in_flight", "-", "{"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)
_EXPERIMENT_KEYS = {
    "": ("name", "lab", "workload", "factors", "design", "stop", "search", "metrics",
         "analysis"),
    "lab": ("nodes", "profile", "network", "set", "timeout_s"),
    "workload": ("name", "records", "prepare", "options"),
    "design": ("trials", "warmup_trials", "randomize", "seed", "reset"),
    "stop": ("ops", "duration_s", "timeout_s"),
    "search": ("vary", "start", "multiply", "add", "max_steps", "trials", "ops"),
    "metrics": ("interval_s", "cql"), "analysis": ("response", "bootstrap", "seed"),
}
_FACTOR_NAMES = ("nodes", "profile", "network", "network.delay_ms", "network.client.loss_pct",
                 "workload", "records", "rf", "compaction", "cl", "rate", "in_flight",
                 "option.field-count", "set.concurrent_reads", "colour")


@st.composite
def _experiment(draw: st.DrawFn) -> dict[str, Any]:
    """A spec shaped like a real one (known keys, plausible levels) with odd values."""
    spec: dict[str, Any] = {"workload": draw(st.one_of(st.just("ycsb-a"), _values))}
    for section, keys in _EXPERIMENT_KEYS.items():
        if section and draw(st.booleans()):
            spec[section] = {k: draw(_values) for k in keys if draw(st.booleans())}
    if draw(st.booleans()):
        spec["factors"] = [{"name": draw(st.sampled_from(_FACTOR_NAMES)),
                            "levels": draw(st.lists(_scalars, max_size=4))}
                           for _ in range(draw(st.integers(0, 3)))]
    return spec


def _one_line_usage_error(call: Callable[[], Any]) -> None:
    try:
        call()
    except UsageError as exc:
        assert "\n" not in str(exc), str(exc)


_FUZZ = settings(max_examples=1000, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(_experiment())
def test_fuzz_experiment_specs(spec: dict[str, Any]) -> None:
    _one_line_usage_error(lambda: parse_spec(yaml.safe_dump(spec), source="f.yaml",
                                             base_dir=Path("/nonexistent")))


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!,.'\"#|>? \n0123456789%")),
               max_size=60))
def test_fuzz_raw_text_in_every_reader(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "f.yaml"
        f.write_text(text)
        for call in (lambda: parse_spec(text, base_dir=Path("/nonexistent")),
                     lambda: parse_plan_spec(text), lambda: parse_rules(text),
                     lambda: NetSpec.from_yaml(f), lambda: load_link_profiles(f),
                     lambda: load_hardware_profiles(f)):
            _one_line_usage_error(call)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.dictionaries(st.sampled_from(["vm_types", "hosts", "tenants", "throughput",
                                        "twcs", "ucs", "scale", "profiles", "links", "all",
                                        "pi", "mode", "interpolate"]), _values, max_size=5))
def test_fuzz_structured_inputs_in_the_other_readers(raw: dict[str, Any]) -> None:
    text = yaml.safe_dump(raw)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "f.yaml"
        f.write_text(text)
        for call in (lambda: parse_plan_spec(text), lambda: parse_rules(text),
                     lambda: NetSpec.from_yaml(f), lambda: load_link_profiles(f),
                     lambda: load_hardware_profiles(f)):
            _one_line_usage_error(call)


def test_a_yaml_tag_is_named_as_the_user_wrote_it() -> None:
    with pytest.raises(SpecError, match=r"unknown YAML tag '!!python/tuple'"):
        Doc("a: !!python/tuple [1]\n", "f.yaml")


def test_a_non_finite_value_names_the_item_it_belongs_to() -> None:
    with pytest.raises(SpecError, match=r"levels\[1\]: .nan is not a finite number .* in "
                       r"network.delay_ms"):
        Doc("factors:\n  - {name: network.delay_ms, levels: [0, .nan]}\n", "s.yaml")
