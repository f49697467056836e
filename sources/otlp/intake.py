"""Span intake: spans from any source (OTLP gRPC/HTTP, Kafka otlp_proto) -> assembler -> pipeline queue.

One intake per process, so the spans of a trace meet whatever carried them. It runs on
the event loop: `take` adds spans, a timer hands assembled traces to the queue.
"""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry

from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.events import FeedbackEvent, TraceEvent
from ragpulse.collector.queue import EventQueue
from ragpulse.collector.supervisor import Supervised
from ragpulse.config import OtlpConfig
from ragpulse.errors import EventError, ShuttingDown
from ragpulse.sources.otlp.assembler import TraceAssembler
from ragpulse.sources.otlp.evaluations import feedback_of
from ragpulse.sources.otlp.keys import key_filter
from ragpulse.sources.otlp.mapping import TraceMapper
from ragpulse.sources.otlp.metrics import otlp_metrics
from ragpulse.sources.otlp.spans import Span

SOURCE = "otlp"
FLUSH_EVERY_SECONDS = 0.1
SKIPPED_PART_TYPES = ("image", "image_url", "audio", "file")
FEEDBACK_BYTES = 512  # what an evaluation event's feedback takes, for the byte budgets: a few short fields


class SpanIntake:
    def __init__(self, config: OtlpConfig, decoder: EventDecoder, queue: EventQueue, registry: CollectorRegistry, *,
                 max_event_bytes: int) -> None:
        self._decoder = decoder
        self._max_event_bytes = max_event_bytes
        self._queue = queue
        self._metrics = metrics = otlp_metrics(registry)
        metrics.intake.precreate(SOURCE)
        self._mapper = TraceMapper(config.route_attribute, config.retrieval_tools)
        self.keys = key_filter(config.route_attribute)  # what the decoding keeps of a span's attributes
        self.assembler = TraceAssembler(
            self._mapper,
            grace_seconds=config.grace_seconds,
            max_wait_seconds=config.max_wait_seconds,
            ttl_seconds=config.trace_ttl_seconds,
            max_traces=config.max_traces_in_flight,
            max_bytes=config.max_bytes_in_flight,
            max_spans_per_trace=config.max_spans_per_trace,
            outcomes=metrics.traces,
            dropped_spans=metrics.spans_dropped,
            late_spans=metrics.late_spans,
        )
        metrics.in_flight.set_function(lambda: self.assembler.in_flight)
        metrics.in_flight_bytes.set_function(lambda: self.assembler.in_flight_bytes)
        self.supervised = Supervised("span_assembler", self._flush_loop, registry)

    async def start(self) -> None:
        self.supervised.start()

    async def take(self, spans: list[Span], refuse_reviews: str | None = None) -> int:
        """Add spans; with `refuse_reviews` (the reason: the sender lacks the review scope) their reviews are
        kept out and counted as refused. Returns how many were."""
        # Evaluations often come after their trace was assembled: they are feedback on arrival.
        feedback: list[tuple[FeedbackEvent, int]] = []
        refused = 0
        for span in spans:
            if span.events:
                events, unmapped = feedback_of(span)
                if refuse_reviews is not None:
                    kept = [event for event in events if event.kind != "review"]
                    refused += len(events) - len(kept)
                    events = kept
                feedback.extend((event, FEEDBACK_BYTES) for event in events)
                if unmapped:
                    self._metrics.feedback_unmapped.inc(unmapped)
        if refused:
            self._metrics.intake.events_refused.labels(source=SOURCE, reason=refuse_reviews).inc(refused)
        await self._enqueue([*feedback, *self.assembler.add(spans)])
        return refused

    async def stop_intake(self) -> None:
        """Hand every trace still being assembled to the pipeline, as it is."""
        if self.supervised.task is not None:
            self.supervised.task.cancel()
        await self._enqueue(self.assembler.flush())

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY_SECONDS)
            await self._enqueue(self.assembler.due())

    async def _enqueue(self, events: list[tuple[TraceEvent, int]] | list[tuple[FeedbackEvent | TraceEvent, int]]) -> None:
        skipped = self._mapper.skipped_parts
        for kind, count in skipped.items():  # message parts that are not text, met while mapping
            self._metrics.parts_skipped.labels(type=kind if kind in SKIPPED_PART_TYPES else "other").inc(count)
        skipped.clear()
        for (kind, read_as), count in self._mapper.tool_results.items():
            self._metrics.tool_results.labels(kind=kind, read_as=read_as).inc(count)
        self._mapper.tool_results.clear()
        envelopes = []
        for event, size in events:
            try:
                # The spans' size, at most an event's: limits cut what the event keeps of them.
                envelopes.append(self._decoder.accept(event, min(size, self._max_event_bytes)))
            except EventError as exc:
                self._metrics.intake.events_invalid.labels(source=SOURCE, reason=exc.reason.value).inc()
        if not envelopes:
            return
        try:
            await self._queue.put(envelopes)
        except ShuttingDown:
            self._metrics.dropped.labels(reason="shutdown_deadline").inc(len(envelopes))
            return
        self._metrics.intake.count_accepted(SOURCE, envelopes)
