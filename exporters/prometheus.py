"""The fast-path exporter: every processed event becomes Prometheus samples.

Looking up labelled children in prometheus_client costs more than updating
them, so the children for one combination of raw label values are resolved
once (through the cardinality guard) and cached in a bounded dict.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ragpulse._native import ExporterCore
from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter, HistogramFamily
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import MetricsConfig

# Feedback values that are bounded enough to be a label; others are "-".
_VALUE_LABEL_KINDS = frozenset({"rating", "review"})


class FastPathMetrics:
    """The RAG service's signals, labelled by app/route/model/release: lock-free families, updated on every event."""

    def __init__(self, registry: CollectorRegistry, config: MetricsConfig) -> None:
        labels = list(config.labels)

        def counter(name: str, doc: str, extra: tuple[str, ...] = ()) -> CounterFamily:
            return CounterFamily(name, doc, [*labels, *extra], registry)

        def histogram(name: str, doc: str, buckets: list[float]) -> HistogramFamily:
            return HistogramFamily(name, doc, labels, registry, buckets)

        self.traces = counter("ragpulse_traces_total", "Trace events processed (after dedup).")
        self.failed = counter("ragpulse_traces_failed_total", "Trace events of failed runs (an error, no answer): part of "
                              "ragpulse_traces_total, never scored or judged.")
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
        self.tokens = counter("ragpulse_tokens_total", "LLM tokens reported by the service, by kind (partial usage "
                              "counts what was reported: ragpulse_usage_partial_total).", ("kind",))
        self.usage_partial = counter(
            "ragpulse_usage_partial_total",
            "Traces whose usage is partial, by reason: calls_without_usage (some of its LLM calls reported no tokens, "
            "streamed without usage, say; the tokens counted are those reported).", ("reason",),
        )
        self.retrievals = histogram(
            "ragpulse_retrievals", "Retrievals per trace (an agent may search several times; traces that report them).",
            [1, 2, 3, 4, 6, 8],
        )
        self.search_new_chunks = histogram(
            "ragpulse_search_new_chunks",
            "Per search of a trace that searched several times (an agent): the chunks it added to what the answer "
            "could use; 0 when it found nothing, or only chunks an earlier search had found.", config.chunk_buckets,
        )
        self.feedback = CounterFamily(
            "ragpulse_feedback_total", "Feedback events processed (after dedup), by kind and bounded value.",
            ["kind", "value"], registry,
        )


class _Series:
    """The labelled children of one guarded label set."""

    __slots__ = (
        "traces", "failed", "fallbacks", "retrieval_empty", "chunks", "top_score", "mean_score",
        "chunk_age", "latency", "prompt_tokens", "completion_tokens", "usage_partial", "retrievals", "searches",
        "overflowed",
        "_fallback_parent", "_labels",
    )

    def __init__(self, metrics: FastPathMetrics, labels: tuple[str, ...], overflowed: tuple[str, ...],
                 fallback_rules: tuple[str, ...]) -> None:
        self.traces = metrics.traces.labels(*labels)
        self.failed = metrics.failed.labels(*labels)  # at zero from the first trace: a failure rate is 0, not no data
        self.retrieval_empty = metrics.retrieval_empty.labels(*labels)
        self.chunks = metrics.retrieval_chunks.labels(*labels)
        self.top_score = metrics.retrieval_top_score.labels(*labels)
        self.mean_score = metrics.retrieval_mean_score.labels(*labels)
        self.chunk_age = metrics.chunk_age.labels(*labels)
        self.latency = metrics.latency.labels(*labels)
        self.prompt_tokens = metrics.tokens.labels(*labels, "prompt")
        self.completion_tokens = metrics.tokens.labels(*labels, "completion")
        self.usage_partial = metrics.usage_partial.labels(*labels, "calls_without_usage")
        self.retrievals = metrics.retrievals.labels(*labels)
        self.searches = metrics.search_new_chunks.labels(*labels)
        self.fallbacks: dict[str, FastCounter] = {}
        self.overflowed = overflowed
        self._fallback_parent = metrics.fallbacks
        self._labels = labels
        for rule in fallback_rules:  # at zero from the first trace, so a rate over them is 0, not no data
            self.fallback(rule)

    def fallback(self, rule: str) -> FastCounter:
        child = self.fallbacks.get(rule)
        if child is None:  # rule names come from config, so this dict is bounded
            child = self.fallbacks[rule] = self._fallback_parent.labels(*self._labels, rule)
        return child


class FastPathExporter:
    def __init__(self, registry: CollectorRegistry, config: MetricsConfig, guard: LabelGuard, *, max_cached: int,
                 fallback_rules: tuple[str, ...] = ()) -> None:
        self._metrics = FastPathMetrics(registry, config)
        self._fallback_rules = fallback_rules
        self._guard = guard
        self._feedback: dict[tuple[str, str], FastCounter] = {}
        # Every series of a label set (traces, each fallback rule: the fallback rate's parts) at zero when it is new.
        guard.on_new_label_set(lambda labels: _Series(self._metrics, labels, (), fallback_rules))
        # A trace's samples in the compiled core (native/src/export.rs), its label set's children cached there by raw
        # label values (bounded); a new label set's series, a fallback rule's counter and feedback come back here.
        self._core = ExporterCore(TraceEvent, list(guard.names), max_cached, series=self._new_series,
                                  count_overflow=guard.count_overflow, feedback=self._export_feedback)
        self.direct = self._core.export  # what the pipeline's loop calls (collector/pipeline.py)

    def __call__(self, envelope: Envelope) -> None:
        self._core.export(envelope)

    def _new_series(self, raw: tuple[str | None, ...]) -> _Series:
        labels, overflowed = self._guard.admit(raw)
        return _Series(self._metrics, labels, overflowed, self._fallback_rules)

    def _export_feedback(self, event: FeedbackEvent) -> None:
        # thumbs are "up"/"down"; ratings and reviews (1-5) are rounded to whole points.
        if event.kind == "thumbs":
            value = str(event.value)
        elif event.kind in _VALUE_LABEL_KINDS:
            value = str(round(event.value))  # type: ignore[arg-type]
        else:
            value = "-"
        key = (event.kind, value)
        child = self._feedback.get(key)
        if child is None:  # kinds are an enum and their label values are bounded above
            child = self._feedback[key] = self._metrics.feedback.labels(event.kind, value)
        child.inc()
