"""Every ragpulse metric, created on a registry that is passed in.

Nothing is registered at import time, so each test (and each embedding
application) can use a private CollectorRegistry. The README's metrics table
lists the same names; tests/test_metrics_doc.py keeps the two in step.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from ragpulse.collector.config import MetricsConfig
from ragpulse.exporters.fast_metrics import CounterFamily, HistogramFamily

HTTP_DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    def __init__(self, registry: CollectorRegistry, config: MetricsConfig, version: str) -> None:
        labels = list(config.labels)
        self.label_names = labels

        # Updated on every event: the lock-free families of fast_metrics.
        def counter(name: str, doc: str, extra: tuple[str, ...] = ()) -> CounterFamily:
            return CounterFamily(name, doc, [*labels, *extra], registry)

        def histogram(name: str, doc: str, buckets: list[float]) -> HistogramFamily:
            return HistogramFamily(name, doc, labels, registry, buckets)

        # Quality signals of the RAG service, labelled by app/route/model/release.
        self.traces = counter("ragpulse_traces_total", "Trace events processed (after dedup).")
        self.fallbacks = counter(
            "ragpulse_fallbacks_total", "Answers detected as fallbacks, by the signal or rule that fired.", ("rule",)
        )
        self.retrieval_empty = counter("ragpulse_retrieval_empty_total", "Traces whose retrieval returned no chunks.")
        self.retrieval_chunks = histogram(
            "ragpulse_retrieval_chunks", "Chunks retrieved per trace (traces that report retrieval).", config.chunk_buckets
        )
        self.retrieval_top_score = histogram(
            "ragpulse_retrieval_top_score", "Highest retriever score among a trace's chunks.", config.score_buckets
        )
        self.retrieval_mean_score = histogram(
            "ragpulse_retrieval_mean_score", "Mean retriever score of a trace's chunks.", config.score_buckets
        )
        self.chunk_age = histogram(
            "ragpulse_retrieval_newest_chunk_age_seconds",
            "Age of the newest retrieved chunk (updated_at) at the time of the trace.",
            config.chunk_age_buckets_seconds,
        )
        self.latency = histogram(
            "ragpulse_answer_latency_seconds", "End-to-end latency reported by the service.", config.latency_buckets_seconds
        )
        self.tokens = counter("ragpulse_tokens_total", "LLM tokens reported by the service, by kind.", ("kind",))
        self.feedback = CounterFamily(
            "ragpulse_feedback_total",
            "Feedback events processed (after dedup), by kind and bounded value.",
            ["kind", "value"],
            registry,
        )

        # The sidecar's own health, updated per request or batch: plain prometheus_client.
        self.events_received = Counter(
            "ragpulse_events_received_total", "Valid events accepted from a source.", ["source", "type"], registry=registry
        )
        self.events_invalid = Counter(
            "ragpulse_events_invalid_total", "Events rejected by validation, by reason.", ["source", "reason"], registry=registry
        )
        self.events_truncated = Counter(
            "ragpulse_events_truncated_total", "Accepted events with a field cut to its limit.", ["source", "field"], registry=registry
        )
        self.events_refused = Counter(
            "ragpulse_events_refused_total",
            "Valid events not taken in because the pipeline was full or shutting down.",
            ["source", "reason"],
            registry=registry,
        )
        self.events_duplicate = Counter(
            "ragpulse_events_duplicate_total", "Events dropped as duplicates of one seen in the dedup window.", ["type"], registry=registry
        )
        self.events_processed = CounterFamily(
            "ragpulse_events_processed_total", "Events that went through every pipeline stage.", ["type"], registry
        )
        self.events_dropped = Counter(
            "ragpulse_events_dropped_total", "Accepted events lost before processing, by reason.", ["reason"], registry=registry
        )
        self.stage_errors = Counter(
            "ragpulse_stage_errors_total", "Exceptions raised by a pipeline stage or exporter.", ["stage"], registry=registry
        )
        self.queue_depth = Gauge("ragpulse_queue_depth_events", "Events waiting in a queue.", ["queue"], registry=registry)
        self.queue_capacity = Gauge("ragpulse_queue_capacity_events", "Capacity of a queue.", ["queue"], registry=registry)
        self.dedup_entries = Gauge("ragpulse_dedup_window_entries", "Identities held in the dedup window.", registry=registry)
        self.dedup_evicted = Counter(
            "ragpulse_dedup_evicted_total", "Identities forgotten before their window ended because the window was full.", registry=registry
        )
        self.label_overflow = Counter(
            "ragpulse_label_overflow_total",
            "Events whose label value was replaced by 'other' by the cardinality guard.",
            ["label"],
            registry=registry,
        )
        self.source_up = Gauge("ragpulse_source_up", "1 when a source is running and connected.", ["source"], registry=registry)
        self.http_requests = Counter(
            "ragpulse_http_requests_total", "HTTP requests served, by endpoint and status code.", ["endpoint", "code"], registry=registry
        )
        self.http_duration = Histogram(
            "ragpulse_http_request_duration_seconds",
            "Time to serve an HTTP request.",
            ["endpoint"],
            buckets=HTTP_DURATION_BUCKETS,
            registry=registry,
        )
        self.build_info = Gauge("ragpulse_build_info", "Always 1; the version in a label.", ["version"], registry=registry)
        self.build_info.labels(version=version).set(1)

        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
