"""The OTLP source's telemetry: requests and spans received, spans and traces the assembler dropped or finished."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.intake import IntakeMetrics
from ragpulse.collector.pipeline import PipelineMetrics
from ragpulse.collector.telemetry.fast_metrics import CounterFamily
from ragpulse.collector.telemetry.shared import shared

TRACE_OUTCOMES = ("complete", "ttl_expired", "capacity", "shutdown", "failed", "not_rag", "unmapped_genai",
                  "content_not_captured", "detached_retrieval", "mapping_failed")
TOOL_RESULT_KINDS = ("documents", "text")
TOOL_RESULT_READINGS = ("retrieval", "context", "ignored")  # sources/otlp/tool_results.py
SPAN_DROP_REASONS = ("late_span", "duplicate", "too_many_spans", "over_bytes")
SPAN_REJECT_REASONS = ("invalid_trace_id", "invalid_span_id", "invalid_utf8")  # sources/otlp/spans.py DecodedSpans


class OtlpMetrics:
    """Made once a registry (`otlp_metrics`) and shared by the receivers, the span intake and the Kafka source;
    `intake` and `dropped` are the pipeline door's families (events by source, events lost at shutdown), which the
    OTLP source reports into."""

    def __init__(self, registry: CollectorRegistry, intake: IntakeMetrics, dropped: Counter) -> None:
        def counter(name: str, doc: str, *labelnames: str) -> Counter:
            return Counter(name, doc, labelnames, registry=registry)

        self.intake = intake
        self.dropped = dropped
        self.requests = counter("ragpulse_otlp_requests_total", "OTLP export requests, by encoding and status code.",
                                "encoding", "code")
        self.spans = counter("ragpulse_otlp_spans_received_total", "Spans received over OTLP.", "encoding")
        self.json_general = counter(
            "ragpulse_otlp_json_general_total",
            "OTLP/JSON requests read by protobuf's JSON mapping in Python, about ten times the compiled reader's cost a "
            "span: the exporter writes outside its subset (links, ids in base64, numbers as floats...).",
        )
        self.spans_rejected = counter(
            "ragpulse_otlp_spans_rejected_total",
            "Spans rejected as unusable, reported back as partial success, by reason: invalid_trace_id, invalid_span_id, "
            "invalid_utf8 (a string in the span, its resource or its scope; in OTLP/JSON a lone surrogate).", "reason",
        )
        self.spans_dropped = counter(
            "ragpulse_otlp_spans_dropped_total", "Spans dropped by the assembler: late_span, duplicate, too_many_spans.",
            "reason",
        )
        self.late_spans = counter(
            "ragpulse_otlp_late_spans_total",
            "Spans that came after their trace was assembled, by kind (retriever, llm, other): the log names the "
            "setting to raise.",
            "kind",
        )
        for kind in ("retriever", "llm", "other"):
            self.late_spans.labels(kind=kind)
        self.traces = counter(
            "ragpulse_otlp_traces_total",
            "Traces assembled from spans, by outcome: complete, ttl_expired, capacity, shutdown; failed (a failed run: "
            "an event with no answer); not mapped: not_rag (no LLM or retrieval span, or embedding calls alone), "
            "unmapped_genai (GenAI-looking spans ragpulse cannot map), content_not_captured, detached_retrieval (a "
            "retrieval with no model call in its trace), mapping_failed.",
            "outcome",
        )
        self.in_flight = Gauge("ragpulse_otlp_traces_in_flight", "Traces waiting for their spans.", registry=registry)
        self.in_flight_bytes = Gauge("ragpulse_otlp_traces_in_flight_bytes",
                                     "Bytes of the spans waiting to be assembled (protobuf size).", registry=registry)
        self.parts_skipped = counter(
            "ragpulse_otlp_message_parts_skipped_total",
            "Message content parts that are not text (image, image_url, audio, file, other), skipped when reading "
            "a question or answer.", "type",
        )
        self.tool_results = counter(
            "ragpulse_otlp_tool_results_total",
            "Tool call results, by kind (documents, text) and what they were read as: retrieval, context (judged "
            "against, no retrieval: a tool otlp.retrieval_tools does not name), ignored (after the answering call, or "
            "empty).", "kind", "read_as",
        )
        for kind in TOOL_RESULT_KINDS:
            for read_as in TOOL_RESULT_READINGS:
                self.tool_results.labels(kind=kind, read_as=read_as)
        # Lock-free (collector/telemetry/fast_metrics.py): the decoder's text cache counts into it (TextCache).
        self.texts_evicted = CounterFamily(
            "ragpulse_otlp_text_cache_evicted_total",
            "Retrieved documents' texts the OTLP decoder let go of for its caps (4,096 texts, 8 MiB): one that recurs "
            "after is made again, a string of its own in each request's spans.", [], registry,
        )
        self.feedback_unmapped = counter(
            "ragpulse_otlp_feedback_unmapped_total",
            "gen_ai.evaluation.result events with neither a 1-5 score nor a pass/fail label.",
        )
        for outcome in TRACE_OUTCOMES:
            self.traces.labels(outcome=outcome)
        for reason in SPAN_DROP_REASONS:
            self.spans_dropped.labels(reason=reason)
        for reason in SPAN_REJECT_REASONS:
            self.spans_rejected.labels(reason=reason)


def otlp_metrics(registry: CollectorRegistry) -> OtlpMetrics:
    """The registry's one OtlpMetrics, reporting into its one IntakeMetrics and PipelineMetrics."""
    return shared(registry, OtlpMetrics, shared(registry, IntakeMetrics), shared(registry, PipelineMetrics).dropped)
