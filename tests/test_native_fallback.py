"""The fallback stage's batch preparation by the events' fields in the compiled core (native/src/fallback.rs), held to
the Python that decides one event (FallbackDetector._by_fields, the definition) on generated batches: the same rule on
every decided trace's envelope, the same traces left to the phrase rules, their answers joined as `str.encode` and
b"\\n".join made them, and feedback left alone."""

from __future__ import annotations

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import fallback_fields
from ragpulse.collector.events import Chunk, Envelope, FeedbackEvent, TraceEvent
from ragpulse.scorers.fallback import _UNDECIDED, EMPTY_RETRIEVAL, EXPLICIT, FallbackDetector

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

RULES = [("sorry", "sorry")]


@st.composite
def envelopes(draw: st.DrawFn) -> Envelope:
    if draw(st.integers(0, 5)) == 0:
        item = envelope(FeedbackEvent(kind="thumbs", value="up", trace_id="t"))
    else:
        answer = draw(st.none() | st.text(max_size=12))
        chunks = draw(st.none() | st.lists(st.builds(Chunk, text=st.just("c")), max_size=2))
        item = envelope(TraceEvent(trace_id="t", query="q", answer=answer, chunks=chunks,
                                   fallback=draw(st.none() | st.booleans())))
    item.fallback_rule = "before"
    return item


@settings(max_examples=500, deadline=None)
@given(st.lists(envelopes(), max_size=20), st.booleans(), st.booleans(), st.booleans())
def test_the_fields_decide_as_the_python_decides_each_event(batch: list[Envelope], empty_retrieval: bool, rules: bool,
                                                            join: bool) -> None:
    definition = FallbackDetector(RULES if rules else [], empty_retrieval=empty_retrieval)
    expected = [definition._by_fields(item.event) if isinstance(item.event, TraceEvent) else "before" for item in batch]
    undecided = [item for item, decided in zip(batch, expected, strict=True) if decided is _UNDECIDED]
    pending, joined, starts = fallback_fields(batch, TraceEvent, EXPLICIT, EMPTY_RETRIEVAL,
                                              empty_retrieval=empty_retrieval, rules=rules, join=join)
    assert [item is want for item, want in zip(pending, undecided, strict=True)] == [True] * len(undecided)
    assert len(pending) == len(undecided)
    decided = [(item.fallback_rule, want) for item, want in zip(batch, expected, strict=True) if want is not _UNDECIDED]
    assert [got for got, _ in decided] == [want for _, want in decided]
    if join and undecided:
        answers = [item.event.answer.encode() for item in undecided]  # type: ignore[union-attr]
        assert joined == b"\n".join(answers)
        assert starts == [sum(len(answer) + 1 for answer in answers[:index]) for index in range(len(answers))]
        assert all(item.fallback_rule is None for item in undecided)
    else:
        assert (joined, starts) == (None, [])
        assert all(item.fallback_rule == "before" for item in undecided)


def test_an_answer_that_cannot_be_encoded_raises_as_encode_does() -> None:
    item = envelope(TraceEvent(trace_id="t", query="q", answer="\ud800"))
    with pytest.raises(UnicodeEncodeError):
        fallback_fields([item], TraceEvent, EXPLICIT, EMPTY_RETRIEVAL, empty_retrieval=True, rules=True, join=True)
