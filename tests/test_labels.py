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


def test_a_new_label_set_is_announced_once_and_the_set_past_the_cap_too() -> None:
    registry = CollectorRegistry()
    guard = LabelGuard(["app"], max_values=10, max_label_sets=2, registry=registry)
    guard.admit(("early",))
    heard: list[tuple[str, ...]] = []
    guard.on_new_label_set(heard.append)  # told of the sets admitted before it too
    for app in ("early", "shop", "shop", "late", "later"):
        guard.admit((app,))
    assert heard == [("early",), ("shop",), ("other",)]


def test_every_series_a_rule_divides_by_exists_at_zero_when_its_label_set_is_first_admitted() -> None:
    """Before any event of the label set is counted: a series made with its first count hides that count from
    increase() (a new app's context utilisation read 0.608 against a true 0.338)."""
    from helpers.events import feedback_join

    from ragpulse.feedback.satisfaction import SIGNALS, SignalCounter
    from ragpulse.judging.metrics import JUDGMENT_VERDICTS, JudgmentMetrics
    from ragpulse.judging.routine_floor import RoutineFloor
    from ragpulse.judging.sampler import STRATUM_CLASS, JudgeQueue, JudgeSampler, SamplingPolicy
    from ragpulse.judging.utilisation import ContextRecorder
    from ragpulse.scorers.citations import CitationScorer

    registry = CollectorRegistry()
    config = MetricsConfig(labels=["app"])
    guard = LabelGuard(config.labels, config.max_values_per_label, config.max_label_sets, registry)
    FastPathExporter(registry, config, guard, max_cached=8, fallback_rules=("explicit",))
    CitationScorer(registry, guard)
    SignalCounter(registry, guard, max_cached=8)
    JudgmentMetrics(registry, guard, judge="local")
    ContextRecorder(registry, guard, judge="local")
    policy = SamplingPolicy(base_rate=1.0, rate_overrides={}, class_rates={}, always=[], flag_support_below=0.3,
                            over_refusal_context_at_least=0.5)
    JudgeSampler(policy, JudgeQueue(8, 1 << 20, registry), registry, guard, feedback_join(CollectorRegistry()),
                 max_label_sets=8, floor=RoutineFloor(0, lambda: 0.0, 8))
    guard.admit(("shop",))

    def values(name: str, **labels: str) -> dict[tuple[str, ...], float]:
        return {tuple(v for k, v in sorted(s.labels.items()) if k not in labels): s.value
                for family in registry.collect() for s in family.samples
                if s.name == name and labels.items() <= s.labels.items()}

    ranks = {(judge, rank) for judge in ["local"] for rank in (*map(str, range(1, 11)), "11+")}
    for family in ("ragpulse_context_chunks_retrieved_total", "ragpulse_context_chunks_used_total"):
        assert values(family, app="shop") == dict.fromkeys(ranks, 0.0)
    assert values("ragpulse_citation_verdicts_total", app="shop", judge="local").keys() >= {("supported",), ("unsupported",)}
    assert values("ragpulse_judgments_total", app="shop", judge="local", sample="routine") == {
        (metric, verdict): 0.0 for metric, verdicts in JUDGMENT_VERDICTS.items() for verdict in verdicts}
    assert values("ragpulse_judge_stratum_judgments_total", app="shop", judge="local", fallback="false") == {
        (stratum, verdict): 0.0 for stratum in STRATUM_CLASS for verdict in JUDGMENT_VERDICTS["groundedness"]}
    assert values("ragpulse_judge_stratum_offered_total", app="shop", fallback="false") == dict.fromkeys(
        ((stratum,) for stratum in STRATUM_CLASS), 0.0)
    assert values("ragpulse_satisfaction_signals_total", app="shop") == {
        (fallback, signal): 0.0 for fallback in ("false", "true") for signal in SIGNALS}
    assert values("ragpulse_traces_total", app="shop") == {(): 0.0}
    assert values("ragpulse_fallbacks_total", app="shop") == {("explicit",): 0.0}
    assert values("ragpulse_citation_answers_total", app="shop") == {("false",): 0.0, ("true",): 0.0}
