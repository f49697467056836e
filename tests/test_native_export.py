"""The fast-path exporter's trace samples in the compiled core (native/src/export.rs), held to the Python they replaced
(kept here as the definition) on generated traces and feedback: every sample of the registry after each event, and
the same failures (an event that made the Python raise makes the core raise, after the same samples)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, FeedbackEvent, RunError, TraceEvent, Usage
from ragpulse.collector.telemetry.labels import LabelGuard, SeriesCache
from ragpulse.config import MetricsConfig
from ragpulse.exporters.prometheus import FastPathExporter, _Series

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

RULES = ("explicit", "empty_retrieval", "sorry")


class PythonExporter(FastPathExporter):
    """The exporter as it was in Python (exporters/prometheus.py before the compiled core)."""

    def __init__(self, registry: CollectorRegistry, config: MetricsConfig, guard: LabelGuard, *, max_cached: int,
                 fallback_rules: tuple[str, ...]) -> None:
        super().__init__(registry, config, guard, max_cached=max_cached, fallback_rules=fallback_rules)
        self.series_for = SeriesCache(guard, self._new_series, max_cached)

    def __call__(self, envelope: Any) -> None:
        event = envelope.event
        if isinstance(event, TraceEvent):
            self.export_trace(event, envelope.fallback_rule)
        else:
            self._export_feedback(event)

    def export_trace(self, event: TraceEvent, fallback_rule: str | None) -> None:
        series: _Series = self.series_for(event)
        series.traces.inc()
        if event.error is not None:
            series.failed.inc()
        if series.overflowed:
            self._guard.count_overflow(series.overflowed)
        if fallback_rule is not None:
            series.fallback(fallback_rule).inc()
        chunks = event.chunks
        if chunks is not None:
            series.chunks.observe(len(chunks))
            if event.retrievals is not None:
                series.retrievals.observe(event.retrievals)
                if event.retrievals > 1:
                    found = [0] * min(event.retrievals, 64)
                    for chunk in chunks:
                        if chunk.retrieval is not None and chunk.retrieval < len(found):
                            found[chunk.retrieval] += 1
                    for count in found:
                        series.searches.observe(count)
            if not chunks:
                series.retrieval_empty.inc()
            else:
                scores = [c.score for c in chunks if c.score is not None]
                if scores:
                    series.top_score.observe(max(scores))
                    series.mean_score.observe(sum(scores) / len(scores))
                updated = [c.updated_at for c in chunks if c.updated_at is not None]
                if updated:
                    series.chunk_age.observe(max(0.0, event.timestamp - max(updated)))  # type: ignore[operator,type-var]
        if event.latency_ms is not None:
            series.latency.observe(event.latency_ms / 1000.0)
        usage = event.usage
        if usage is not None:
            series.prompt_tokens.inc(usage.prompt_tokens)
            series.completion_tokens.inc(usage.completion_tokens)
            if usage.unreported_calls:
                series.usage_partial.inc()


# 0.1 + 0.2 + 0.3 is not 0.3 + 0.2 + 0.1: the mean sums in the same order.
_number = st.floats(-1e3, 1e10) | st.sampled_from((0.1, 0.2, 0.3, 1e16, float("nan"))) | st.integers(0, 10**6)
_chunk = st.builds(Chunk, score=st.none() | _number, updated_at=st.none() | st.floats(0, 2e9),
                   retrieval=st.none() | st.integers(0, 70))
_trace = st.builds(
    lambda n, app, chunks, retrievals, timestamp, latency, usage, error: TraceEvent(
        trace_id=f"t{n}", query="q", answer="a", app=app, chunks=chunks, retrievals=retrievals, timestamp=timestamp,
        latency_ms=latency, usage=usage, error=error),
    st.integers(0, 10**6), st.sampled_from((None, "shop", "bank", "care", "lab")), st.none() | st.lists(_chunk, max_size=5),
    st.none() | st.integers(0, 80), st.none() | st.floats(0, 2e9), st.none() | st.floats(0, 1e6),
    st.none() | st.builds(Usage, prompt_tokens=st.integers(0, 10**6), completion_tokens=st.integers(0, 10**6),
                          unreported_calls=st.integers(0, 3)),
    st.none() | st.just(RunError(type="Timeout")))
_feedback = st.builds(lambda kind, value: FeedbackEvent(kind=kind, value=value, trace_id="t"),
                      st.sampled_from(("thumbs", "rating", "review", "copy")), st.sampled_from(("up", "down", 1, 4.6, 3)))
_events = st.lists(st.tuples(_trace | _feedback, st.sampled_from((None, *RULES))), max_size=20)


def _samples(registry: CollectorRegistry) -> list[Any]:
    return sorted((s.name, sorted(s.labels.items()), repr(s.value)) for m in registry.collect() for s in m.samples
                  if not s.name.endswith("_created"))


def _outcome(export: Any, item: Any) -> str | None:
    try:
        export(item)
    except Exception as error:  # noqa: BLE001 - the Python's failures are part of what the core must do alike
        return type(error).__name__
    return None


@settings(max_examples=1500, deadline=None)
@given(_events, st.integers(1, 3), st.integers(1, 4))
def test_the_compiled_exporter_counts_as_the_python(events: list[tuple[Any, str | None]], max_cached: int,
                                                    max_label_sets: int) -> None:
    registries = CollectorRegistry(), CollectorRegistry()
    guards = [LabelGuard(["app"], 3, max_label_sets, registry) for registry in registries]
    config = MetricsConfig(labels=["app"])
    python = PythonExporter(registries[0], config, guards[0], max_cached=max_cached, fallback_rules=RULES)
    compiled = FastPathExporter(registries[1], config, guards[1], max_cached=max_cached, fallback_rules=RULES)
    for event, rule in events:
        failed = _outcome(python, envelope(event, fallback_rule=rule))
        assert _outcome(compiled, envelope(event, fallback_rule=rule)) == (None if failed is None else "TypeError")
        assert _samples(registries[1]) == _samples(registries[0])
