"""Judgments as OpenTelemetry evaluation events: one `gen_ai.evaluation.result` log record per evaluation
(interop/evaluations.py), on the judged trace's trace id and the span that produced the answer (the
event's span_id: the LLM or agent span whose response id it carries, else the root), so a tracing backend
shows the verdict on the operation it evaluates. Sent with the OpenTelemetry SDK's LoggerProvider, its batch
processor and its OTLP log exporter (gRPC or HTTP), on the SDK's own thread.

Bounded: records handed to the SDK and not yet exported are capped in count and bytes here, before the
SDK's queue (which drops silently when full); past a cap a record is dropped and counted, as is a batch the
exporter gave up on (the endpoint away past its retries), and what is not exported by shutdown's deadline. A
trace with no OpenTelemetry trace id is counted and skipped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.util.types import Attributes
from prometheus_client import CollectorRegistry

from ragpulse import __version__
from ragpulse.collector.telemetry.shared import shared
from ragpulse.config import InteropConfig
from ragpulse.interop.evaluations import Evaluation, evaluations, otel_trace_id
from ragpulse.interop.otlp_exporters import InteropMetrics, log_exporter
from ragpulse.judging import JudgmentRecord

EVENT_NAME = "gen_ai.evaluation.result"
OUTPUT = "evaluation_events"


def record_attributes(record: JudgmentRecord, evaluation: Evaluation) -> dict[str, str | float]:
    """The conventions' attributes of one evaluation, then ragpulse's: which judge, prompt and sample."""
    attributes: dict[str, str | float] = {"gen_ai.evaluation.name": evaluation.name,
                                          "gen_ai.evaluation.score.label": evaluation.label}
    if evaluation.score is not None:
        attributes["gen_ai.evaluation.score.value"] = float(evaluation.score)
    if evaluation.explanation is not None:
        attributes["gen_ai.evaluation.explanation"] = evaluation.explanation
    if evaluation.error is not None:
        attributes["error.type"] = evaluation.error
    if record.response_id:
        attributes["gen_ai.response.id"] = record.response_id
    attributes["ragpulse.judge"] = record.judge
    attributes["ragpulse.judge.model"] = record.judge_model
    attributes["ragpulse.prompt.version"] = record.prompt_version
    attributes["ragpulse.sample"] = record.sample
    if evaluation.name == "groundedness" and record.confidence is not None:
        attributes["ragpulse.confidence"] = record.confidence
    if record.stage is not None:
        attributes["ragpulse.stage"] = record.stage  # the bad answer's failed stage: retrieval, generation, knowledge_gap...
    for key, value in (("ragpulse.app", record.app), ("ragpulse.route", record.route)):
        if value:
            attributes[key] = value
    return attributes


def _size(attributes: Attributes) -> int:
    """What a record holds, roughly in bytes: its attributes' text (the same count at emit and at export)."""
    return sum(len(key) + (len(value) if isinstance(value, str) else 8) for key, value in (attributes or {}).items())


