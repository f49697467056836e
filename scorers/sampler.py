"""Sampling for the LLM judge, and the workers that judge off the fast path.

The sampler is a pipeline stage: it never waits. A sampled trace goes into a bounded
queue; when the queue is full the trace is skipped and counted, so ingestion never
slows down for the judge. Sampling is deterministic by trace id, so every replica
makes the same choice for a trace.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence

import structlog

from prometheus_client import Counter

from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.exporters.labels import LabelGuard
from ragpulse.exporters.metrics import Metrics
from ragpulse.scorers.judge import GroundednessJudge, Judgment

log = structlog.get_logger("ragpulse.judge")


def in_sample(trace_id: str, rate: float) -> bool:
    """The same answer for the same trace id on every replica and every run."""
    return zlib.crc32(trace_id.encode()) < rate * 2**32


def is_negative(event: FeedbackEvent) -> bool:
    """Feedback that says the answer failed: thumbs down, a rating of 1-2, an escalation."""
    if event.kind == "thumbs":
        return event.value == "down"
    if event.kind == "rating":
        return isinstance(event.value, int | float) and event.value <= 2
    return event.kind == "escalation"


class RecentTraces:
    """Judgeable traces that were not sampled, kept `window` seconds (at most `capacity`) so that
    negative feedback arriving after its trace can still have it judged. Evictions are counted."""

    def __init__(self, capacity: int, window: float, evicted: Counter, clock: Callable[[], float] = time.monotonic) -> None:
        self._traces: OrderedDict[str, tuple[float, TraceEvent]] = OrderedDict()
        self._capacity = capacity
        self._window = window
        self._evicted = evicted
        self._clock = clock

    def __len__(self) -> int:
        return len(self._traces)

    def remember(self, event: TraceEvent) -> None:
        now = self._clock()
        while self._traces:
            first_seen, _ = next(iter(self._traces.values()))
            if now - first_seen < self._window:
                break
            self._traces.popitem(last=False)  # expired: its feedback window is over, not counted
        if len(self._traces) >= self._capacity:
            self._traces.popitem(last=False)
            self._evicted.inc()
        self._traces[event.trace_id] = (now, event)

    def take(self, trace_id: str) -> TraceEvent | None:
        entry = self._traces.pop(trace_id, None)
        if entry is None or self._clock() - entry[0] >= self._window:
            return None
        return entry[1]


# Lower is more urgent: what users complained about is judged before the routine sample.
PRIORITY = {"negative_feedback": 0, "base_rate": 1}


class JudgeQueue:
    """Bounded queue of traces to judge, most urgent first (then oldest first).

    When full, a more urgent trace evicts the least urgent, newest one (counted as
    skipped, reason evicted); a trace no more urgent than everything queued is skipped.
    """

    def __init__(self, capacity: int, skipped: Counter) -> None:
        self._heap: list[tuple[int, int, TraceEvent]] = []
        self._capacity = capacity
        self._skipped = skipped
        self._seq = 0
        self._ready = asyncio.Event()

    def qsize(self) -> int:
        return len(self._heap)

    def offer(self, event: TraceEvent, reason: str) -> bool:
        priority = PRIORITY[reason]
        if len(self._heap) >= self._capacity:
            worst = max(self._heap)
            if worst[0] <= priority:
                self._skipped.labels(reason="queue_full").inc()
                return False
            self._heap.remove(worst)
            heapq.heapify(self._heap)
            self._skipped.labels(reason="evicted").inc()
        self._seq += 1
        heapq.heappush(self._heap, (priority, self._seq, event))
        self._ready.set()
        return True

    async def get(self) -> TraceEvent:
        while not self._heap:
            self._ready.clear()
            await self._ready.wait()
        return heapq.heappop(self._heap)[2]


class JudgeSampler:
    """Pipeline stage: hands traces to the judge queue; passes every envelope on.

    Traces are judged when their trace id falls in the base-rate sample, or later when
    negative feedback about them arrives while they are still in the recent-traces store.
    """

    def __init__(self, rate: float, queue: JudgeQueue, metrics: Metrics, recent: RecentTraces) -> None:
        self._rate = rate
        self._queue = queue
        self._recent = recent
        self._sampled = metrics.judge_sampled
        self._skipped = metrics.judge_skipped

    def __call__(self, envelope: Envelope) -> Envelope:
        event = envelope.event
        if isinstance(event, FeedbackEvent):
            if event.trace_id and is_negative(event):
                trace = self._recent.take(event.trace_id)
                if trace is not None:
                    self._enqueue(trace, "negative_feedback")
            return envelope
        if envelope.fallback_rule is not None or not event.chunks:
            if in_sample(event.trace_id, self._rate):
                # a refusal has no claims to ground; no chunks, nothing to ground them in
                self._skipped.labels(reason="fallback" if envelope.fallback_rule else "no_context").inc()
        elif in_sample(event.trace_id, self._rate):
            self._enqueue(event, "base_rate")
        else:
            self._recent.remember(event)
        return envelope

    def _enqueue(self, event: TraceEvent, reason: str) -> None:
        if self._queue.offer(event, reason):
            self._sampled.labels(reason=reason).inc()


class CircuitBreaker:
    """Stops calling a provider that keeps failing, and probes it again after a cooldown.

    closed -> open after `failures` failed calls in a row; open -> half_open once the cooldown
    has passed (one probe call); half_open -> closed on success, open again on failure.
    """

    CLOSED, OPEN, HALF_OPEN = 0, 1, 2

    def __init__(self, failures: int, cooldown: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._threshold = failures
        self._cooldown = cooldown
        self._clock = clock
        self._failures = 0
        self._opened_at = 0.0
        self.state = self.CLOSED

    def allow(self) -> bool:
        if self.state == self.OPEN and self._clock() - self._opened_at >= self._cooldown:
            self.state = self.HALF_OPEN
            return True  # the probe
        return self.state == self.CLOSED

    def record(self, ok: bool) -> None:
        if ok:
            self._failures, self.state = 0, self.CLOSED
            return
        self._failures += 1
        if self.state == self.HALF_OPEN or self._failures >= self._threshold:
            self.state, self._opened_at = self.OPEN, self._clock()


def cache_key(event: TraceEvent) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for part in (event.query, *(c.text for c in event.chunks or []), event.answer):
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.digest()


class JudgeWorkers:
    """`concurrency` tasks that judge queued traces and record the results."""

    def __init__(
        self,
        judge: GroundednessJudge,
        queue: JudgeQueue,
        metrics: Metrics,
        guard: LabelGuard,
        *,
        concurrency: int,
        breaker: CircuitBreaker,
        cache_entries: int,
        sinks: Sequence[Callable[[TraceEvent, Judgment], None]] = (),
    ) -> None:
        self._judge = judge
        self._queue = queue
        self._metrics = metrics
        self._guard = guard
        self._concurrency = concurrency
        self._breaker = breaker
        self._cache: OrderedDict[bytes, Judgment] = OrderedDict()
        self._cache_entries = cache_entries
        self._sinks = list(sinks)
        self._tasks: list[asyncio.Task[None]] = []
        metrics.judge_queue_depth.set_function(queue.qsize)
        metrics.judge_circuit_state.set_function(lambda: breaker.state)

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._work(), name=f"ragpulse-judge-{i}") for i in range(self._concurrency)]

    async def shutdown(self) -> None:
        """Stop judging; what is still queued is skipped and counted (judging is a sample anyway)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        left = self._queue.qsize()
        if left:
            self._metrics.judge_skipped.labels(reason="shutdown").inc(left)

    async def _work(self) -> None:
        while True:
            event = await self._queue.get()
            key = cache_key(event)
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                self._metrics.judge_cache_hits.inc()
                self._record_verdict(event, cached)
                continue
            if not self._breaker.allow():
                self._metrics.judge_skipped.labels(reason="circuit_open").inc()
                continue
            judgment = await self._judge.judge(event)
            # Unparseable output is the model's fault, not the provider's: it does not trip the breaker.
            self._breaker.record(judgment.error in (None, "invalid_output"))
            self._record_call(event, judgment)
            if judgment.score is not None and self._cache_entries:
                self._cache[key] = judgment
                if len(self._cache) > self._cache_entries:
                    self._cache.popitem(last=False)

    def _record_call(self, event: TraceEvent, judgment: Judgment) -> None:
        metrics, model = self._metrics, judgment.judge_model
        metrics.judge_requests.labels(judge_model=model, outcome=judgment.error or "ok").inc()
        metrics.judge_duration.labels(judge_model=model).observe(judgment.seconds)
        metrics.judge_tokens.labels(judge_model=model, kind="prompt").inc(judgment.prompt_tokens)
        metrics.judge_tokens.labels(judge_model=model, kind="completion").inc(judgment.completion_tokens)
        self._record_verdict(event, judgment)

    def _record_verdict(self, event: TraceEvent, judgment: Judgment) -> None:
        for sink in self._sinks:
            try:
                sink(event, judgment)
            except OSError as exc:  # a full disk must not stop judging
                self._metrics.stage_errors.labels(stage="judgment_sink").inc()
                log.warning("judgment sink failed", error=str(exc))
        metrics = self._metrics
        if event.model and event.model == judgment.judge_model:
            metrics.judge_self_judging.inc()
        labels = self._guard.admit_event(event)
        if judgment.score is None:
            metrics.judgments.labels(*labels, "groundedness", "error").inc()
            log.warning("judgment failed", trace_id=event.trace_id, error=judgment.error)
            return
        verdict = "hallucination" if judgment.hallucination else "grounded"
        metrics.judgments.labels(*labels, "groundedness", verdict).inc()
        metrics.judge_score.labels("groundedness").observe(judgment.score)
