"""`casslab run` and campaigns against a lab label casslab-load's live metrics with the lab's name,
only when they are served and no lab label was given."""

from __future__ import annotations

import pytest

from casslab.core.errors import UsageError
from casslab.load import LoadSpec
from casslab.load.multi import with_lab_label


def test_a_served_run_gets_the_labs_name_as_label() -> None:
    spec = LoadSpec.of("ycsb-a", {}, ["--prometheus", "127.0.0.1:9470"])
    assert with_lab_label(spec, "edge").extra[-2:] == ["--prometheus-label", "lab=edge"]


def test_no_label_without_prometheus_or_when_one_is_given() -> None:
    plain = LoadSpec.of("ycsb-a", {}, [])
    assert with_lab_label(plain, "edge").extra == []
    given = LoadSpec.of("ycsb-a", {}, ["--prometheus", "h:1", "--prometheus-label", "lab=x"])
    assert with_lab_label(given, "edge").extra == given.extra


def test_a_label_option_is_a_prometheus_name_casslab_load_does_not_set() -> None:
    spec = LoadSpec.of("ycsb-a", {"prometheus": "h:1", "prometheus-label": "lab=x"})
    assert spec.options.to_argv()[-2:] == ["--prometheus-label", "lab=x"]
    assert with_lab_label(spec, "edge").extra == []  # its own lab label stands
    for bad in ("op=read", "1x=y", "lab"):
        with pytest.raises(UsageError, match="prometheus-label"):
            LoadSpec.of("ycsb-a", {"prometheus-label": bad})
