"""Duplicate suppression in a bounded window."""

from __future__ import annotations

import pytest
from helpers.clocks import Clock
from helpers.events import envelope
from prometheus_client import CollectorRegistry

from ragpulse.collector.dedup import DedupStage, DedupWindow, event_identity
from ragpulse.collector.events import FeedbackEvent, TraceEvent


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def window(registry: CollectorRegistry, clock: Clock, max_entries: int = 10, seconds: float = 60.0) -> DedupWindow:
    return DedupWindow(max_entries, seconds, registry, clock=clock)


def test_duplicates_within_the_window_are_recognised_and_expire_after_it() -> None:
    registry, clock = CollectorRegistry(), Clock(1000.0)
    w = window(registry, clock)
    assert w.seen_before("a") is False
    assert w.seen_before("a") is True
    clock.now += 59.9
    assert w.seen_before("a") is True  # the window counts from first sight
    clock.now += 0.2
    assert w.seen_before("a") is False  # expired: a redelivery this late counts again
    assert registry.get_sample_value("ragpulse_dedup_window_entries") == 1.0


def test_window_is_capped_and_counts_what_it_forgets_early() -> None:
    registry, clock = CollectorRegistry(), Clock(1000.0)
    w = window(registry, clock, max_entries=3)
    for key in "abcd":
        assert w.seen_before(key) is False
    assert len(w) == 3
    assert registry.get_sample_value("ragpulse_dedup_evicted_total") == 1.0
    assert w.seen_before("a") is False  # "a" was forgotten to make room
    assert w.seen_before("d") is True


def test_expired_entries_are_dropped_without_counting_as_evictions() -> None:
    registry, clock = CollectorRegistry(), Clock(1000.0)
    w = window(registry, clock, max_entries=3, seconds=10)
    for key in "abc":
        w.seen_before(key)
    clock.now += 11
    w.seen_before("d")
    assert len(w) == 1
    assert registry.get_sample_value("ragpulse_dedup_evicted_total") == 0.0


def test_feedback_identity() -> None:
    up = FeedbackEvent(kind="thumbs", trace_id="t", value="up", timestamp=5.0)
    assert event_identity(up) == event_identity(FeedbackEvent(kind="thumbs", trace_id="t", value="up", timestamp=5.0))
    assert event_identity(up) != event_identity(FeedbackEvent(kind="thumbs", trace_id="t", value="down", timestamp=5.0))
    assert event_identity(FeedbackEvent(kind="thumbs", trace_id="t", value="up", feedback_id="f1")) == event_identity(
        FeedbackEvent(kind="thumbs", trace_id="other", value="down", feedback_id="f1")
    )
    assert event_identity(TraceEvent(trace_id="t", query="q", answer="a")) != event_identity(up)


def test_stage_drops_and_counts_duplicates_by_type() -> None:
    registry, clock = CollectorRegistry(), Clock(1000.0)
    stage = DedupStage(window(registry, clock), registry)
    first = envelope(TraceEvent(trace_id="t", query="q", answer="a"))
    assert stage(first) is first
    assert stage(envelope(TraceEvent(trace_id="t", query="other", answer="b"))) is None
    feedback = FeedbackEvent(kind="copy", trace_id="t", timestamp=1.0)
    assert stage(envelope(feedback)) is not None
    assert stage(envelope(feedback)) is None
    assert registry.get_sample_value("ragpulse_events_duplicate_total", {"type": "trace"}) == 1.0
    assert registry.get_sample_value("ragpulse_events_duplicate_total", {"type": "feedback"}) == 1.0


def test_decoder_identity_uses_the_timestamp_as_sent() -> None:
    from ragpulse.config import LimitsConfig
    from ragpulse.collector.decode import EventDecoder

    decoder = EventDecoder(LimitsConfig(), "test")
    body = (b'{"type":"feedback","trace_id":"t","kind":"thumbs","value":"up"}\n'
            b'{"type":"feedback","trace_id":"t","kind":"thumbs","value":true}\n'
            b'{"type":"feedback","trace_id":"t","kind":"thumbs","value":"up","timestamp":1764000000000}')
    first, second, third = decoder.decode_body(body).envelopes
    assert first.identity == second.identity  # no timestamp sent, same thumb: one feedback delivered twice
    assert third.identity != first.identity
