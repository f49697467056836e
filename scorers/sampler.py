"""Which traces the judge sees, and in what order.

The sampler is a pipeline stage: it never waits. A trace is judged when it belongs to a
priority class and its trace id falls in that class's rate (deterministic: every replica
makes the same choice). Classes, most urgent first:

  negative_feedback  thumbs down or a rating of 1-2, arriving after the trace
  escalation         the user asked for a human, after the trace
  rephrase           the same session asked a similar question again soon after
  always             the configured always-judge filter matches
  scorer_flag        local scorers flag it: low lexical support, or a number not in the chunks
  over_refusal       a fallback although the chunks look relevant to the question
  base_rate          the routine sample (per app/route overrides)

Feedback and rephrases arrive after their trace, so recent traces are kept in a bounded store
for a window. Sampled traces wait in a bounded queue ordered by class; when full, a more
urgent trace evicts the least urgent one. Every decision is counted, so coverage is visible.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import msgspec
import re2
from prometheus_client import Counter

from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.exporters.metrics import Metrics
from ragpulse.scorers.lexical import Units, units

PRIORITIES = (
    "negative_feedback", "escalation", "rephrase", "always", "scorer_flag", "over_refusal", "base_rate",
)
URGENCY = {name: rank for rank, name in enumerate(PRIORITIES)}  # lower is more urgent


def in_sample(trace_id: str, rate: float) -> bool:
    """The same answer for the same trace id on every replica and every run."""
    return zlib.crc32(trace_id.encode()) < rate * 2**32


def feedback_priority(event: FeedbackEvent) -> str | None:
    """The class of feedback that says the answer failed, or None."""
    if event.kind == "thumbs" and event.value == "down":
        return "negative_feedback"
    if event.kind == "rating" and isinstance(event.value, int | float) and not isinstance(event.value, bool) and event.value <= 2:
        return "negative_feedback"
    if event.kind == "escalation":
        return "escalation"
    return None


@dataclass(slots=True)
class JudgeItem:
    event: TraceEvent
    fallback: bool
    priority: str = "base_rate"


class RecentTraces:
    """Judgeable traces (sampled or not) kept `window` seconds (at most `capacity`), so that
    feedback or a rephrase arriving after its trace can still have it judged. Evictions are counted.

    Traces are kept serialized: one bytes object each instead of a tree of objects, which keeps
    the garbage collector's work (and so the fast path) independent of the store's size.
    """

    def __init__(self, capacity: int, window: float, evicted: Counter, clock: Callable[[], float] = time.monotonic) -> None:
        self._items: OrderedDict[str, tuple[float, bytes, bool]] = OrderedDict()
        self._capacity = capacity
        self._window = window
        self._evicted = evicted
        self._clock = clock
        self._encode = msgspec.msgpack.Encoder().encode
        self._decode = msgspec.msgpack.Decoder(TraceEvent).decode

    def __len__(self) -> int:
        return len(self._items)

    def remember(self, event: TraceEvent, fallback: bool) -> None:
        now = self._clock()
        items = self._items
        while items:
            first_seen = next(iter(items.values()))[0]
            if now - first_seen < self._window:
                break
            items.popitem(last=False)  # expired: its feedback window is over, not counted
        if len(items) >= self._capacity:
            items.popitem(last=False)
            self._evicted.inc()
        # Attributes are not judged: leaving them out halves the encoding of a typical event.
        slim = msgspec.structs.replace(event, attributes={}) if event.attributes else event
        items[event.trace_id] = (now, self._encode(slim), fallback)

    def take(self, trace_id: str) -> JudgeItem | None:
        entry = self._items.pop(trace_id, None)
        if entry is None or self._clock() - entry[0] >= self._window:
            return None
        return JudgeItem(self._decode(entry[1]), entry[2])


class RephraseDetector:
    """The previous question of each session: a similar one soon after means the first answer failed.

    Similar: the questions share at least `similarity` of their content words (Jaccard), and are
    not identical (a retry of the same request is not a rephrase). Sessions are capped; the
    least recently active is evicted (counted).
    """

    def __init__(self, window: float, similarity: float, capacity: int, evicted: Counter,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sessions: OrderedDict[str, tuple[float, str, str, frozenset[str]]] = OrderedDict()
        self._window = window
        self._similarity = similarity
        self._capacity = capacity
        self._evicted = evicted
        self._clock = clock

    def previous_if_rephrased(self, event: TraceEvent, question: Units | None) -> str | None:
        """Records this question; returns the trace id of the one it rephrases, if any."""
        if not event.session_id:
            return None
        now = self._clock()
        if question is None:  # the local scorers did not run
            question = units(event.query)
        terms = question.words
        before = self._sessions.pop(event.session_id, None)
        self._sessions[event.session_id] = (now, event.trace_id, event.query, terms)
        if len(self._sessions) > self._capacity:
            self._sessions.popitem(last=False)
            self._evicted.inc()
        if before is None:
            return None
        seen_at, trace_id, query, previous = before
        if now - seen_at > self._window or query.strip().lower() == event.query.strip().lower() or not (terms and previous):
            return None
        return trace_id if len(terms & previous) / len(terms | previous) >= self._similarity else None


@dataclass(frozen=True, slots=True)
class TraceFilter:
    """Matches when every given field matches: labels by equality, the question by an RE2 search."""

    app: str | None = None
    route: str | None = None
    model: str | None = None
    release: str | None = None
    query_pattern: str | None = None

    def compile(self) -> Callable[[TraceEvent], bool]:
        wanted = [(name, value) for name in ("app", "route", "model", "release") if (value := getattr(self, name)) is not None]
        pattern = re2.compile(self.query_pattern) if self.query_pattern is not None else None

        def matches(event: TraceEvent) -> bool:
            return all(getattr(event, name) == value for name, value in wanted) and (
                pattern is None or pattern.search(event.query) is not None
            )

        return matches


@dataclass(frozen=True, slots=True)
class SamplingPolicy:
    base_rate: float
    rate_overrides: Mapping[tuple[str | None, str | None], float]  # (app, route), either may be None: any
    class_rates: Mapping[str, float]
    always: Sequence[Callable[[TraceEvent], bool]]
    flag_support_below: float  # lexical groundedness under this flags a trace
    over_refusal_context_at_least: float  # lexical context relevance of a fallback at or above this

    def base_rate_of(self, event: TraceEvent) -> float:
        overrides = self.rate_overrides
        for key in ((event.app, event.route), (None, event.route), (event.app, None)):
            if key in overrides:
                return overrides[key]
        return self.base_rate

    def classes(self, envelope: Envelope) -> list[str]:
        """The priority classes a trace qualifies for at arrival, most urgent first."""
        event = envelope.event
        assert isinstance(event, TraceEvent)
        found = []
        if self.always and any(matches(event) for matches in self.always):
            found.append("always")
        scores = envelope.local_scores
        if scores is not None:
            if envelope.fallback_rule is None and (
                scores.number_mismatch or (scores.groundedness is not None and scores.groundedness < self.flag_support_below)
            ):
                found.append("scorer_flag")
            if (envelope.fallback_rule is not None and scores.context_relevance is not None
                    and scores.context_relevance >= self.over_refusal_context_at_least):
                found.append("over_refusal")
        found.append("base_rate")
        return found

    def rate(self, priority: str, event: TraceEvent) -> float:
        return self.base_rate_of(event) if priority == "base_rate" else self.class_rates[priority]


class JudgeQueue:
    """Bounded queue of traces to judge, most urgent first (then oldest first): a FIFO per class.

    When full, a more urgent trace evicts the least urgent, newest one (counted as skipped,
    reason evicted); a trace no more urgent than everything queued is skipped (queue_full).
    """

    def __init__(self, capacity: int, skipped: Counter) -> None:
        self._classes: list[deque[JudgeItem]] = [deque() for _ in PRIORITIES]
        self._size = 0
        self._capacity = capacity
        # Resolved once: when the judge falls behind, this runs for every trace.
        self._full = {p: skipped.labels(priority=p, reason="queue_full") for p in PRIORITIES}
        self._evicted = {p: skipped.labels(priority=p, reason="evicted") for p in PRIORITIES}
        self._ready = asyncio.Event()

    def qsize(self) -> int:
        return self._size

    def offer(self, item: JudgeItem) -> bool:
        urgency = URGENCY[item.priority]
        if self._size >= self._capacity:
            least = max(rank for rank, queued in enumerate(self._classes) if queued)
            if least <= urgency:
                self._full[item.priority].inc()
                return False
            evicted = self._classes[least].pop()
            self._size -= 1
            self._evicted[evicted.priority].inc()
        self._classes[urgency].append(item)
        self._size += 1
        self._ready.set()
        return True

    def drain(self) -> list[JudgeItem]:
        items = [item for queued in self._classes for item in queued]
        for queued in self._classes:
            queued.clear()
        self._size = 0
        return items

    async def get(self) -> JudgeItem:
        while not self._size:
            self._ready.clear()
            await self._ready.wait()
        self._size -= 1
        return next(queued for queued in self._classes if queued).popleft()


class JudgeSampler:
    """Pipeline stage: hands traces to the judge queue; passes every envelope on."""

    def __init__(self, policy: SamplingPolicy, queue: JudgeQueue, metrics: Metrics, recent: RecentTraces,
                 rephrases: RephraseDetector) -> None:
        self._policy = policy
        self._queue = queue
        self._recent = recent
        self._rephrases = rephrases
        # Label children resolved once: this runs for every trace.
        self._candidates = {p: metrics.judge_candidates.labels(p) for p in PRIORITIES}
        self._sampled = {p: metrics.judge_sampled.labels(p) for p in PRIORITIES}
        self._unknown = {p: metrics.judge_skipped.labels(priority=p, reason="trace_unknown") for p in PRIORITIES}

    def __call__(self, envelope: Envelope) -> Envelope:
        event = envelope.event
        if isinstance(event, FeedbackEvent):
            priority = feedback_priority(event)
            if priority is not None and event.trace_id:
                self._later(priority, event.trace_id)
            return envelope
        if event.session_id:
            scores = envelope.local_scores
            rephrased = self._rephrases.previous_if_rephrased(event, scores.question if scores else None)
            if rephrased is not None:
                self._later("rephrase", rephrased)
        fallback = envelope.fallback_rule is not None
        if not fallback and not event.chunks:
            return envelope  # no context and an answer: nothing to judge it against
        for priority in self._policy.classes(envelope):
            self._candidates[priority].inc()
            if in_sample(event.trace_id, self._policy.rate(priority, event)):
                self._offer(JudgeItem(event, fallback, priority))
                break
        # Sampled or not: a complaint about an already judged trace is then a cache hit, and counted.
        self._recent.remember(event, fallback)
        return envelope

    def _later(self, priority: str, trace_id: str) -> None:
        """A signal about a trace seen before: judge it if it is still known and in the class's rate."""
        self._candidates[priority].inc()
        if not in_sample(trace_id, self._policy.class_rates[priority]):
            return
        item = self._recent.take(trace_id)
        if item is None:  # expired, evicted, not judgeable, or never seen by this replica
            self._unknown[priority].inc()
            return
        item.priority = priority
        self._offer(item)

    def _offer(self, item: JudgeItem) -> None:
        if self._queue.offer(item):
            self._sampled[item.priority].inc()
