"""The citations stage in the compiled core (native/src/citations/stage.rs), held to the Python it replaced (kept here
as the definition) on generated answers, chunks and structured citations: the same text left for the lexical scorer,
every sample of the registry after each event, and the same failures."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, EventCitation, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard, SeriesCache
from ragpulse.scorers.citations import (CitationMetrics, CitationScorer, InlineCount, _Series, count_inline,
                                        event_citations, may_cite)

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

FRAGMENTS = ("Paris is the capital", ". ", "[1]", "[2][3]", "[1, 3]", "[1-2]", "[kb-1]", "[KB-2]",
             "(source: kb-2)", "【1】", "［2］", "[^1]", "\n[^1]: a note\n", "来源：1", "退货须在30天内办理。",
             "resource", "`[1]`", "[0]", "[doc1]", "\ud800", " ")
IDS = ("kb-1", "kb-2", "kb-3", None, "KB-2")


class PythonCitations:
    """The stage as it was in Python (scorers/citations.py before the compiled core)."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, max_label_sets: int) -> None:
        metrics = CitationMetrics(registry, list(guard.names))
        self.series_for = SeriesCache(guard, lambda raw: _Series(metrics, guard.admit(raw)[0]), 4 * max_label_sets)
        guard.on_new_label_set(lambda labels: _Series(metrics, labels))

    def __call__(self, envelope: Envelope) -> Envelope:
        event = envelope.event
        if not isinstance(event, TraceEvent) or not event.answer:
            return envelope
        structured = event.citations is not None
        inline = None if structured else self.inline(envelope, event)
        if envelope.fallback_rule is not None:
            return envelope
        series = self.series_for(event)
        if structured:
            citations = event_citations(event)
            if citations is None:
                series.not_cited.inc()
                return envelope
            resolved, dangling, over_cap = citations.resolved, citations.dangling, citations.over_cap
        elif inline is None:
            series.not_cited.inc()
            return envelope
        else:
            series.cited_sentences.inc(inline.cited)
            series.uncited_sentences.inc(inline.uncited)
            resolved, dangling, over_cap = inline.resolved, inline.dangling, inline.over_cap
        series.cited.inc()
        if over_cap:
            series.over_cap.inc()
        if event.chunks is not None:
            series.resolved.inc(resolved)
            series.dangling.inc(dangling)
        return envelope

    @staticmethod
    def inline(envelope: Envelope, event: TraceEvent) -> InlineCount | None:
        if not may_cite(event.answer):
            return None
        inline = count_inline(event.answer, [chunk.id for chunk in event.chunks or ()])
        if inline is not None:
            envelope.answer_text = inline.text
        return inline


_answer = st.none() | st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join)
_chunks = st.none() | st.lists(st.builds(Chunk, id=st.sampled_from(IDS), text=st.just("t")), max_size=4)
_citation = st.builds(EventCitation, chunk_ids=st.lists(st.sampled_from(("kb-1", "kb-9")), max_size=2),
                      ranks=st.lists(st.integers(1, 6), max_size=2))
_citations = st.none() | st.lists(_citation, max_size=3)
_trace = st.builds(lambda n, app, answer, chunks, citations: TraceEvent(
    trace_id=f"t{n}", query="q", answer=answer, app=app, chunks=chunks, citations=citations),
    st.integers(0, 10**6), st.sampled_from((None, "shop", "bank", "care", "lab")), _answer, _chunks, _citations)
_events = st.lists(st.tuples(_trace | st.just(FeedbackEvent(kind="copy", trace_id="t")),
                             st.sampled_from((None, "explicit"))), max_size=20)


def _samples(registry: CollectorRegistry) -> list[Any]:
    return sorted((s.name, sorted(s.labels.items()), s.value) for m in registry.collect() for s in m.samples
                  if not s.name.endswith("_created"))


def _outcome(stage: Any, item: Envelope) -> tuple[str | None, str | None]:
    try:
        stage(item)
    except Exception as error:  # noqa: BLE001 - the Python's failures are part of what the core must do alike
        return type(error).__name__, item.answer_text
    return None, item.answer_text


@settings(max_examples=1500, deadline=None)
@given(_events, st.integers(1, 3))
def test_the_compiled_stage_counts_as_the_python(events: list[tuple[Any, str | None]], max_label_sets: int) -> None:
    registries = CollectorRegistry(), CollectorRegistry()
    guards = [LabelGuard(["app"], 3, max_label_sets, registry) for registry in registries]
    python = PythonCitations(registries[0], guards[0], max_label_sets)
    compiled = CitationScorer(registries[1], guards[1], max_label_sets=max_label_sets)
    for event, rule in events:
        expected = _outcome(python, envelope(event, fallback_rule=rule))
        assert _outcome(compiled, envelope(event, fallback_rule=rule)) == expected
        assert _samples(registries[1]) == _samples(registries[0])