class _Bounded(LogRecordExporter):
    """The SDK's OTLP exporter, counting what it delivered and dropped and releasing the hand-over's caps."""

    def __init__(self, exporter: LogRecordExporter, owner: EvaluationEvents) -> None:
        self._exporter = exporter
        self._owner = owner
        self._lock = threading.Lock()
        self._shut = False

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        try:
            result = self._exporter.export(batch)
        except Exception:  # an exporter bug must not kill the SDK's worker thread, nor leak the caps
            result = LogRecordExportResult.FAILURE
        self._owner.exported(batch, result is LogRecordExportResult.SUCCESS)
        return result

    def shutdown(self) -> None:
        """Once: by the SDK's shutdown, or by shutdown's deadline (which ends a retry's wait), whichever comes first."""
        with self._lock:
            if self._shut:
                return
            self._shut = True
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class EvaluationEvents:
    """Emits each judgment record's evaluations, never blocking: a consumer of judging's exit (app/interop_wiring.py)."""

    def __init__(self, config: InteropConfig, registry: CollectorRegistry, resource: Resource) -> None:
        metrics = shared(registry, InteropMetrics)
        options = config.evaluation_events
        self._include_content = config.include_content
        self._max_chars = config.explanation_max_chars
        self._max_records, self._max_bytes = options.max_queue, options.max_queue_bytes
        self._timeout = options.timeout_seconds
        self._lock = threading.Lock()
        self._records = self._bytes = 0
        self._closed = False  # shutdown's deadline passed: what was not exported is counted, late results are not
        self._sent = metrics.sent.labels(output=OUTPUT)
        self._full = metrics.dropped.labels(output=OUTPUT, reason="queue_full")
        self._failed = metrics.dropped.labels(output=OUTPUT, reason="export_failed")
        self._no_trace_id = metrics.dropped.labels(output=OUTPUT, reason="no_trace_id")
        metrics.queued.labels(output=OUTPUT).set_function(lambda: self._records)
        # Shut down here, within the deadline (shutdown below), never again at exit, where it would wait on the endpoint.
        self._provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
        self._exporter = _Bounded(log_exporter(options), self)
        self._provider.add_log_record_processor(BatchLogRecordProcessor(
            self._exporter,
            schedule_delay_millis=options.schedule_delay_seconds * 1000, max_export_batch_size=options.max_batch,
            # Larger than the caps here, so the SDK's queue never drops a record uncounted.
            max_queue_size=options.max_queue + options.max_batch))
        self._logger = self._provider.get_logger("ragpulse.judging", __version__)

    def __call__(self, record: JudgmentRecord) -> None:
        found = evaluations(record, include_content=self._include_content, max_chars=self._max_chars)
        trace_id = otel_trace_id(record.trace_id)
        if trace_id is None:
            self._no_trace_id.inc(len(found))
            return
        span_id = int(record.span_id, 16) if record.span_id else 0
        context = trace.set_span_in_context(NonRecordingSpan(
            SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))))
        timestamp = int(record.judged_at * 1e9)
        for evaluation in found:
            attributes = record_attributes(record, evaluation)
            size = _size(attributes)
            with self._lock:
                if self._records >= self._max_records or self._bytes + size > self._max_bytes:
                    self._full.inc()
                    continue
                self._records += 1
                self._bytes += size
            self._logger.emit(timestamp=timestamp, context=context, severity_number=SeverityNumber.INFO,
                              severity_text="INFO", event_name=EVENT_NAME, attributes=attributes)

    def exported(self, batch: Sequence[ReadableLogRecord], delivered: bool) -> None:
        size = sum(_size(data.log_record.attributes) for data in batch)
        with self._lock:
            if self._closed:  # counted at shutdown's deadline
                return
            self._records -= len(batch)
            # Never below zero, and nothing held when no record is: sizes are estimates of the attributes,
            # which an SDK attribute limit (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) may have cut since.
            self._bytes = max(0, self._bytes - size) if self._records else 0
        (self._sent if delivered else self._failed).inc(len(batch))

    def shutdown(self, deadline: float) -> None:
        """Exports what is queued until `deadline` (a monotonic time), at most the endpoint's timeout: the SDK's own
        shutdown would try every batch in turn, each for as long, against an endpoint that is away. What is not
        exported by then is counted as failed, and the exporter is shut, which ends its retries; an export
        waiting on an endpoint that never answers is left to its daemon thread."""
        worker = threading.Thread(target=self._provider.shutdown, name="ragpulse-evaluation-events-shutdown", daemon=True)
        worker.start()
        worker.join(max(0.0, min(deadline - time.monotonic(), self._timeout)))
        with self._lock:
            lost, self._records, self._bytes, self._closed = self._records, 0, 0, True
        self._failed.inc(lost)
        self._exporter.shutdown()
