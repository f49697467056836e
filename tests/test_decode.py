"""Validation of the v1 event contract: good events, every rejection reason, limits."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from helpers.events import ndjson, trace

from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.events import FeedbackEvent, TraceEvent
from ragpulse.config import LimitsConfig


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def decoder(**limits: object) -> EventDecoder:
    return EventDecoder(LimitsConfig(**limits), "test")  # type: ignore[arg-type]


def errors(body: bytes, **kwargs: object) -> list[tuple[int, str, str]]:
    decoded = decoder().decode_body(body, **kwargs)  # type: ignore[arg-type]
    return [(r.index, r.error.reason.value, r.error.field) for r in decoded.rejections]


def test_full_trace_is_decoded_and_normalised() -> None:
    event = trace(
        "t1",
        timestamp="2026-11-29T10:00:00+01:00",
        session_id="s1",
        user_id="u1",
        intent="returns-intent",
        route=None,
        chunks=[{"id": "c1", "text": "Returns within 30 days.", "score": 0.9, "source": "kb",
                 "updated_at": 1_764_000_000_000},
                {"id": "c2", "text": "Other.", "score": 0.4, "rank": 7}],
        fallback=False,
        latency_ms=812.5,
        usage={"prompt_tokens": 300, "completion_tokens": 40},
        attributes={"tenant": "acme", "nested": {"a": [1, 2]}},
    )
    del event["route"]
    decoded = decoder().decode_body(json.dumps(event).encode())
    assert decoded.rejections == []
    [envelope] = decoded.envelopes
    ev = envelope.event
    assert isinstance(ev, TraceEvent)
    assert ev.timestamp == datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc).timestamp()
    assert ev.route == "returns-intent"  # intent is a synonym of route
    assert [c.rank for c in ev.chunks or []] == [0, 7]  # rank defaults to list position
    assert ev.chunks is not None and ev.chunks[0].updated_at == 1_764_000_000.0
    assert ev.usage is not None and ev.usage.prompt_tokens == 300
    assert ev.attributes == {"tenant": "acme", "nested": {"a": [1, 2]}}
    assert envelope.truncated == ()


def test_missing_timestamp_defaults_to_receive_time() -> None:
    [envelope] = decoder().decode_body(json.dumps(trace("t1")).encode()).envelopes
    assert envelope.event.timestamp == envelope.received_at


def test_body_forms_object_array_ndjson_and_mixed_types() -> None:
    events = [trace("a"), {"type": "feedback", "trace_id": "a", "kind": "thumbs", "value": "down"}, trace("b")]
    for body, kwargs in (
        (json.dumps(events).encode(), {}),
        (ndjson(events), {"ndjson": True}),
        (ndjson(events), {}),  # several top-level objects are NDJSON even without the content type
    ):
        decoded = decoder().decode_body(body, **kwargs)  # type: ignore[arg-type]
        assert [type(e.event) for e in decoded.envelopes] == [TraceEvent, FeedbackEvent, TraceEvent]
        assert decoded.rejections == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{not json", [(0, "malformed_json", "")]),
        (b"", [(0, "malformed_json", "")]),
        (b"[1, \"x\"]", [(0, "not_an_object", ""), (1, "not_an_object", "")]),
        (json.dumps({**trace("a"), "type": "span"}).encode(), [(0, "unknown_type", "type")]),
        (json.dumps({k: v for k, v in trace("a").items() if k != "type"}).encode(), [(0, "missing_field", "type")]),
        (json.dumps({k: v for k, v in trace("a").items() if k != "query"}).encode(), [(0, "missing_field", "query")]),
        (json.dumps(trace("")).encode(), [(0, "invalid_value", "trace_id")]),
        (json.dumps(trace("a", chunks=[{"text": 5}])).encode(), [(0, "wrong_type", "chunks[0].text")]),
        (json.dumps(trace("a", chunks=[{"text": "x", "rank": -1}])).encode(), [(0, "invalid_value", "chunks[0].rank")]),
        (json.dumps(trace("a", usage={"prompt_tokens": "many"})).encode(), [(0, "wrong_type", "usage.prompt_tokens")]),
        (json.dumps(trace("a", latency_ms=-3)).encode(), [(0, "invalid_value", "latency_ms")]),
        (json.dumps(trace("a", timestamp="2026-11-29T10:00:00")).encode(), [(0, "invalid_value", "timestamp")]),
        (json.dumps(trace("a", timestamp=1_764_000_000)).encode(), [(0, "invalid_value", "timestamp")]),
        (json.dumps(trace("a", timestamp=1_764_000_000_000_000)).encode(), [(0, "invalid_value", "timestamp")]),
        (json.dumps(trace("a", chunks=[{"text": "x", "updated_at": 17}])).encode(), [(0, "invalid_value", "chunks[0].updated_at")]),
        (json.dumps(trace("a", fallback="yes")).encode(), [(0, "wrong_type", "fallback")]),
    ],
)
def test_rejections_name_reason_and_field(body: bytes, expected: list[tuple[int, str, str]]) -> None:
    assert errors(body) == expected


@pytest.mark.parametrize(
    ("feedback", "field", "reason"),
    [
        ({"kind": "thumbs", "value": "up"}, "trace_id", "missing_field"),  # neither trace_id nor session_id
        ({"trace_id": "a", "kind": "like"}, "kind", "invalid_value"),
        ({"trace_id": "a", "kind": "thumbs", "value": "meh"}, "value", "invalid_value"),
        ({"trace_id": "a", "kind": "rating", "value": 6}, "value", "invalid_value"),
        ({"trace_id": "a", "kind": "rating", "value": True}, "value", "invalid_value"),
        ({"trace_id": "a", "kind": "review", "value": "good"}, "value", "invalid_value"),
        ({"trace_id": "a", "kind": "review"}, "scores.groundedness", "missing_field"),
        ({"trace_id": "a", "kind": "review", "scores": {"answer_relevancy": 4}}, "scores.groundedness", "missing_field"),
        ({"trace_id": "a", "kind": "review", "scores": {"groundedness": 6}}, "scores.groundedness", "invalid_value"),
        ({"trace_id": "a", "kind": "review", "scores": {"groundedness": 3, "claims": [{"claim": "x", "verdict": "maybe"}]}},
         "scores.claims[0].verdict", "invalid_value"),
        ({"trace_id": "a", "kind": "thumbs", "value": "up", "scores": {"groundedness": 3}}, "scores", "invalid_value"),
        ({"trace_id": "a", "kind": "citation_click"}, "value", "invalid_value"),
        ({"trace_id": "a", "kind": "copy", "value": [1]}, "value", "wrong_type"),
    ],
)
def test_feedback_rejections(feedback: dict[str, object], field: str, reason: str) -> None:
    assert errors(json.dumps(feedback).encode(), event_type="feedback") == [(0, reason, field)]


def test_feedback_values_are_normalised() -> None:
    body = ndjson([
        {"type": "feedback", "trace_id": "a", "kind": "thumbs", "value": True},
        {"type": "feedback", "trace_id": "a", "kind": "thumbs", "value": -1},
        {"type": "feedback", "session_id": "s", "kind": "rating", "value": 4},
        {"type": "feedback", "session_id": "s", "kind": "escalation"},
        {"type": "feedback", "trace_id": "a", "kind": "citation_click", "value": "chunk-7"},
    ])
    decoded = decoder().decode_body(body)
    assert [e.event.value for e in decoded.envelopes] == ["up", "down", 4, None, "chunk-7"]


def test_feedback_endpoint_does_not_need_type_but_rejects_a_trace() -> None:
    assert errors(json.dumps({"trace_id": "a", "kind": "copy"}).encode(), event_type="feedback") == []
    assert errors(json.dumps(trace("a")).encode(), event_type="feedback") == [(0, "unknown_type", "type")]


def test_invalid_events_do_not_affect_valid_neighbours() -> None:
    body = ndjson([trace("a"), {"type": "trace"}, trace("b")]) + b"\n{broken\n" + ndjson([trace("c")])
    decoded = decoder().decode_body(body)
    assert [e.event.trace_id for e in decoded.envelopes] == ["a", "b", "c"]  # type: ignore[union-attr]
    assert [(r.index, r.error.reason.value) for r in decoded.rejections] == [(1, "missing_field"), (3, "malformed_json")]


def test_oversize_fields_are_truncated_and_flagged() -> None:
    event = trace("a", query="q" * 20, answer="a" * 30, chunks=[{"text": "c" * 50}] * 4, attributes={str(i): i for i in range(5)})
    decoded = decoder(max_query_chars=10, max_answer_chars=25, max_chunk_chars=40, max_chunks=3, max_attributes=2).decode_body(
        json.dumps(event).encode()
    )
    [envelope] = decoded.envelopes
    ev = envelope.event
    assert isinstance(ev, TraceEvent)
    assert (len(ev.query), len(ev.answer), len(ev.chunks or []), len(ev.attributes)) == (10, 25, 3, 2)
    assert all(len(c.text) == 40 for c in ev.chunks or [])
    assert envelope.truncated == ("query", "answer", "attributes", "chunks", "chunks[0].text", "chunks[1].text", "chunks[2].text")
    assert decoded.truncations == [(0, envelope.truncated)]


def test_oversize_fields_are_rejected_when_configured() -> None:
    decoded = decoder(max_answer_chars=5, on_oversize="reject").decode_body(json.dumps(trace("a", answer="x" * 6)).encode())
    assert decoded.envelopes == []
    [rejection] = decoded.rejections
    assert (rejection.error.reason.value, rejection.error.field) == ("too_large", "answer")
    assert "6 characters, over the limit of 5" in rejection.error.message


def test_event_over_max_bytes_is_rejected_in_every_body_form() -> None:
    small, big = trace("a"), trace("b", answer="x" * 2000)
    d = decoder(max_event_bytes=1000)
    for body in (json.dumps(big).encode(), json.dumps([small, big]).encode(), ndjson([small, big])):
        decoded = d.decode_body(body)
        assert [e.event.trace_id for e in decoded.envelopes] == (["a"] if b'"a"' in body else [])  # type: ignore[union-attr]
        assert [r.error.reason.value for r in decoded.rejections] == ["too_large"]


def test_every_event_is_sized_by_its_own_bytes_in_every_body_form() -> None:
    """What every byte budget counts an event at: one big event among small ones is not an even share of its body."""
    events = [trace("big", answer="x" * 50_000), *(trace(f"t{i}") for i in range(9))]
    items = [json.dumps(event).encode() for event in events]
    for body in (b"[" + b", ".join(items) + b"]", b"\n".join(items), items[0]):
        decoded = decoder().decode_body(body)
        assert [e.size for e in decoded.envelopes] == [len(item) for item in items][:len(decoded.envelopes)]
        assert len(decoded.envelopes) == (1 if body == items[0] else 10)


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    assert errors(json.dumps(trace("a", future_field={"x": 1})).encode()) == []


def test_decode_message_raises_event_error() -> None:
    from ragpulse.errors import EventError

    with pytest.raises(EventError) as info:
        decoder().decode_message(b'{"type":"trace","trace_id":"a","query":1,"answer":"x"}')
    assert (info.value.reason.value, info.value.field) == ("wrong_type", "query")


def test_a_review_carries_its_rubric_scores() -> None:
    decoder = EventDecoder(LimitsConfig(), "http")
    decoded = decoder.decode_body(ndjson([
        {"trace_id": "a", "kind": "review", "value": 2},  # value alone: the groundedness score
        {"trace_id": "b", "kind": "review", "scores": {"groundedness": 4, "answer_relevancy": 5,
                                                       "claims": [{"claim": "30 days", "verdict": "supported"}]}},
        {"trace_id": "c", "kind": "review", "value": 4.6, "scores": {"answer_relevancy": 2}},
    ]), event_type="feedback")
    assert not decoded.rejections
    reviews = [e.event for e in decoded.envelopes]
    assert [(r.value, r.scores.groundedness, r.scores.answer_relevancy) for r in reviews] == [
        (2, 2, None), (4, 4, 5), (4.6, None, 2)]
    assert [c.verdict for c in reviews[1].scores.claims] == ["supported"]
