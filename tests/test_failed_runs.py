"""Failed runs and context in the event contract: a run that raised is an event with its question, no answer and its
error (counted, never scored or judged); tool results that are no retrieval are context the judge reads."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest
from helpers.events import ndjson, trace
from helpers.sidecar import RagpulseProcess

from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.events import Chunk, RunError, TraceEvent
from ragpulse.config import LimitsConfig
from ragpulse.errors import EventError

Factory = Callable[..., RagpulseProcess]
SHOP = {"app": "shop", "route": "returns", "model": "m1", "release": "r1"}
FAILED = {"type": "ProviderError", "span": "chat gpt-4o-mini", "message": "HTTP 500"}


def failed(trace_id: str) -> dict[str, object]:
    event = trace(trace_id, error=FAILED)
    del event["answer"]
    return event


@pytest.mark.unit
def test_an_event_without_an_answer_is_taken_only_when_its_error_says_why() -> None:
    decoder = EventDecoder(LimitsConfig(), "test")
    event = decoder.decode_message(msgspec.json.encode(failed("f1"))).event
    assert isinstance(event, TraceEvent)
    assert (event.answer, event.error) == (None, RunError(type="ProviderError", span="chat gpt-4o-mini", message="HTTP 500"))
    no_answer = trace("f2")
    del no_answer["answer"]
    with pytest.raises(EventError) as refused:
        decoder.decode_message(msgspec.json.encode(no_answer))
    assert (refused.value.reason.value, refused.value.field) == ("missing_field", "answer")


@pytest.mark.unit
def test_context_is_held_to_the_chunks_limits() -> None:
    decoder = EventDecoder(LimitsConfig(max_chunks=2, max_chunk_chars=5), "test")
    body = msgspec.json.encode(trace("c1", context=[{"text": "0123456789", "source": "calc"}, {"text": "a"}, {"text": "b"}]))
    accepted = decoder.decode_message(body)
    assert isinstance(accepted.event, TraceEvent)
    assert accepted.event.context == [Chunk(text="01234", source="calc"), Chunk(text="a")]
    assert accepted.truncated == ("context", "context[0].text")


def test_a_failed_run_is_counted_never_a_fallback_never_scored_or_offered_to_the_judge(
        ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory()
    chunks = [{"id": "c1", "text": "Returns within 30 days.", "score": 0.9}]
    events = [
        failed("f1"),
        trace("ok", chunks=chunks),
        trace("tool", context=[{"text": "Order 42 shipped on May 3.", "source": "order_status"}]),
    ]
    assert rp.post("/v1/events", ndjson(events), {"Content-Type": "application/x-ndjson"}).json()["accepted"] == 3
    s = rp.wait_processed(traces=3)
    assert s.get_value("ragpulse_traces_total", **SHOP) == 3
    assert s.get_value("ragpulse_traces_failed_total", **SHOP) == 1
    assert s.total("ragpulse_fallbacks_total") == 0  # no answer is no fallback, and no empty retrieval either
    assert s.get_value("ragpulse_retrieval_chunks_count", **SHOP) == 1  # context is no retrieval
    assert s.get_value("ragpulse_local_groundedness_count", **SHOP) == 1  # the retrieval's trace only
    # The judge is offered the answer with chunks and the one with context; never the failed run.
    assert s.total("ragpulse_judge_stratum_offered_total", **SHOP) == 2
    assert rp.terminate() == 0
