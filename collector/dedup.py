"""Duplicate suppression: remember recent event identities in a bounded window."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.shared import shared


def event_identity(event: TraceEvent | FeedbackEvent) -> int:
    """Traces are identified by trace_id; feedback by its own id, else by what it says.

    Computed by the decoder before defaults are filled in: without a feedback_id,
    the same kind and value on the same trace/session with the same timestamp as
    sent (or both without one) is one piece of feedback delivered twice.

    The identity is a 64-bit digest (Python's keyed SipHash of the string), so the window
    holds a fixed 8 bytes a key whatever the producer's ids are. Keys are per process, which
    is all the window needs: restored identities are recomputed from the messages. Two
    distinct events collide with odds of about 3e-10 in a window of 100,000.
    """
    if isinstance(event, TraceEvent):
        return hash("t\x00" + event.trace_id)
    if event.feedback_id:
        return hash("f\x00" + event.feedback_id)
    return hash(f"f\x00{event.trace_id}\x00{event.session_id}\x00{event.kind}\x00{event.value!r}\x00{event.timestamp!r}")


class DedupMetrics:
    """The dedup window's telemetry: duplicates dropped by type, identities held, identities forgotten early.
    One set per registry (`shared`): the window and the stage count into it."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.duplicates = Counter("ragpulse_events_duplicate_total",
                                  "Events dropped as duplicates of one seen in the dedup window.", ["type"], registry=registry)
        for kind in ("trace", "feedback"):
            self.duplicates.labels(type=kind)
        self.entries = Gauge("ragpulse_dedup_window_entries", "Identities held in the dedup window.", registry=registry)
        self.evicted = Counter("ragpulse_dedup_evicted_total",
                               "Identities forgotten before their window ended because the window was full.", registry=registry)


class DedupWindow:
    """Identities seen in the last `window_seconds`, at most `max_entries` of them.

    Entries expire in insertion order (the window is the same for all), so the
    oldest is always first in the dict. When the window is full the oldest entry
    is forgotten early and counted: a duplicate of it would then be counted twice.
    """

    def __init__(
        self,
        max_entries: int,
        window_seconds: float,
        registry: CollectorRegistry,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_entries = max_entries
        self._window = window_seconds
        self._expiry: OrderedDict[int, float] = OrderedDict()
        self._clock = clock
        metrics = shared(registry, DedupMetrics)
        self._evicted = metrics.evicted
        metrics.entries.set_function(lambda: len(self._expiry))

    def __len__(self) -> int:
        return len(self._expiry)

    def remember(self, keys: list[int]) -> None:
        """Add identities known to be processed already (restored after a restart), counting nothing."""
        for key in keys:
            self.seen_before(key)

    def seen_before(self, key: int) -> bool:
        """True if `key` is in the window; otherwise remembers it and returns False."""
        now = self._clock()
        expiry = self._expiry
        if key in expiry:
            if expiry[key] > now:
                return True
            del expiry[key]
        while expiry:
            oldest = next(iter(expiry))  # O(1) on an OrderedDict, unlike a dict with holes
            if expiry[oldest] > now:
                break
            del expiry[oldest]
        if len(expiry) >= self._max_entries:
            expiry.popitem(last=False)
            self._evicted.inc()
        expiry[key] = now + self._window
        return False


class DedupStage:
    """Pipeline stage: drops an event whose identity is still in the window."""

    def __init__(self, window: DedupWindow, registry: CollectorRegistry) -> None:
        duplicates = shared(registry, DedupMetrics).duplicates
        self._window = window
        self._trace_duplicates = duplicates.labels(type="trace")
        self._feedback_duplicates = duplicates.labels(type="feedback")

    def __call__(self, envelope: Envelope) -> Envelope | None:
        if not self._window.seen_before(envelope.identity):
            return envelope
        if isinstance(envelope.event, TraceEvent):
            self._trace_duplicates.inc()
        else:
            self._feedback_duplicates.inc()
        return None
