"""The lexical scorer's stage in the compiled core (native/src/lexical/stage.rs), held to the Python it replaced (kept
here as the definition) on generated traffic: the same scores on every envelope, the same caches (entries in their
order, bytes, evictions) and every sample of the registry."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, LexicalScores, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard, SeriesCache
from ragpulse.scorers.lexical import _ANALYSER, MAX_CHARS, LexicalMetrics, LexicalScorer, _held, units
from ragpulse.scorers.text_cache import TextCache

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

LONG = "The warranty lasts 2 years from delivery. " * 110  # past MAX_CHARS: scored on its start
TEXTS = ("Returns are accepted within 30 days.", "Shipping takes 3 to 5 days.", "退货须在30天内办理。", LONG, "")
QUESTIONS = ("How long is the warranty?", "Can I return shoes?", "退货期限是多久？", LONG)
ANSWERS = ("You can return items within 30 days.", "It lasts 2 years.", "30天内可以退货。", LONG, "")


class PythonLexical:
    """The stage as it was in Python (scorers/lexical.py before the compiled core)."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, entries: int, max_bytes: int,
                 max_label_sets: int) -> None:
        self.metrics = metrics = LexicalMetrics(registry, list(guard.names))
        self.guard = guard
        self.chunks = TextCache(units, _held, max_entries=entries, max_bytes=max_bytes,
                                evicted=metrics.cache_evicted.labels("chunks"))
        self.questions = TextCache(units, _held, max_entries=entries, max_bytes=max_bytes,
                                   evicted=metrics.cache_evicted.labels("questions"), on_repeat=True)
        metrics.show(self.chunks, self.questions)
        self.children_for = SeriesCache(guard, self.new_children, 4 * max_label_sets)

    def score(self, event: TraceEvent, answer_text: str | None = None) -> LexicalScores | None:
        if not event.chunks or event.answer is None:
            return None
        text = (answer_text if answer_text is not None else event.answer)[:MAX_CHARS]
        chunks = self.chunks
        contexts = [chunks.get(chunk.text[:MAX_CHARS]) for chunk in event.chunks if chunk.text is not None]
        if not contexts:
            return None
        groundedness, answer_relevancy, context_relevance, mismatch = _ANALYSER.score(
            text, self.questions.get(event.query[:MAX_CHARS]), contexts)
        return LexicalScores(groundedness=groundedness, answer_relevancy=answer_relevancy,
                             context_relevance=context_relevance, number_mismatch=mismatch)

    def __call__(self, envelope: Envelope) -> Envelope:
        event = envelope.event
        if isinstance(event, TraceEvent):
            scores = envelope.local_scores = self.score(event, envelope.answer_text)
            if scores is not None and envelope.fallback_rule is None:
                groundedness, relevancy, context, mismatch = self.children_for(event)
                if scores.groundedness is not None:
                    groundedness.observe(scores.groundedness)
                if scores.answer_relevancy is not None:
                    relevancy.observe(scores.answer_relevancy)
                if scores.context_relevance is not None:
                    context.observe(scores.context_relevance)
                if scores.number_mismatch:
                    mismatch.inc()
        return envelope

    def new_children(self, raw: tuple[str | None, ...]) -> tuple[Any, ...]:
        labels, metrics = self.guard.admit(raw)[0], self.metrics
        return (metrics.local_groundedness.labels(*labels), metrics.local_answer_relevancy.labels(*labels),
                metrics.local_context_relevance.labels(*labels), metrics.local_number_mismatch.labels(*labels))


_chunks = st.none() | st.lists(st.builds(Chunk, text=st.none() | st.sampled_from(TEXTS)), max_size=4)
_traffic = st.lists(st.tuples(
    st.sampled_from((None, "shop", "bank", "care", "lab", "ops")), st.sampled_from(QUESTIONS),
    st.none() | st.sampled_from(ANSWERS), _chunks, st.none() | st.sampled_from(ANSWERS),
    st.sampled_from((None, "explicit"))), max_size=25)


def _samples(registry: CollectorRegistry) -> list[Any]:
    return sorted((s.name, sorted(s.labels.items()), s.value) for m in registry.collect() for s in m.samples
                  if not s.name.endswith("_created"))


@settings(max_examples=1500, deadline=None)
@given(_traffic, st.integers(1, 6), st.integers(2_000, 60_000), st.integers(1, 3))
def test_the_compiled_stage_scores_caches_and_counts_as_the_python(traffic: list[tuple[Any, ...]], entries: int,
                                                                    max_bytes: int, max_label_sets: int) -> None:
    registries = CollectorRegistry(), CollectorRegistry()
    python = PythonLexical(registries[0], LabelGuard(["app"], 4, max_label_sets, registries[0]), entries, max_bytes,
                           max_label_sets)
    compiled = LexicalScorer(registries[1], LabelGuard(["app"], 4, max_label_sets, registries[1]), entries, max_bytes,
                             max_label_sets=max_label_sets)
    for n, (app, query, answer, chunks, answer_text, fallback) in enumerate(traffic):
        event = TraceEvent(trace_id=f"t{n}", query=query, answer=answer, app=app, chunks=chunks)
        expected = python(envelope(event, answer_text=answer_text, fallback_rule=fallback))
        got = compiled(envelope(event, answer_text=answer_text, fallback_rule=fallback))
        assert got.local_scores == expected.local_scores
        assert compiled.score(event, answer_text) == python.score(event, answer_text)
    for mine, theirs in ((compiled._chunks, python.chunks), (compiled._questions, python.questions)):  # noqa: SLF001
        assert (list(mine.items), mine.bytes) == (list(theirs.items), theirs.bytes)
    assert _samples(registries[1]) == _samples(registries[0])
