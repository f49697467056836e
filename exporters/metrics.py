"""Every ragpulse metric, created on a registry that is passed in.

Nothing is registered at import time, so each test (and each embedding
application) can use a private CollectorRegistry. The README's metrics table
lists the same names; tests/test_metrics_doc.py keeps the two in step.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Sequence

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
from ragpulse.collector.events import Envelope, TraceEvent
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
        shares = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
        self.local_groundedness = histogram(
            "ragpulse_local_groundedness", "Share of the answer's words and numbers found in its chunks (lexical).", shares
        )
        self.local_answer_relevancy = histogram(
            "ragpulse_local_answer_relevancy", "Share of the question's words found in the answer (lexical).", shares
        )
        self.local_context_relevance = histogram(
            "ragpulse_local_context_relevance", "Share of the question's words and numbers found in the chunks (lexical).", shares
        )
        self.local_number_mismatch = counter(
            "ragpulse_local_number_mismatch_total", "Answers with a number (and unit) that none of their chunks has."
        )
        # The optional embedding scorer: observed from its own thread, so prometheus-client's (locked) metrics.
        similarity = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
        self.embedding_answer_relevancy = Histogram(
            "ragpulse_embedding_answer_relevancy", "Cosine similarity of question and answer (embeddings scorer).",
            labels, buckets=similarity, registry=registry,
        )
        self.embedding_context_relevance = Histogram(
            "ragpulse_embedding_context_relevance", "Best cosine similarity of the question and a chunk (embeddings scorer).",
            labels, buckets=similarity, registry=registry,
        )
        self.embedding_groundedness = Histogram(
            "ragpulse_embedding_groundedness", "Best cosine similarity of the answer and a chunk (embeddings scorer).",
            labels, buckets=similarity, registry=registry,
        )
        self.embedding_traces = Counter("ragpulse_embedding_traces_total", "Traces embedded.", registry=registry)
        self.embedding_dropped = Counter(
            "ragpulse_embedding_dropped_total", "Sampled traces not embedded because the embedding queue was full.",
            registry=registry,
        )
        self.feedback = CounterFamily(
            "ragpulse_feedback_total",
            "Feedback events processed (after dedup), by kind and bounded value.",
            ["kind", "value"],
            registry,
        )

        # The sidecar's own health, updated per request or batch: plain prometheus_client.
        def plain(name: str, doc: str, *labelnames: str) -> Counter:
            return Counter(name, doc, labelnames, registry=registry)

        def gauge(name: str, doc: str, *labelnames: str) -> Gauge:
            return Gauge(name, doc, labelnames, registry=registry)

        self.events_received = plain("ragpulse_events_received_total", "Valid events accepted from a source.", "source", "type")
        self.events_invalid = plain("ragpulse_events_invalid_total", "Events rejected by validation, by reason.", "source", "reason")
        self.events_truncated = plain(
            "ragpulse_events_truncated_total", "Accepted events with a field cut to its limit.", "source", "field"
        )
        self.events_refused = plain(
            "ragpulse_events_refused_total", "Valid events not taken in because the pipeline was full.", "source", "reason"
        )
        self.events_duplicate = plain(
            "ragpulse_events_duplicate_total", "Events dropped as duplicates of one seen in the dedup window.", "type"
        )
        self.events_processed = CounterFamily(
            "ragpulse_events_processed_total", "Events that went through every pipeline stage.", ["type"], registry
        )
        self.events_dropped = plain("ragpulse_events_dropped_total", "Accepted events lost before processing, by reason.", "reason")
        self.stage_errors = plain("ragpulse_stage_errors_total", "Exceptions raised by a pipeline stage or exporter.", "stage")
        self.dedup_entries = gauge("ragpulse_dedup_window_entries", "Identities held in the dedup window.")
        self.dedup_evicted = plain(
            "ragpulse_dedup_evicted_total", "Identities forgotten before their window ended because the window was full."
        )
        self.label_overflow = plain(
            "ragpulse_label_overflow_total", "Events whose label value was replaced by 'other' by the cardinality guard.", "label"
        )
        self.source_up = gauge("ragpulse_source_up", "1 when a source is running and connected.", "source")

        # The Kafka source.
        self.kafka_records = plain("ragpulse_kafka_records_consumed_total", "Kafka messages consumed.", "topic")
        self.kafka_bytes = plain("ragpulse_kafka_bytes_consumed_total", "Bytes of Kafka message values consumed.", "topic")
        self.kafka_lag = gauge(
            "ragpulse_kafka_consumer_lag_records",
            "Messages between the consumer's position and the partition's high watermark.",
            "topic",
            "partition",
        )
        self.kafka_dead_letters = plain(
            "ragpulse_kafka_dead_letters_total", "Malformed messages produced to the dead-letter topic.", "topic"
        )
        self.kafka_commits = plain("ragpulse_kafka_commits_total", "Offset commits, by what triggered them.", "trigger")
        self.kafka_commit_failures = plain(
            "ragpulse_kafka_commit_failures_total", "Offset commits that failed (the next one covers them)."
        )
        self.kafka_rebalances = plain("ragpulse_kafka_rebalances_total", "Partition assignments received from the group.")
        self.kafka_assigned = gauge("ragpulse_kafka_assigned_partitions", "Partitions assigned to this consumer.")
        self.kafka_pauses = plain(
            "ragpulse_kafka_backpressure_pauses_total", "Times fetching was paused because the pipeline queue was full."
        )
        self.kafka_dedup_restored = plain(
            "ragpulse_kafka_dedup_restored_total", "Identities read back into the dedup window on partition assignment."
        )

        # The OTLP source.
        self.otlp_requests = plain("ragpulse_otlp_requests_total", "OTLP export requests, by encoding and status code.", "encoding", "code")
        self.otlp_spans = plain("ragpulse_otlp_spans_received_total", "Spans received over OTLP.", "encoding")
        self.otlp_spans_rejected = plain(
            "ragpulse_otlp_spans_rejected_total", "Spans rejected as unusable (reported back as partial success)."
        )
        self.otlp_spans_dropped = plain(
            "ragpulse_otlp_spans_dropped_total", "Spans dropped by the assembler: late_span, duplicate, too_many_spans.", "reason"
        )
        self.otlp_traces = plain(
            "ragpulse_otlp_traces_total",
            "Traces assembled from spans, by outcome: complete, ttl_expired, capacity, shutdown, not_rag.",
            "outcome",
        )
        self.otlp_in_flight = gauge("ragpulse_otlp_traces_in_flight", "Traces waiting for their spans.")
        self.otlp_in_flight_bytes = gauge("ragpulse_otlp_traces_in_flight_bytes",
                                          "Bytes of the spans waiting to be assembled (protobuf size).")
        self.otlp_feedback_unmapped = plain(
            "ragpulse_otlp_feedback_unmapped_total", "gen_ai.evaluation.result events with neither a 1-5 score nor a pass/fail label."
        )

        # Judging (the LLM judge, or the local one): coverage, verdicts, cost. The verdict and score
        # families are fast ones (updated on the event loop, where the workers record): with every
        # verdict precreated per label set they hold most of a scrape's series (docs/BENCHMARKS.md).
        self.judgments = CounterFamily(
            "ragpulse_judgments_total",
            "Judgments by judge (llm, local, rule), sample (routine: the base rate, unbiased; targeted: a stratum's "
            "class beyond it; feedback: judged because of a user signal, in no rate), metric and verdict. groundedness: grounded, hallucination, error; answer_relevancy: relevant, "
            "irrelevant, fallback, error; context_relevance: relevant, irrelevant, error.",
            [*labels, "judge", "sample", "metric", "verdict"],
            registry,
        )
        self.judge_score = HistogramFamily(
            "ragpulse_judge_score", "Judge scores by metric: groundedness and answer_relevancy 1-5, context_relevance "
            "0-3 (the best chunk).", ["judge", "sample", "metric"], registry, (0, 1, 2, 3, 4, 5),
        )
        self.judge_supported_share = Histogram(
            "ragpulse_judge_supported_claims_ratio", "Share of an answer's claims the chunks support.", ["judge"],
            buckets=(0.2, 0.4, 0.6, 0.8, 0.99, 1.0), registry=registry,
        )
        self.badcases = CounterFamily(
            "ragpulse_badcases_total",
            "Judged bad cases by sample (routine, targeted, feedback) and the stage that failed: retrieval, generation, "
            "knowledge_gap, over_refusal.",
            [*labels, "sample", "stage"],
            registry,
        )
        self.judge_judged = plain("ragpulse_judge_judged_total", "Traces judged (cache hits included), by priority class.", "priority")
        self.judge_skipped = plain(
            "ragpulse_judge_skipped_total",
            "Sampled traces not judged, by priority class and reason: queue_full, evicted, budget_tokens, budget_cost, "
            "circuit_open, trace_unknown, shutdown.",
            "priority", "reason",
        )
        self.judge_requests = plain(
            "ragpulse_judge_requests_total", "LLM judge calls, by judge model and outcome (ok or the error).", "judge_model", "outcome"
        )
        self.judge_http_requests = plain(
            "ragpulse_judge_http_requests_total", "HTTP requests to the judge API, retries included.", "judge_model"
        )
        self.judge_retries = plain("ragpulse_judge_retries_total", "Judge requests retried, by error.", "judge_model", "error")
        self.judge_duration = Histogram(
            "ragpulse_judge_request_duration_seconds", "Time of a judge call, retries included.", ["judge_model"],
            buckets=(0.25, 0.5, 1, 2, 4, 8, 15, 30, 60), registry=registry,
        )
        self.judge_tokens = plain("ragpulse_judge_tokens_total", "Tokens spent by the judge, by kind.", "judge_model", "kind")
        self.judge_cost = plain(
            "ragpulse_judge_cost_total", "What the judge cost, in the currency of judge.prices.", "judge_model"
        )
        self.judge_budget_remaining = gauge(
            "ragpulse_judge_budget_remaining",
            "What is left of each configured budget: requests_per_minute, tokens_per_hour, tokens_per_day, cost_per_hour, "
            "cost_per_day.",
            "budget",
        )
        self.judge_queue_depth = gauge("ragpulse_judge_queue_depth", "Traces waiting for the judge.")
        self.judge_cache_hits = plain(
            "ragpulse_judge_cache_hits_total", "Judgments reused for an identical question, chunks and answer (no call)."
        )
        self.judge_circuit_state = gauge("ragpulse_judge_circuit_state", "The judge's circuit breaker: 0 closed, 1 open, 2 half open.")
        self.judge_self_judging = plain(
            "ragpulse_judge_self_judging_total", "LLM judgments where the judge model is the model that answered (biased)."
        )
        self.results_dropped = plain(
            "ragpulse_results_dropped_total",
            "Judgment records not kept: writer_full (sinks behind), retention and max_rows (bad-case store), review_retention and review_max_rows (review queue).", "reason",
        )
        self.results_sink_errors = plain("ragpulse_results_sink_errors_total", "Failed writes of a judgment record, by sink.", "sink")

        self.http_requests = plain(
            "ragpulse_http_requests_total", "HTTP requests served, by endpoint and status code.", "endpoint", "code"
        )
        self.http_duration = Histogram(
            "ragpulse_http_request_duration_seconds",
            "Time to serve an HTTP request.",
            ["endpoint"],
            buckets=HTTP_DURATION_BUCKETS,
            registry=registry,
        )
        self.build_info = gauge("ragpulse_build_info", "Always 1; the version in a label.", "version")
        self.build_info.labels(version=version).set(1)

        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)

    def count_accepted(self, source: str, envelopes: Sequence[Envelope]) -> None:
        """Count events a source accepted, by type, and the fields cut to their limits."""
        traces = sum(1 for e in envelopes if isinstance(e.event, TraceEvent))
        if traces:
            self.events_received.labels(source=source, type="trace").inc(traces)
        if len(envelopes) > traces:
            self.events_received.labels(source=source, type="feedback").inc(len(envelopes) - traces)
        for path, count in Tally(p for e in envelopes for p in e.truncated).items():
            # "chunks[3].text" -> "chunks.text": the label must stay bounded.
            field = "chunks.text" if path.startswith("chunks[") else path
            self.events_truncated.labels(source=source, field=field).inc(count)
