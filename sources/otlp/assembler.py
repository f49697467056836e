"""Spans grouped by trace id and assembled into one trace event when the trace is complete.

A trace is complete `grace_seconds` after its root span arrived (children of a
root often arrive in a later export batch), unless what arrived is incomplete: a
span whose parent has not come, or a call out (a CLIENT or PRODUCER span, not a
model or retriever call) with no span under it yet, whose other side (another
service, exporting on its own schedule) is still to come; such a trace waits up
to `max_wait_seconds` after its root. A trace whose root never comes is
assembled from what arrived after `ttl_seconds`. In-flight traces are capped in
count and in bytes (the spans' protobuf size); when full, the oldest is
assembled early. Spans arriving for a trace already assembled are dropped and
counted (`late_span`, and by kind), and each service that sends them is told once
which setting to raise. A trace whose spans the mapper cannot read costs that
trace (`mapping_failed`, logged), never the assembler.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
from prometheus_client import Counter

from ragpulse.collector.events import TraceEvent
from ragpulse.sources.otlp.mapping import NotMapped, TraceMapper, is_llm, is_retrieval
from ragpulse.sources.otlp.spans import Span

log = structlog.get_logger("ragpulse.otlp")

_CALLS_OUT = frozenset({3, 4})  # SpanKind CLIENT, PRODUCER
MAX_WARNED = 1_000  # services warned once each about content capture; service names come from clients
Assembled = tuple[TraceEvent, int]  # a trace event and the bytes of the spans it was made of


@dataclass(slots=True)
class _Pending:
    first_seen: float
    spans: dict[str, Span] = field(default_factory=dict)
    root_seen: float | None = None
    size: int = 0


class TraceAssembler:
    def __init__(
        self,
        mapper: TraceMapper,
        *,
        grace_seconds: float,
        max_wait_seconds: float,
        ttl_seconds: float,
        max_traces: int,
        max_bytes: int,
        max_spans_per_trace: int,
        outcomes: Counter,
        dropped_spans: Counter,
        late_spans: Counter,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._mapper = mapper
        self._grace = grace_seconds
        self._max_wait = max_wait_seconds
        self._late = late_spans
        self._late_warned: set[str] = set()  # services told to raise max_wait_seconds (at most MAX_WARNED)
        self._ttl = ttl_seconds
        self._max_traces = max_traces
        self._max_bytes = max_bytes
        self._bytes = 0
        self._max_spans = max_spans_per_trace
        self._outcomes = outcomes
        self._dropped_spans = dropped_spans
        self._clock = clock
        self._pending: OrderedDict[str, _Pending] = OrderedDict()  # oldest first
        self._done: OrderedDict[str, None] = OrderedDict()  # recently assembled trace ids, bounded
        self._warned: set[tuple[str, str]] = set()  # (service, reason) told once (at most MAX_WARNED)

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    @property
    def in_flight_bytes(self) -> int:
        return self._bytes

    def add(self, spans: list[Span]) -> list[Assembled]:
        """Take spans in; returns traces assembled early because the in-flight cap was reached."""
        now = self._clock()
        early: list[Assembled] = []
        for span in spans:
            if span.trace_id in self._done:
                self._count_late(span)
                continue
            pending = self._pending.get(span.trace_id)
            if pending is None and len(self._pending) >= self._max_traces:
                early.extend(self._assemble(next(iter(self._pending)), "capacity"))
            while self._bytes + span.size > self._max_bytes:
                oldest = next((t for t in self._pending if t != span.trace_id), None)
                if oldest is None:
                    break
                early.extend(self._assemble(oldest, "capacity"))
            if self._bytes + span.size > self._max_bytes:  # its own trace alone is over the budget
                self._dropped_spans.labels(reason="over_bytes").inc()
                continue
            if pending is None:
                pending = self._pending[span.trace_id] = _Pending(first_seen=now)
            if span.span_id in pending.spans:
                self._dropped_spans.labels(reason="duplicate").inc()
                continue
            if len(pending.spans) >= self._max_spans:
                self._dropped_spans.labels(reason="too_many_spans").inc()
                continue
            pending.spans[span.span_id] = span
            pending.size += span.size
            self._bytes += span.size
            if span.parent_span_id is None and pending.root_seen is None:
                pending.root_seen = now
        return early

    def due(self) -> list[Assembled]:
        """Traces whose grace period or TTL has passed, assembled."""
        now = self._clock()
        ready = [
            (trace_id, "complete" if p.root_seen is not None else "ttl_expired")
            for trace_id, p in self._pending.items()
            if (p.root_seen is not None and now - p.root_seen >= self._grace
                and (now - p.root_seen >= self._max_wait or not _incomplete(p)))
            or now - p.first_seen >= self._ttl
        ]
        events: list[Assembled] = []
        for trace_id, outcome in ready:
            events.extend(self._assemble(trace_id, outcome))
        return events

    def flush(self) -> list[Assembled]:
        """Everything in flight, assembled now (shutdown)."""
        events: list[Assembled] = []
        for trace_id in list(self._pending):
            events.extend(self._assemble(trace_id, "shutdown"))
        return events

    def _count_late(self, span: Span) -> None:
        self._dropped_spans.labels(reason="late_span").inc()
        self._late.labels(kind="retriever" if is_retrieval(span) else "llm" if is_llm(span) else "other").inc()
        service = str(span.resource.get("service.name", "unknown"))
        if service not in self._late_warned and len(self._late_warned) < MAX_WARNED:
            self._late_warned.add(service)
            log.warning("spans came after their trace was assembled and were dropped", service=service, span=span.name,
                        fix=f"raise otlp.max_wait_seconds (now {self._max_wait:g}) above this service's export delay")

    def _warn_once(self, pending: _Pending, reason: str, hint: str) -> None:
        service = next((str(s.resource.get("service.name")) for s in pending.spans.values()), "unknown")
        if (service, reason) in self._warned or len(self._warned) >= MAX_WARNED:
            return
        self._warned.add((service, reason))
        if reason == "unmapped_genai":
            log.warning("traces that look like GenAI telemetry are not mapped", service=service, missing=hint)
        else:
            log.warning("traces without question or answer text are not counted: the app records no content",
                        service=service, fix=hint)

    def _assemble(self, trace_id: str, outcome: str) -> list[Assembled]:
        pending = self._pending.pop(trace_id)
        self._bytes -= pending.size
        self._done[trace_id] = None
        if len(self._done) > self._max_traces:
            self._done.popitem(last=False)
        try:
            event = self._mapper.map(list(pending.spans.values()))
        except Exception:
            self._outcomes.labels(outcome="mapping_failed").inc()
            log.exception("a trace's spans could not be mapped; the trace is dropped", spans=len(pending.spans))
            return []
        if isinstance(event, NotMapped):  # not_rag: indexing, health checks; content_not_captured
            self._outcomes.labels(outcome=event.reason).inc()
            if event.reason in ("content_not_captured", "unmapped_genai"):
                self._warn_once(pending, event.reason, event.hint)
            return []
        self._outcomes.labels(outcome=outcome).inc()
        return [(event, pending.size)]


def _incomplete(pending: _Pending) -> bool:
    """Whether spans of this trace are evidently still to come: a span whose parent has not arrived, or a call
    out to another service (not a model or retriever call, whose provider exports nothing) with no child yet."""
    spans = pending.spans
    parents = {span.parent_span_id for span in spans.values()}
    return any(
        (span.parent_span_id is not None and span.parent_span_id not in spans)
        or (span.kind in _CALLS_OUT and span.span_id not in parents and not is_llm(span) and not is_retrieval(span))
        for span in spans.values()
    )
