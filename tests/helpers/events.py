"""Events as the tests build them: a trace event, NDJSON bodies, the pipeline's Envelope, a feedback join."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from helpers.clocks import Clock

if TYPE_CHECKING:
    from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent


def trace(trace_id: str, **fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "trace", "trace_id": trace_id, "query": "How do I return shoes?",
                             "answer": "Return them within 30 days.", "app": "shop", "route": "returns",
                             "model": "m1", "release": "r1"}
    event.update(fields)
    return event


def ndjson(events: list[dict[str, Any]]) -> bytes:
    return b"\n".join(json.dumps(e, ensure_ascii=False).encode() for e in events)


def envelope(event: TraceEvent | FeedbackEvent, identity: int | None = None, *, source: str = "test",
             received_at: float = 0.0, **fields: Any) -> Envelope:
    """An accepted event as the pipeline carries it: its identity the dedup key of `event` unless one is
    given; `fields` are the Envelope's others (size, fallback_rule, local_scores, truncated)."""
    from ragpulse.collector.dedup import event_identity
    from ragpulse.collector.events import Envelope

    return Envelope(event, source, received_at, event_identity(event) if identity is None else identity, **fields)


def feedback_join(registry: Any, clock: Callable[[], float] | None = None, **options: Any) -> Any:
    """A feedback join on `registry` with the default options but those given (tests of its users); its
    windows move with `clock`, and without one time stands still (nothing expires unless a test says so)."""
    from prometheus_client import CollectorRegistry

    from ragpulse.config import SatisfactionConfig
    from ragpulse.collector.telemetry.labels import LabelGuard
    from ragpulse.feedback.join import FeedbackJoin
    from ragpulse.feedback.satisfaction import SignalCounter

    labels = ("app", "route", "model", "release")
    guard = LabelGuard(labels, 50, 2000, CollectorRegistry())  # its overflow counter apart: a test may have its own guard
    counter = SignalCounter(registry, guard, max_cached=8000)
    return FeedbackJoin(SatisfactionConfig(**options), registry, counter, guard, clock=clock or Clock())
