"""Judging, wired: the sampler stage, the judge queue and workers, the result writer, the calibrator, and the
one exit of their judgments, with its consumers and the feedback join's listeners registered in one place."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import structlog
from prometheus_client import CollectorRegistry, Counter

from ragpulse.app.factories import llm_judge, local_judge, sampling_policy
from ragpulse.app.sinks import SignalsToRecords, result_sinks
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.exporters import review_queue
from ragpulse.exporters.results import ResultMetrics, ResultWriter
from ragpulse.judging.budget import RequestRateLimiter, SpendBudget
from ragpulse.judging.calibration import CalibrationMetrics, Calibrator
from ragpulse.judging.exit import Consumer, JudgmentExit
from ragpulse.judging.metrics import JudgeMetrics, JudgmentMetrics, RateMetrics
from ragpulse.judging.utilisation import ContextMetrics, ContextRecorder
from ragpulse.judging.routine_floor import RoutineFloor
from ragpulse.judging.sampler import JudgeQueue, JudgeSampler, SamplerMetrics
from ragpulse.judging.workers import CircuitBreaker, JudgeWorkers, JudgmentCache
from ragpulse.probes.candidates import CandidateCollector
from ragpulse.scorers.join import FeedbackJoin

log = structlog.get_logger("ragpulse.service")


def _calibrator(config: Config, registry: CollectorRegistry, writer: ResultWriter, join: FeedbackJoin) -> Calibrator:
    options = config.calibration
    metrics = CalibrationMetrics(registry)
    metrics.threshold.set(options.agreement_threshold)
    metrics.min_reviews.set(options.min_reviews)
    metrics.waiting_reviews.set_function(lambda: join.pending_reviews)
    calibrator = Calibrator(metrics, writer, review_window=options.review_window_seconds, max_audited=options.max_audited)
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
                 stage_errors: Counter, outputs: Sequence[tuple[str, Consumer]] = ()) -> None:
        judge = config.judge
        self.metrics = metrics = JudgeMetrics(registry, config.metrics.labels, judge.model if judge.uses_llm else None)
        queue = JudgeQueue(judge.queue_capacity, judge.queue_max_bytes, metrics.judge_skipped)
        floor = RoutineFloor(judge.min_routine_per_minute, time.monotonic, config.metrics.max_label_sets)
        self.sampler = JudgeSampler(sampling_policy(judge), queue, SamplerMetrics(registry, config.metrics.labels),
                                    metrics.judge_skipped, guard, join, max_label_sets=config.metrics.max_label_sets,
                                    floor=floor)
        results = ResultMetrics(registry)
        self.writer = writer = ResultWriter(result_sinks(config, results.dropped), config.results.queue_capacity,
                                            config.results.queue_max_bytes,
                                            results.dropped, results.sink_errors)
        calibrator = _calibrator(config, registry, writer, join)
        join.listeners.extend([self.sampler, SignalsToRecords(writer), calibrator])
        if config.results.sqlite_path:
            join.listeners.append(CandidateCollector(join, writer, silent_accept_rate=config.probes.candidate_silent_accept_rate))
        exit_ = JudgmentExit([
            ("metrics", JudgmentMetrics(metrics, RateMetrics(registry, config.metrics.labels), guard).record),
            ("context", ContextRecorder(ContextMetrics(registry, config.metrics.labels), guard).record),
            ("results", lambda judged: writer.write(judged.record, judged.record_size)),
            ("calibrator", lambda judged: calibrator.judged(judged.record)),
            ("join", lambda judged: join.release_reviews(judged.item.event.trace_id)),  # reviews held for this judgment
            *outputs,  # the interop outputs (app/interop_wiring.py)
        ], stage_errors)
        limiter = RequestRateLimiter(judge.max_requests_per_minute)
        if judge.max_requests_per_minute is not None:
            metrics.judge_budget_remaining.labels(budget="requests_per_minute").set_function(limiter.remaining)
        self.workers = JudgeWorkers(
            queue, metrics, exit_,
            llm=llm_judge(judge, limiter, metrics.judge_retries) if judge.uses_llm else None,
            local=local_judge(judge, registry),
            concurrency=judge.concurrency,
            breaker=CircuitBreaker(judge.breaker_failures, judge.breaker_cooldown_seconds),
            budget=SpendBudget(tokens_per_hour=judge.max_tokens_per_hour, tokens_per_day=judge.max_tokens_per_day,
                               cost_per_hour=judge.max_cost_per_hour, cost_per_day=judge.max_cost_per_day),
            reserve_share=judge.budget_reserve_share,
            price=judge.prices.get(judge.model),
            cache=JudgmentCache(judge.cache_entries, judge.cache_max_bytes, metrics.judge_cache_evicted),
            audit_rate=config.calibration.audit_rate,
            join=join,
            stage_errors=stage_errors,
        )

    async def start(self) -> None:
        self.writer.start()
        await self.workers.start()

    async def shutdown(self) -> None:
        await self.workers.shutdown()
        await asyncio.to_thread(self.writer.close)
