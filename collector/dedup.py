"""Duplicate suppression: remember recent event identities in a bounded window."""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse._native import DedupCore
from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily
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
        # A fast counter: once the window is full, every new identity evicts one (prometheus_client's Python call and
        # lock for each were about 0.7 us an event then: docs/benchmarks-log.md).
        self.evicted = CounterFamily("ragpulse_dedup_evicted_total",
                                     "Identities forgotten before their window ended because the window was full.", [],
                                     registry)
        self.evicted_child = self.evicted.labels()  # shown at zero from the start, as the Counter was


class DedupWindow:
    """Identities seen in the last `window_seconds`, at most `max_entries` of them.

    Entries expire in insertion order (the window is the same for all), so the
    oldest is always first. When the window is full the oldest entry is forgotten
    early and counted: a duplicate of it would then be counted twice. Its memory is
    fixed by `max_entries` (about 61 bytes an entry, allocated at the start).
    """

    def __init__(
        self,
        max_entries: int,
        window_seconds: float,
        registry: CollectorRegistry,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        metrics = shared(registry, DedupMetrics)
        # The window and its test in the compiled core (native/src/dedup.rs); the stage's counts its duplicates too.
        self._core = DedupCore(max_entries, window_seconds, clock, metrics.evicted_child, TraceEvent, *_duplicates(metrics))
        metrics.entries.set_function(self._core.__len__)

    def __len__(self) -> int:
        return len(self._core)

    def items(self) -> list[tuple[int, float]]:
        """The identities held and their expiries, oldest first."""
        return self._core.items()

    def remember(self, keys: list[int]) -> None:
        """Add identities known to be processed already (restored after a restart), counting nothing."""
        for key in keys:
            self.seen_before(key)

    def seen_before(self, key: int) -> bool:
        """True if `key` is in the window; otherwise remembers it and returns False (what expired leaves first; when
        the window is full, the oldest leaves early, counted)."""
        return self._core.seen_before(key)

    def stage(self, registry: CollectorRegistry) -> DedupCore:
        """The window's test as a pipeline stage, its duplicates counted on `registry`."""
        return self._core.sharing(*_duplicates(shared(registry, DedupMetrics)))


def _duplicates(metrics: DedupMetrics) -> tuple[Counter, Counter]:
    return metrics.duplicates.labels(type="trace"), metrics.duplicates.labels(type="feedback")


class DedupStage:
    """Pipeline stage: drops an event whose identity is still in the window, counted by its type."""

    def __init__(self, window: DedupWindow, registry: CollectorRegistry) -> None:
        self._core = window.stage(registry)
        self.direct = self._core.process  # what the pipeline's loop calls (collector/pipeline.py)

    def __call__(self, envelope: Envelope) -> Envelope | None:
        return self._core.process(envelope)
