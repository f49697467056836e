"""The judge workers: take sampled traces off the judge queue, judge them within the budgets,
attribute bad cases and record everything (metrics, result sinks).

`concurrency` tasks share one queue. Before an LLM call a worker checks the circuit breaker
and reserves the call's token and cost estimate; a refused reservation skips the trace,
counted by priority and reason. Identical (question, chunks, answer) are judged once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import structlog
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import TraceEvent
from ragpulse.collector.pipeline import PipelineMetrics
from ragpulse.collector.sampling import in_sample
from ragpulse.collector.telemetry.shared import shared
from ragpulse.config import Price
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.judging.attribution import attribute
from ragpulse.judging.budget import RequestRateLimiter, SpendBudget
from ragpulse.judging.exit import JudgedTrace, JudgmentExit, build_record
from ragpulse.judging.llm_judge import LlmJudge, estimate_prompt_tokens
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.judging.metrics import JudgeMetrics
from ragpulse.judging.records import judged_record_bytes
from ragpulse.judging.sampler import JudgeItem, JudgeQueue
from ragpulse.judging.verdicts import Judgment, judgment_bytes

log = structlog.get_logger("ragpulse.judge")

# Share of the budget reserve a class must leave untouched: the routine sample stops first, the
# flagged classes next; what users complained about and the always-judge filter use it all.
RESERVE_FACTOR = {"base_rate": 1.0, "over_refusal": 0.5, "scorer_flag": 0.5}


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
    for part in (event.query, *(c.text or "" for c in event.chunks or []), event.answer):
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.digest()


_KEY_BYTES = sys.getsizeof(cache_key(TraceEvent(trace_id="", query="", answer="")))  # a digest: one size


class JudgmentCache:
    """Judgments by cache_key(), least recently used out first, capped in entries (0: nothing is kept) and in
    bytes (an upper estimate of what each judgment holds), counted when evicted."""

    def __init__(self, max_entries: int, max_bytes: int, registry: CollectorRegistry) -> None:
        self._items: OrderedDict[bytes, tuple[Judgment, int]] = OrderedDict()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        metrics = shared(registry, JudgeMetrics)
        self._evicted = metrics.judge_cache_evicted
        self.bytes = 0
        # read when scraped (the registry's last cache: the sidecar makes one)
        metrics.judge_cache_entries.set_function(self.__len__)
        metrics.judge_cache_bytes.set_function(lambda: self.bytes)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> tuple[Judgment, int] | None:
        """The judgment and judgment_bytes() of it."""
        held = self._items.get(key)
        if held is None:
            return None
        self._items.move_to_end(key)
        return held

    def put(self, key: bytes, judgment: Judgment, size: int) -> None:
        """`size`: judgment_bytes(judgment), which the caller has (a record counts it too)."""
        if not self._max_entries:
            return
        items = self._items
        replaced = items.pop(key, None)  # two workers judged the same inputs at once: the last is kept
        if replaced is not None:
            self.bytes -= replaced[1] + _KEY_BYTES
        items[key] = (judgment, size)
        self.bytes += size + _KEY_BYTES
        while len(items) > self._max_entries or self.bytes > self._max_bytes:
            self.bytes -= items.popitem(last=False)[1][1] + _KEY_BYTES
            self._evicted.inc()


class JudgeWorkers:
    def __init__(
        self,
        queue: JudgeQueue,
        registry: CollectorRegistry,
        exit_: JudgmentExit,
        *,
        llm: LlmJudge | None,
        local: LocalJudge,
        concurrency: int,
        breaker: CircuitBreaker,
        budget: SpendBudget,
        reserve_share: float,
        price: Price | None,
        cache: JudgmentCache,
        audit_rate: float,
        join: FeedbackJoin,
        limiter: RequestRateLimiter | None = None,  # the LLM judge's, with a limit: its room is a budget reported
    ) -> None:
        self._join = join
        self._audit_rate = audit_rate
        self._queue = queue
        self._metrics = metrics = shared(registry, JudgeMetrics)
        self._exit = exit_
        self._failures = shared(registry, PipelineMetrics).stage_errors.labels(stage="judge")
        self._llm = llm
        self._local = local
        self._judge_kind = "llm" if llm is not None else "local"
        self._concurrency = concurrency
        self._breaker = breaker
        self._budget = budget
        self._reserve_share = reserve_share
        self._price = price
        self._cache = cache
        self._self_judging_warned = False
        self._tasks: list[asyncio.Task[None]] = []
        # The local judge is CPU work (milliseconds for long texts): on a thread of its own it does not hold
        # up the event loop (the sources, the fast path), and one thread keeps its chunk cache single-owner.
        self._local_thread: ThreadPoolExecutor | None = None
        metrics.judge_queue_depth.set_function(queue.qsize)
        metrics.judge_circuit_state.set_function(lambda: breaker.state)
        if limiter is not None:
            metrics.judge_budget_remaining.labels(budget="requests_per_minute").set_function(limiter.remaining)
        for name in budget.names:
            metrics.judge_budget_remaining.labels(budget=name).set_function(functools.partial(budget.remaining, name))
        if llm is not None:
            metrics.precreate_llm(llm.model)

    async def start(self) -> None:
        if self._llm is None:
            self._local_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragpulse-local-judge")
        self._tasks = [asyncio.create_task(self._work(), name=f"ragpulse-judge-{i}") for i in range(self._concurrency)]

    async def shutdown(self) -> None:
        """Stop judging; what is still queued is skipped and counted (judging is a sample anyway)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for item in self._queue.drain():
            self._metrics.judge_skipped.labels(item.priority, "shutdown").inc()
        if self._llm is not None:
            await self._llm.close()
        if self._local_thread is not None:
            self._local_thread.shutdown(wait=True, cancel_futures=True)

    async def _work(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                await self._judge(item)
            except Exception:  # a bug must cost one judgment, never the worker
                self._failures.inc()
                log.exception("judging failed", trace_id=item.event.trace_id)

    async def _judge(self, item: JudgeItem) -> None:
        event = item.event
        if item.fallback and not event.chunks:
            # Nothing retrieved and a refusal: a knowledge gap, no judge needed.
            rule = Judgment(event.trace_id, judge_model="rule", prompt_version="rule")
            self._record(item, rule, "rule", 0.0, judgment_bytes(rule))
            return
        key = cache_key(event)
        cached = self._cache.get(key)
        if cached is not None:
            judgment, size = cached
            self._metrics.judge_cache_hits.inc()
            reused = dataclasses.replace(judgment, trace_id=event.trace_id, prompt_tokens=0, completion_tokens=0,
                                         requests=0)
            self._record(item, reused, self._judge_kind, 0.0, size)
            return
        cost = 0.0
        if self._llm is None:
            assert self._local_thread is not None, "start() makes the local judge's thread"
            judgment = await asyncio.get_running_loop().run_in_executor(self._local_thread, self._local.judge, event)
        else:
            judged = await self._call_llm(self._llm, item)
            if judged is None:
                return
            judgment, cost = judged
        size = judgment_bytes(judgment)
        if judgment.error is None:
            self._cache.put(key, judgment, size)
        self._record(item, judgment, self._judge_kind, cost, size)

    async def _call_llm(self, llm: LlmJudge, item: JudgeItem) -> tuple[Judgment, float] | None:
        metrics, model = self._metrics, llm.model
        prompt = llm.prompt(item.event)
        estimate = estimate_prompt_tokens(prompt)
        estimated_cost = self._price.cost(estimate, llm.max_completion_tokens) if self._price else 0.0
        keep = RESERVE_FACTOR.get(item.priority, 0.0) * self._reserve_share
        reservation = self._budget.reserve(estimate + llm.max_completion_tokens, estimated_cost, keep)
        if isinstance(reservation, str):
            metrics.judge_skipped.labels(item.priority, reservation).inc()
            return None
        if not self._breaker.allow():
            self._budget.settle(reservation, 0, 0.0)
            metrics.judge_skipped.labels(item.priority, "circuit_open").inc()
            return None
        judgment = await llm.judge(item.event, prompt)
        cost = self._price.cost(judgment.prompt_tokens, judgment.completion_tokens) if self._price else 0.0
        self._budget.settle(reservation, judgment.prompt_tokens + judgment.completion_tokens, cost)
        # Unparseable output is the model's fault, not the provider's: it does not trip the breaker.
        self._breaker.record(judgment.error in (None, "invalid_output"))
        metrics.judge_requests.labels(judge_model=model, outcome=judgment.error or "ok").inc()
        metrics.judge_http_requests.labels(judge_model=model).inc(judgment.requests)
        metrics.judge_duration.labels(judge_model=model).observe(judgment.seconds)
        metrics.judge_tokens.labels(judge_model=model, kind="prompt").inc(judgment.prompt_tokens)
        metrics.judge_tokens.labels(judge_model=model, kind="completion").inc(judgment.completion_tokens)
        metrics.judge_cost.labels(judge_model=model).inc(cost)
        if item.event.model and item.event.model == model:
            metrics.judge_self_judging.inc()
            if not self._self_judging_warned:
                self._self_judging_warned = True
                log.warning("the judge model is the model that answered: its verdicts favour its own answers",
                            judge_model=model)
        return judgment, cost

    def _record(self, item: JudgeItem, judgment: Judgment, judge: str, cost: float, judgment_size: int) -> None:
        """Builds the judged trace once and hands it to the exit's consumers. `judgment_size`: judgment_bytes() of
        it, kept beside a cached judgment: with the event's size, what its record is counted at."""
        if judgment.error is not None:
            log.warning("judgment failed", trace_id=judgment.trace_id, error=judgment.error)
        self._metrics.judge_judged.labels(priority=item.priority).inc()
        refused = item.fallback or judgment.refusal  # the service's fallback or the local judge's reading: a refusal
        stage = attribute(judgment, refused)
        # The audit: a random share of the routine sample's groundedness verdicts goes to human review.
        audit = (item.sample == "routine" and not refused and judgment.groundedness is not None and judge != "rule"
                 and in_sample(item.event.trace_id, self._audit_rate, "audit"))
        grounded = None if refused else judgment.groundedness
        # The join marks the turn judged and says which signals came before (they go in the record).
        signals = self._join.judged(item.event.trace_id, item.sample,
                                    "not_scored" if grounded is None else judgment.groundedness_verdict,
                                    stage or "none")
        record = build_record(item, judgment, stage, judge, cost, audit, signals)
        size = judged_record_bytes(record, item.size, judgment_size)
        self._exit(JudgedTrace(item, judgment, stage, judge, record, size))
