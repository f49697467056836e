"""The optional embedding scorer: cosine similarities from a sentence-transformers model.

Installed with the `embeddings` extra (`pip install 'ragpulse[embeddings]'`, which brings torch);
the core never imports it. Embedding costs milliseconds, so the pipeline stage only hands a
sampled trace to a bounded queue (full: dropped and counted) and one thread embeds batches of
traces in single `encode` calls (torch releases the GIL while it computes). The queue is capped in traces and in
bytes (the events' sizes). Per trace it observes:

- answer relevancy: cos(question, answer);
- context relevance: the best cos(question, chunk);
- groundedness proxy: the best cos(answer, chunk).

Like the lexical scores these are proxies, not verdicts: similar is not the same as supported.
Chunk embeddings are cached by a digest of their text (a fixed size an entry, whatever the chunk's length),
since the same knowledge base is retrieved again and again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram

from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.collector.handover import Handover
from ragpulse.collector.pipeline import PipelineMetrics
from ragpulse.collector.sampling import in_sample
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.collector.telemetry.shared import shared
from ragpulse.errors import ConfigError, ConfigProblem

log = structlog.get_logger("ragpulse.embeddings")


def load_model(name: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ConfigError(
            [ConfigProblem("embeddings.enabled", "needs sentence-transformers: pip install 'ragpulse[embeddings]'")],
            "embeddings",
        ) from None
    try:
        return SentenceTransformer(name, device=device)
    except (OSError, ValueError) as exc:
        raise ConfigError([ConfigProblem("embeddings.model", f"cannot load {name!r}: {exc}")], "embeddings") from None


class EmbeddingMetrics:
    """Observed from the embedding thread, so prometheus_client's (locked) metrics. `failures` is the pipeline's
    stage-error child for this scorer: a model error is a component failure like any stage's."""

    def __init__(self, registry: CollectorRegistry, labels: list[str], stage_errors: Counter) -> None:
        similarity = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

        def histogram(name: str, doc: str) -> Histogram:
            return Histogram(name, doc, labels, buckets=similarity, registry=registry)

        self.embedding_answer_relevancy = histogram(
            "ragpulse_embedding_answer_relevancy", "Cosine similarity of question and answer (embeddings scorer).")
        self.embedding_context_relevance = histogram(
            "ragpulse_embedding_context_relevance", "Best cosine similarity of the question and a chunk (embeddings scorer).")
        self.embedding_groundedness = histogram(
            "ragpulse_embedding_groundedness", "Best cosine similarity of the answer and a chunk (embeddings scorer).")
        self.embedding_traces = Counter("ragpulse_embedding_traces_total", "Traces embedded.", registry=registry)
        self.embedding_dropped = Counter(
            "ragpulse_embedding_dropped_total",
            "Sampled traces not embedded because the embedding queue was full (embeddings.queue_capacity or "
            "queue_max_bytes).", registry=registry,
        )
        self.chunk_cache_evicted = Counter(
            "ragpulse_embedding_chunk_cache_evicted_total",
            "Chunk vectors dropped from the cache for embeddings.chunk_cache_entries: embedded again when they recur.",
            registry=registry,
        )
        self.failures = stage_errors.labels(stage="embeddings")


def text_key(text: str) -> bytes:
    """A chunk's cache key: a 16-byte digest of its text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class VectorCache:
    """Chunk vectors by text_key(), least recently used out first, at most `entries` (each a digest and a vector of
    the model's dimension: a fixed size), counted when evicted."""

    def __init__(self, entries: int, evicted: Counter) -> None:
        self._items: OrderedDict[bytes, Any] = OrderedDict()
        self._entries = entries
        self._evicted = evicted

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> Any | None:
        vector = self._items.get(key)
        if vector is not None:
            self._items.move_to_end(key)
        return vector

    def put(self, key: bytes, vector: Any) -> None:
        self._items[key] = vector
        while len(self._items) > self._entries:
            self._items.popitem(last=False)
            self._evicted.inc()


Queued = tuple[tuple[str, ...], TraceEvent]  # the trace's labels, the trace


class EmbeddingScorer:
    """Pipeline stage plus its embedding thread."""

    def __init__(self, model: Any, registry: CollectorRegistry, guard: LabelGuard, *, sample_rate: float,
                 queue_capacity: int, queue_max_bytes: int, batch_traces: int, chunk_cache_entries: int) -> None:
        self._model = model
        # Labelled as the guard admits; a model error counts as a failure of the pipeline stage it is.
        stage_errors = shared(registry, PipelineMetrics).stage_errors
        self._metrics = metrics = EmbeddingMetrics(registry, list(guard.names), stage_errors)
        self._guard = guard
        self._rate = sample_rate
        self._batch = batch_traces
        self.queue: Handover[Queued] = Handover(queue_capacity, queue_max_bytes)
        self._chunks = VectorCache(chunk_cache_entries, metrics.chunk_cache_evicted)
        self._thread = threading.Thread(target=self._run, name="ragpulse-embeddings", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        """Embed what is queued (within `timeout`), then stop."""
        if self._thread.is_alive() and not self.queue.close(self._thread, timeout):
            log.warning("embedding thread still busy at shutdown: queued traces not embedded",
                        queued=self.queue.qsize())

    def __call__(self, envelope: Envelope) -> Envelope:
        event = envelope.event
        if (isinstance(event, TraceEvent) and event.chunks and event.answer is not None and envelope.fallback_rule is None
                and in_sample(event.trace_id, self._rate, "embeddings")):
            if not self.queue.offer((self._guard.admit_event(event), event), envelope.size):
                self._metrics.embedding_dropped.inc()
        return envelope

    def _run(self) -> None:
        self.queue.serve(self._batch, self._embed)

    def _embed(self, batch: list[Queued]) -> None:
        try:
            self._score(batch)
        except Exception:  # a model error costs this batch, never the thread
            self._metrics.failures.inc()
            log.exception("embedding failed", traces=len(batch))

    def _score(self, batch: Sequence[Queued]) -> None:
        texts = [text for _, event in batch for text in (event.query, event.answer)]
        keys = {c.text: text_key(c.text) for _, event in batch for c in event.chunks or [] if c.text is not None}
        known = {key: vector for key in keys.values() if (vector := self._chunks.get(key)) is not None}
        new_chunks = [text for text, key in keys.items() if key not in known]
        vectors = self._model.encode(texts + new_chunks, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        for text, vector in zip(new_chunks, vectors[len(texts):], strict=True):
            known[keys[text]] = vector
            self._chunks.put(keys[text], vector.copy())  # a row of its own: a view would keep the batch's whole matrix
        metrics = self._metrics
        for index, (labels, event) in enumerate(batch):
            question, answer = vectors[2 * index], vectors[2 * index + 1]
            chunks = [known[keys[c.text]] for c in event.chunks or [] if c.text is not None]
            metrics.embedding_answer_relevancy.labels(*labels).observe(float(question @ answer))
            if not chunks:  # the chunks' text was not reported
                continue
            metrics.embedding_context_relevance.labels(*labels).observe(max(float(question @ c) for c in chunks))
            metrics.embedding_groundedness.labels(*labels).observe(max(float(answer @ c) for c in chunks))
        metrics.embedding_traces.inc(len(batch))
