"""Judging, wired: the sampler stage, the judge queue and workers, the result writer, the calibrator, and the
one exit of their judgments, with its consumers and the feedback join's listeners registered in one place."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import structlog
from prometheus_client import CollectorRegistry

from ragpulse.app.components import llm_judge, local_judge, sampling_policy
from ragpulse.app.result_sinks import SignalsToRecords, result_sinks
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.judging import RequestRateLimiter, SpendBudget
from ragpulse.judging import Calibrator
from ragpulse.judging import Consumer, JudgmentExit
from ragpulse.judging import JudgmentMetrics
from ragpulse.judging import ContextRecorder
from ragpulse.judging import RoutineFloor
from ragpulse.judging import JudgeQueue, JudgeSampler
from ragpulse.judging import CircuitBreaker, JudgeWorkers, JudgmentCache
from ragpulse.probes.candidates import CandidateCollector
from ragpulse.results import review_queue
from ragpulse.results.writer import ResultWriter

log = structlog.get_logger("ragpulse.service")


def _calibrator(config: Config, registry: CollectorRegistry, writer: ResultWriter, join: FeedbackJoin) -> Calibrator:
    options = config.calibration
    calibrator = Calibrator(options, registry, writer, pending_reviews=lambda: join.pending_reviews)
    path = config.results.sqlite_path
    if path and Path(path).exists():  # audited judgments of an earlier run still wait for their reviews
        with closing(review_queue.connect(path)) as db:
            entries = review_queue.waiting(db, now=time.time(), window=options.review_window_seconds)
        restored = calibrator.restore(entries[-options.max_audited:])
        if restored:
            log.info("audited judgments restored for the review join", count=restored)
    return calibrator


class Judging:
    """The sampler stage, the judge queue and workers, and the one exit of their judgments: its consumers
    (metrics, the result writer, the calibrator, the join) and the join's listeners are registered here."""

    def __init__(self, config: Config, registry: CollectorRegistry, guard: LabelGuard, join: FeedbackJoin,
                 outputs: Sequence[tuple[str, Consumer]] = ()) -> None:
        judge = config.judge
        queue = JudgeQueue(judge.queue_capacity, judge.queue_max_bytes, registry)
        # The floor counts the whole app's traffic: this replica's times judge.replicas (a Kafka consumer's partition
        # share replaces it on each rebalance: service.py), so the replicas together judge what one would.
        self.floor = RoutineFloor(judge.min_routine_per_minute, time.monotonic, config.metrics.max_label_sets,
                                  scale=judge.replicas)
        self.sampler = JudgeSampler(sampling_policy(judge), queue, registry, guard, join,
                                    max_label_sets=config.metrics.max_label_sets, floor=self.floor)
        self.writer = writer = ResultWriter(result_sinks(config, registry), config.results.queue_capacity,
                                            config.results.queue_max_bytes, registry)
        calibrator = _calibrator(config, registry, writer, join)
        join.listeners.extend([self.sampler, SignalsToRecords(writer), calibrator])
        if config.results.sqlite_path:
            join.listeners.append(CandidateCollector(join, writer, silent_accept_rate=config.probes.candidate_silent_accept_rate))
        kind = "llm" if judge.uses_llm else "local"  # the judge label of its judgments (a fallback's rule aside)
        exit_ = JudgmentExit([
            ("metrics", JudgmentMetrics(registry, guard, judge=kind).record),
            ("context", ContextRecorder(registry, guard, judge=kind).record),
            ("results", lambda judged: writer.write(judged.record, judged.record_size)),
            ("calibrator", lambda judged: calibrator.judged(judged.record)),
            ("join", lambda judged: join.release_reviews(judged.item.event.trace_id)),  # reviews held for this judgment
            *outputs,  # the interop outputs (app/interop_wiring.py)
        ], registry)
        limiter = RequestRateLimiter(judge.max_requests_per_minute)
        self.workers = JudgeWorkers(
            queue, registry, exit_,
            llm=llm_judge(judge, limiter, registry) if judge.uses_llm else None,
            local=local_judge(judge, registry),
            concurrency=judge.concurrency,
            breaker=CircuitBreaker(judge.breaker_failures, judge.breaker_cooldown_seconds),
            budget=SpendBudget(tokens_per_hour=judge.max_tokens_per_hour, tokens_per_day=judge.max_tokens_per_day,
                               cost_per_hour=judge.max_cost_per_hour, cost_per_day=judge.max_cost_per_day),
            reserve_share=judge.budget_reserve_share,
            price=judge.prices.get(judge.model),
            cache=JudgmentCache(judge.cache_entries, judge.cache_max_bytes, registry),
            audit_rate=config.calibration.audit_rate,
            join=join,
            limiter=limiter if judge.max_requests_per_minute is not None else None,
        )

    async def start(self) -> None:
        self.writer.start()
        await self.workers.start()

    async def shutdown(self) -> None:
        await self.workers.shutdown()
        await asyncio.to_thread(self.writer.close)
