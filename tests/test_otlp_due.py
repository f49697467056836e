"""The assembler's tick (TraceAssembler.due): which traces in flight it assembles, and in what order, whatever
their roots' order of arrival; it stops looking at the first trace too young to close."""

from __future__ import annotations

import pytest
from helpers.clocks import Clock
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.events import TraceEvent
from ragpulse.sources.otlp.assembler import TraceAssembler
from ragpulse.sources.otlp.spans import Span

pytestmark = pytest.mark.unit


class ByTrace:
    """A mapper whose event names the trace: what was assembled, and in which order."""

    def map(self, spans: list[Span]) -> TraceEvent:
        return TraceEvent(trace_id=spans[0].trace_id, query="q", answer="a")


def span(trace: str, number: int, parent: int | None) -> Span:
    return Span(trace_id=trace * 32, span_id=f"{number:016x}", parent_span_id=None if parent is None else f"{parent:016x}",
                name="s", start_unix_nano=number, end_unix_nano=number + 1, attributes={}, resource={}, size=10)


def assembler(clock: Clock, registry: CollectorRegistry, grace: float, ttl: float) -> TraceAssembler:
    return TraceAssembler(ByTrace(), grace_seconds=grace, max_wait_seconds=grace, ttl_seconds=ttl,  # type: ignore[arg-type]
                          max_traces=100, max_bytes=1 << 20, max_spans_per_trace=100,
                          outcomes=Counter("outcomes_total", "t", ["outcome"], registry=registry),
                          dropped_spans=Counter("dropped_total", "t", ["reason"], registry=registry),
                          late_spans=Counter("late_total", "t", ["kind"], registry=registry), clock=clock)


def test_a_tick_assembles_the_traces_due_behind_an_older_one_still_waiting() -> None:
    clock, registry = Clock(0.0), CollectorRegistry()
    a = assembler(clock, registry, grace=1.0, ttl=10.0)
    a.add([span("a", 2, 1)])  # a child whose root has not come: waits for its TTL
    clock.now = 0.5
    a.add([span("b", 1, None)])  # a root: due at 1.5
    clock.now = 0.8
    a.add([span("c", 1, None), span("a", 1, None)])  # due at 1.8; a's root, due at 1.8 too
    clock.now = 1.2
    a.add([span("d", 1, None)])  # due at 2.2
    clock.now = 1.5
    assert [event.trace_id for event, _ in a.due()] == ["b" * 32]
    clock.now = 1.79
    assert a.due() == []
    clock.now = 1.8
    assert [event.trace_id for event, _ in a.due()] == ["a" * 32, "c" * 32]  # in the order their first spans came
    clock.now = 2.2
    assert [event.trace_id for event, _ in a.due()] == ["d" * 32]
    assert a.in_flight == 0
    assert registry.get_sample_value("outcomes_total", {"outcome": "complete"}) == 4


def test_a_ttl_shorter_than_the_grace_closes_rootless_traces_at_the_ttl() -> None:
    clock, registry = Clock(0.0), CollectorRegistry()
    a = assembler(clock, registry, grace=5.0, ttl=2.0)
    a.add([span("a", 2, 1)])
    clock.now = 1.0
    a.add([span("b", 2, 1)])
    clock.now = 2.0
    assert [event.trace_id for event, _ in a.due()] == ["a" * 32]
    clock.now = 3.0
    assert [event.trace_id for event, _ in a.due()] == ["b" * 32]
    assert registry.get_sample_value("outcomes_total", {"outcome": "ttl_expired"}) == 2
