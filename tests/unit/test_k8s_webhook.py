"""Chaos Mesh's webhook parsers as casslab reproduces them: what Go's ParseDuration,
ParseFloat and the webhook's rate parser take and refuse."""

from __future__ import annotations

import pytest

from casslab.k8s.webhook import CHECKS, problems


@pytest.mark.parametrize(("tag", "value"), [
    ("Duration", "5ms"), ("Duration", "1.5s"), ("Duration", "1h30m"), ("Duration", "0"),
    ("Duration", ""), ("Duration", ".5us"), ("FloatStr", "0"), ("FloatStr", "12.5"),
    ("FloatStr", "1e-3"), ("Rate", "1000kbit"), ("Rate", " 8 MBPS"), ("Rate", "1bit"),
])
def test_values_the_webhook_takes_pass(tag: str, value: str) -> None:
    assert CHECKS[tag](value) is None


@pytest.mark.parametrize(("tag", "value"), [
    ("Duration", "5 ms"), ("Duration", "5"), ("Duration", "1e-05ms"), ("Duration", "5sec"),
    ("FloatStr", "half"), ("FloatStr", "1,5"), ("FloatStr", "1_0"), ("Rate", "1.5mbit"),
    ("Rate", "fast"), ("Rate", "100"),
])
def test_values_the_webhook_refuses_fail(tag: str, value: str) -> None:
    assert CHECKS[tag](value) is not None


def test_problems_names_the_path_of_each_refused_field() -> None:
    obj = {"spec": {"delay": {"latency": "5 ms", "jitter": "1ms"},
                    "list": [{"d": "1s"}, {"d": "soon"}]}}
    fields = {"spec.delay.latency": "Duration", "spec.delay.jitter": "Duration",
              "spec.list[].d": "Duration", "spec.loss.loss": "FloatStr"}
    found = problems(obj, fields)
    assert [p for p, _ in found] == [["spec", "delay", "latency"], ["spec", "list", 1, "d"]]
    assert "Duration webhook" in found[0][1]
