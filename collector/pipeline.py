"""The pipeline: a bounded queue, then stages, then exporters, on one asyncio task.

A stage is a plain callable that takes an envelope and returns it (possibly
annotated) or None to drop it; the chain is a loop. Exporters take the
envelopes that passed every stage. Expensive choices (regexes, label children)
are made when the components are built, not per event. A component whose work is
all in the compiled core names the core's method as `direct`: the loop calls that,
without the component's Python `__call__` in between (a call a component and event).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import structlog
from prometheus_client import CollectorRegistry, Counter

from ragpulse._native import run_stages
from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.collector.queue import EventQueue
from ragpulse.collector.supervisor import Supervised
from ragpulse.collector.telemetry.fast_metrics import CounterFamily
from ragpulse.collector.telemetry.shared import shared

Stage = Callable[[Envelope], Envelope | None]
Exporter = Callable[[Envelope], None]

log = structlog.get_logger("ragpulse.pipeline")


def _direct(component: Callable[[Envelope], object]) -> Callable[[Envelope], object]:
    """What the loop calls for a component: its core's method when it names one (`direct`), else itself."""
    return getattr(component, "direct", component)


class PipelineMetrics:
    """What the pipeline did with accepted events: processed, dropped, and the components that failed on one.
    One set per registry (`shared`): the OTLP source counts its own losses at shutdown into `dropped`, and
    components off the pipeline's task their failures into `stage_errors`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.processed = CounterFamily("ragpulse_events_processed_total", "Events that went through every pipeline stage.",
                                       ["type"], registry)
        self.dropped = Counter("ragpulse_events_dropped_total", "Accepted events lost before processing, by reason.",
                               ["reason"], registry=registry)
        self.dropped.labels(reason="shutdown_deadline")
        # Components off the pipeline's task (judge workers, the embedding thread) count their failures here too.
        self.stage_errors = Counter("ragpulse_stage_errors_total", "Exceptions raised by a pipeline stage or exporter.",
                                    ["stage"], registry=registry)


class Pipeline:
    def __init__(
        self,
        queue: EventQueue,
        stages: Sequence[tuple[str, Stage]],
        exporters: Sequence[tuple[str, Exporter]],
        registry: CollectorRegistry,
        *,
        max_batch_events: int,
    ) -> None:
        self.queue = queue
        self._stages = [(name, _direct(stage)) for name, stage in stages]
        # A stage cheaper done once per batch than once per event offers `prepare(batch)`; when it returns True it did
        # the whole batch's work, and the stage is not called on the batch's events.
        self._preparers = [(name, stage.prepare) for name, stage in stages if hasattr(stage, "prepare")]
        self._exporters = [(name, _direct(exporter)) for name, exporter in exporters]
        self._metrics = metrics = shared(registry, PipelineMetrics)
        self._max_batch = max_batch_events
        self._processed_traces = metrics.processed.labels("trace")
        self._processed_feedback = metrics.processed.labels("feedback")
        self.supervised = Supervised("pipeline", self._run, registry)

    async def start(self) -> None:
        self.supervised.start()

    async def shutdown(self, timeout: float) -> int:
        """Stop taking batches, process what is queued within `timeout`; returns events lost."""
        self.queue.close()
        task = self.supervised.task
        if task is None:
            return 0
        lost = 0
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            lost = self.queue.discard_remaining()
            task.cancel()
            if lost:
                self._metrics.dropped.labels(reason="shutdown_deadline").inc(lost)
                log.warning("shutdown deadline passed, events dropped", dropped=lost, timeout_s=timeout)
        return lost

    async def _run(self) -> None:
        while (batch := await self.queue.get(self._max_batch)) is not None:
            try:
                self.process(batch.envelopes)
            finally:  # even after a failure: an unacked batch would stall its source's commits
                if batch.ack is not None:
                    try:
                        batch.ack()
                    except Exception:
                        self._metrics.stage_errors.labels(stage="ack").inc()
                        log.exception("batch acknowledgement failed")
            await asyncio.sleep(0)  # let sources and /metrics run between batches

    def process(self, batch: Sequence[Envelope]) -> None:
        stages, done = self._stages, []
        for name, prepare in self._preparers:
            try:
                if prepare(batch) is True:
                    done.append(name)
            except Exception:  # the stage then does its work event by event
                self._metrics.stage_errors.labels(stage=name).inc()
                log.exception("pipeline component failed", component=name, source="batch")
        if done:
            stages = [(name, stage) for name, stage in stages if name not in done]
        # Each envelope through the stages, then the exporters, then counted: the loop in the compiled core
        # (native/src/pipeline.rs), a component's Exception given to _failed.
        run_stages(batch, stages, self._exporters, TraceEvent, self._processed_traces, self._processed_feedback,
                   failed=self._failed)

    def _failed(self, component: str, envelope: Envelope, error: Exception) -> None:
        # A bug in one component must cost its part of one event, not the stream. No event text in logs.
        self._metrics.stage_errors.labels(stage=component).inc()
        log.error("pipeline component failed", component=component, source=envelope.source, exc_info=error)
