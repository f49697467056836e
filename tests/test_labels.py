"""The cardinality guard and the fast-path exporter's label handling."""

from __future__ import annotations

import pytest
from helpers.events import envelope
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import MetricsConfig
from ragpulse.exporters.prometheus import FastPathExporter


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_values_over_the_per_label_cap_become_other_and_are_counted() -> None:
    registry = CollectorRegistry()
    guard = LabelGuard(["app", "route"], max_values=2, max_label_sets=100, registry=registry)
    assert guard.admit(("a", "r1")) == (("a", "r1"), ())
    assert guard.admit(("a", "r2")) == (("a", "r2"), ())
    assert guard.admit(("a", "r3")) == (("a", "other"), ("route",))
    assert guard.admit(("a", "r1")) == (("a", "r1"), ())  # admitted values stay admitted
    assert guard.admit((None, "r2")) == (("unknown", "r2"), ())  # a missing label is "unknown", a value like any other
    assert guard.admit(("b", "r4")) == (("other", "other"), ("app", "route"))
    guard.count_overflow(("app", "route"))
    assert registry.get_sample_value("ragpulse_label_overflow_total", {"label": "route"}) == 1.0


def test_label_set_cap_bounds_series_even_within_per_label_caps() -> None:
    registry = CollectorRegistry()
    guard = LabelGuard(["app", "route"], max_values=10, max_label_sets=3, registry=registry)
    admitted = [guard.admit((a, r))[0] for a in ("a", "b") for r in ("x", "y")]
    assert admitted == [("a", "x"), ("a", "y"), ("b", "x"), ("other", "other")]
    assert guard.admit(("b", "y"))[1] == ("label_set",)


def test_exporter_never_exports_more_series_than_the_guard_allows() -> None:
    registry = CollectorRegistry()
    config = MetricsConfig(labels=["app", "route"], max_values_per_label=3)
    guard = LabelGuard(config.labels, config.max_values_per_label, config.max_label_sets, registry)
    exporter = FastPathExporter(registry, config, guard, max_cached=4)  # a tiny cache, cleared often
    for i in range(100):
        event = TraceEvent(trace_id=str(i), query="q", answer="a", app="shop", route=f"route-{i}", timestamp=0.0)
        exporter(envelope(event))
    routes = {
        sample.labels["route"]
        for family in registry.collect() if family.name == "ragpulse_traces"
        for sample in family.samples if sample.name == "ragpulse_traces_total"
    }
    assert routes == {"route-0", "route-1", "route-2", "other"}
    assert registry.get_sample_value("ragpulse_traces_total", {"app": "shop", "route": "other"}) == 97.0
    assert registry.get_sample_value("ragpulse_label_overflow_total", {"label": "route"}) == 97.0
