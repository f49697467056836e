"""Spans grouped by trace id and assembled into one trace event when the trace is complete.

A trace is complete `grace_seconds` after its root span arrived (children of a
root often arrive in a later export batch), unless what arrived is incomplete: a
span whose parent has not come; a call out (not a model or retriever call) whose
other side (another service, exporting on its own schedule) is still to come: a
CLIENT or PRODUCER span with no span under it yet, or another span naming its
peer (`peer.service`, `url.full`, `http.url`: sources/otlp/keys.py) with no span
of another service under it yet; or no retrieval yet in a trace that another
service's SERVER or CONSUMER span (not a model server's) reached, or whose root
service's retrievals have come late before. Such a trace waits up to
`max_wait_seconds` after its root. A trace whose root never comes is
assembled from what arrived after `ttl_seconds`. In-flight traces are capped in
count and in bytes (the spans' protobuf size); when full, the oldest is
assembled early. Spans arriving for a trace already assembled are dropped and
counted (`late_span`, and by kind), and each service that sends them is told once
per setting which setting assembled their trace and how late they came. A trace
whose spans the mapper cannot read costs that trace (`mapping_failed`, logged),
never the assembler.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice

import structlog
from prometheus_client import Counter

from ragpulse.collector.events import TraceEvent
from ragpulse.sources.otlp.keys import PEER_KEYS
from ragpulse.sources.otlp.mapping import NotMapped, TraceMapper, is_retrieval
from ragpulse.sources.otlp.roles import is_llm
from ragpulse.sources.otlp.spans import Span

log = structlog.get_logger("ragpulse.otlp")

_CALLS_OUT = frozenset({3, 4})  # SpanKind CLIENT, PRODUCER
_CALLED = frozenset({2, 5})  # SpanKind SERVER, CONSUMER: their peer attributes name their caller, or themselves
MAX_WARNED = 1_000  # services warned or learnt about, each set at most; service names come from clients
Assembled = tuple[TraceEvent, int]  # a trace event and the bytes of the spans it was made of


@dataclass(slots=True)
class _Pending:
    first_seen: float
    spans: dict[str, Span] = field(default_factory=dict)
    root_seen: float | None = None
    root_service: str | None = None
    size: int = 0
    retrieval: bool = False  # a retrieval span among the first `checked` spans (looked at only while it matters)
    checked: int = 0


@dataclass(slots=True, frozen=True)
class _Done:
    """What a late span's warning says of its trace, and whether it teaches that retrievals come late."""
    since: float  # when its root came (else its first span): how late a span is, is measured from this
    setting: str | None  # the setting that assembled it then; None: shutdown
    root_service: str | None
    retrieval: bool  # whether it was assembled with a retrieval


class TraceAssembler:
    def __init__(
        self,
        mapper: TraceMapper,
        *,
        grace_seconds: float,
        max_wait_seconds: float,
        ttl_seconds: float,
        max_traces: int,
        max_bytes: int,
        max_spans_per_trace: int,
        outcomes: Counter,
        dropped_spans: Counter,
        late_spans: Counter,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._mapper = mapper
        self._grace = grace_seconds
        self._max_wait = max_wait_seconds
        self._late = late_spans
        self._late_warned: set[tuple[str, str | None]] = set()  # (service, setting) told once (at most MAX_WARNED)
        # Root services whose retrievals came after their trace was assembled (at most MAX_WARNED): their traces
        # wait for one. Learnt, not assumed: a chat without retrieval would otherwise wait max_wait every time.
        self._late_retrievals: set[str] = set()
        self._ttl = ttl_seconds
        self._max_traces = max_traces
        self._max_bytes = max_bytes
        self._bytes = 0
        self._max_spans = max_spans_per_trace
        self._outcomes = outcomes
        # The outcome counter's children by label, asked for once each: every trace counts one (labels() takes a lock
        # and builds its key each time, a microsecond a trace); the outcomes are the few this module and NotMapped name.
        self._outcome_counts: dict[str, Counter] = {}
        self._dropped_spans = dropped_spans
        self._clock = clock
        self._pending: OrderedDict[str, _Pending] = OrderedDict()  # oldest first
        self._done: OrderedDict[str, _Done] = OrderedDict()  # recently assembled traces, bounded
        self._warned: set[tuple[str, str]] = set()  # (service, reason) told once (at most MAX_WARNED)

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    @property
    def in_flight_bytes(self) -> int:
        return self._bytes

    def add(self, spans: list[Span]) -> list[Assembled]:
        """Take spans in; returns traces assembled early because the in-flight cap was reached."""
        now = self._clock()
        early: list[Assembled] = []
        # What the loop reads of self, read once: it runs on every span (the caps and the tables are never replaced).
        done, in_flight, max_bytes, max_spans = self._done, self._pending, self._max_bytes, self._max_spans
        for span in spans:
            trace_id, size = span.trace_id, span.size
            assembled = done.get(trace_id)
            if assembled is not None:
                self._count_late(span, assembled, now)
                continue
            pending = in_flight.get(trace_id)
            if pending is None and len(in_flight) >= self._max_traces:
                early.extend(self._assemble(next(iter(in_flight)), "capacity", "max_traces_in_flight"))
            if self._bytes + size > max_bytes:
                while self._bytes + size > max_bytes:
                    oldest = next((t for t in in_flight if t != trace_id), None)
                    if oldest is None:
                        break
                    early.extend(self._assemble(oldest, "capacity", "max_bytes_in_flight"))
                if self._bytes + size > max_bytes:  # its own trace alone is over the budget
                    self._dropped_spans.labels(reason="over_bytes").inc()
                    continue
            if pending is None:
                pending = in_flight[trace_id] = _Pending(first_seen=now)
            held = pending.spans
            if span.span_id in held:
                self._dropped_spans.labels(reason="duplicate").inc()
                continue
            if len(held) >= max_spans:
                self._dropped_spans.labels(reason="too_many_spans").inc()
                continue
            held[span.span_id] = span
            pending.size += size
            self._bytes += size
            if span.parent_span_id is None and pending.root_seen is None:
                pending.root_seen = now
                pending.root_service = _service(span)
        return early

    def due(self) -> list[Assembled]:
        """Traces whose grace period or TTL has passed, assembled."""
        now = self._clock()
        # No trace closes before its first span is this old (its root came after it); the traces in flight are in
        # the order their first span came, so the first younger than that ends the look: a tick looks at the traces
        # due and one more, not at every trace waiting its grace (ten ticks a second, thousands waiting).
        soonest = min(self._grace, self._ttl)
        ready: list[tuple[str, str]] = []
        for trace_id, pending in self._pending.items():
            if now - pending.first_seen < soonest:
                break
            setting = self._closing(pending, now)
            if setting is not None:
                ready.append((trace_id, setting))
        events: list[Assembled] = []
        for trace_id, setting in ready:
            outcome = "complete" if self._pending[trace_id].root_seen is not None else "ttl_expired"
            events.extend(self._assemble(trace_id, outcome, setting))
        return events

    def flush(self) -> list[Assembled]:
        """Everything in flight, assembled now (shutdown)."""
        events: list[Assembled] = []
        for trace_id in list(self._pending):
            events.extend(self._assemble(trace_id, "shutdown", None))
        return events

    def _closing(self, pending: _Pending, now: float) -> str | None:
        """The setting whose time is up for this trace (it is assembled now), or None while it waits."""
        if pending.root_seen is not None and now - pending.root_seen >= self._grace:
            if not self._incomplete(pending):
                return "grace_seconds"
            if now - pending.root_seen >= self._max_wait:
                return "max_wait_seconds"
        return "trace_ttl_seconds" if now - pending.first_seen >= self._ttl else None

    def _incomplete(self, pending: _Pending) -> bool:
        """Whether spans of this trace are evidently still to come: a span whose parent has not arrived; a call
        out to another service (not a model or retriever call, whose provider exports nothing) whose other side
        has not come; or no retrieval yet where another service's SERVER or CONSUMER span has come, not a model
        server's (the trace crossed services: its retrieval may be further on), or where this root service's retrievals have come late
        before. Looked at only past the grace, and cheaply: a kind test and at most three lookups a span."""
        if pending.root_service in self._late_retrievals and not _has_retrieval(pending):
            return True
        spans = pending.spans
        parents: set[str | None] | None = None  # made for the first call out only: most traces have none
        for span in spans.values():
            if span.parent_span_id is not None and span.parent_span_id not in spans:
                return True
            if span.kind in _CALLED:
                if _service(span) != pending.root_service and not is_llm(span) and not _has_retrieval(pending):
                    return True
            elif span.kind in _CALLS_OUT:
                if parents is None:
                    parents = {s.parent_span_id for s in spans.values()}
                if span.span_id not in parents and _calls_a_service(span):
                    return True
            elif not span.attributes.keys().isdisjoint(PEER_KEYS) and _calls_a_service(span) and not _answered(span, spans):
                return True
        return False

    def _count_late(self, span: Span, assembled: _Done, now: float) -> None:
        self._dropped_spans.labels(reason="late_span").inc()
        retrieval = is_retrieval(span)
        self._late.labels(kind="retriever" if retrieval else "llm" if is_llm(span) else "other").inc()
        late = now - assembled.since
        service = _service(span)
        if (service, assembled.setting) not in self._late_warned and len(self._late_warned) < MAX_WARNED:
            self._late_warned.add((service, assembled.setting))
            log.warning("spans came after their trace was assembled and were dropped", service=service, span=span.name,
                        trace_service=assembled.root_service, late_seconds=round(late, 1),
                        fix=self._fix(assembled.setting, late))
        # A retrieval for a trace assembled at the grace without one: this root service's retrievals come late.
        root = assembled.root_service
        if (retrieval and assembled.setting == "grace_seconds" and not assembled.retrieval and root is not None
                and root not in self._late_retrievals and len(self._late_retrievals) < MAX_WARNED):
            self._late_retrievals.add(root)
            log.warning("retrievals came after their trace was assembled: this service's traces without a retrieval "
                        f"now wait for one, up to otlp.max_wait_seconds ({self._max_wait:g})", service=root)

    def _fix(self, setting: str | None, late: float) -> str:
        """What would have kept a span `late` seconds after its trace's root (or first span) in its trace."""
        if setting is None:
            return "none: the trace was assembled at shutdown"
        value = {"grace_seconds": self._grace, "max_wait_seconds": self._max_wait, "trace_ttl_seconds": self._ttl,
               "max_traces_in_flight": self._max_traces, "max_bytes_in_flight": self._max_bytes}[setting]
        if setting.endswith("_seconds"):
            return f"raise otlp.{setting} (now {value:g}) above {late:.1f}"
        return f"raise otlp.{setting} (now {value:g}): their trace was assembled early, the in-flight traces at that cap"

    def _warn_once(self, pending: _Pending, reason: str, hint: str) -> None:
        service = next((str(s.resource.get("service.name")) for s in pending.spans.values()), "unknown")
        if (service, reason) in self._warned or len(self._warned) >= MAX_WARNED:
            return
        self._warned.add((service, reason))
        if reason == "unmapped_genai":
            log.warning("traces that look like GenAI telemetry are not mapped", service=service, missing=hint)
        elif reason == "content_not_captured":
            log.warning("traces without question or answer text are not counted: the app records no content",
                        service=service, fix=hint)
        elif reason.startswith("failed "):
            log.warning("runs failed: counted, never judged", service=service, error=hint)
        else:  # detached_retrieval, failed (without a question)
            log.warning("traces that make no event", service=service, outcome=reason, why=hint)

    def _count_outcome(self, outcome: str) -> None:
        child = self._outcome_counts.get(outcome)
        if child is None:
            child = self._outcome_counts[outcome] = self._outcomes.labels(outcome=outcome)
        child.inc()

    def _assemble(self, trace_id: str, outcome: str, setting: str | None) -> list[Assembled]:
        """The trace, mapped; `setting`: the one that assembled it now, for the warning if spans come later."""
        pending = self._pending.pop(trace_id)
        self._bytes -= pending.size
        if len(self._done) >= self._max_traces:
            self._done.popitem(last=False)
        event: TraceEvent | NotMapped | None = None
        try:
            event = self._mapper.map(list(pending.spans.values()))
        except Exception:
            log.exception("a trace's spans could not be mapped; the trace is dropped", spans=len(pending.spans))
        since = pending.first_seen if pending.root_seen is None else pending.root_seen
        self._done[trace_id] = _Done(since, setting, pending.root_service,
                                     isinstance(event, TraceEvent) and event.chunks is not None)
        if event is None:
            self._count_outcome("mapping_failed")
            return []
        if isinstance(event, NotMapped):  # not_rag: indexing, health checks; content_not_captured...
            self._count_outcome(event.reason)
            if event.reason != "not_rag":
                self._warn_once(pending, event.reason, event.hint)
            return []
        # A failed run is counted as such, whatever assembled it: its event goes on, with no answer; each service's
        # error types are logged once, with the span that failed (no bad case keeps a failed run).
        if event.error is not None:
            self._count_outcome("failed")
            self._warn_once(pending, f"failed {event.error.type}", f"{event.error.type} in {event.error.span!r}")
        else:
            self._count_outcome(outcome)
        return [(event, pending.size)]


def _has_retrieval(pending: _Pending) -> bool:
    """Whether a retrieval span has come: each span is looked at once, however many ticks its trace waits."""
    if not pending.retrieval:
        pending.retrieval = any(map(is_retrieval, islice(pending.spans.values(), pending.checked, None)))
        pending.checked = len(pending.spans)
    return pending.retrieval


def _calls_a_service(span: Span) -> bool:
    """Not a model or retriever call (a provider that exports nothing): a call whose other side may send spans."""
    return not is_llm(span) and not is_retrieval(span)


def _answered(span: Span, spans: dict[str, Span]) -> bool:
    """Whether a span of another service has come under `span`: its own service's children (the model call made
    beside a request whose context it propagated by hand) are not the other side of its call."""
    service = _service(span)
    return any(s.parent_span_id == span.span_id and _service(s) != service for s in spans.values())


def _service(span: Span) -> str:
    return str(span.resource.get("service.name", "unknown"))
