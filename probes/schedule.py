"""Probing on a schedule inside `ragpulse run`, like a blackbox prober: each configured golden set is
asked of its target every interval (after a random 0..jitter delay, so replicas and sets spread out),
the run is stored, and its per-question outcomes are exported as counters and sums, so PromQL can
aggregate them over runs, replicas and intents:

    hit rate@k  = sum(rate(ragpulse_probe_hit_sum[6h])) / sum(rate(ragpulse_probe_hit_count[6h]))
    MRR         = ragpulse_probe_reciprocal_rank_sum / ragpulse_probe_reciprocal_rank_count (the same way)

and recall, precision, nDCG and correctness alike; a question without relevant chunks has no
retrieval observation. The release label is the service's own, when its response reports it
(`response.release`), else "not_reported".
"""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import closing

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Summary

from ragpulse.collector.telemetry.shared import shared
from ragpulse.probes import store
from ragpulse.probes.golden import GoldenSet
from ragpulse.probes.runner import Prober, ProbeRun

log = structlog.get_logger("ragpulse.probes")
_LABELS = ("golden_set", "target", "intent", "release")


class ProbeMetrics:
    """By golden set and target: one set per registry (`shared`), every schedule counts into it."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.runs = Counter("ragpulse_probe_runs_total", "Probe runs of a golden set against a target, by outcome "
                            "(ok: every question asked; failed: the run itself failed).", ["golden_set", "target", "outcome"],
                            registry=registry)
        self.last_run = Gauge("ragpulse_probe_last_run_timestamp_seconds", "When the last probe run of a golden set finished.",
                              ["golden_set", "target"], registry=registry)
        self.k = Gauge("ragpulse_probe_k", "The rank cut-off of the probe's retrieval metrics (probes.k).", registry=registry)
        self.questions = Counter("ragpulse_probe_questions_total", "Golden questions asked, by outcome (answered, error: "
                                 "no answer, and nothing scored).", [*_LABELS, "outcome"], registry=registry)
        self.fallbacks = Counter("ragpulse_probe_fallbacks_total", "Answered golden questions by whether the service fell "
                                 "back and whether it should have (expect_fallback).", [*_LABELS, "expected", "fell_back"],
                                 registry=registry)

        def summary(name: str, what: str) -> Summary:
            return Summary(f"ragpulse_probe_{name}", f"{what} of the golden questions with relevant chunks: _sum over _count "
                           "is the mean.", _LABELS, registry=registry)

        self.hit = summary("hit", "Hit@k (1 or 0)")
        self.reciprocal_rank = summary("reciprocal_rank", "Reciprocal rank of the first relevant chunk within k")
        self.recall = summary("recall", "Recall@k")
        self.precision = summary("precision", "Precision@k (over k, also when fewer came back)")
        self.ndcg = summary("ndcg", "nDCG@k")
        self.hallucination = Summary("ragpulse_probe_hallucination", "Probe answers judged as live traffic is, 1 for a "
                                     "hallucination (groundedness <= 2), else 0: _sum over _count is the rate.",
                                     [*_LABELS, "judge"], registry=registry)
        self.correctness = Summary("ragpulse_probe_correctness", "Answer correctness against the expected answer, 1-5, by "
                                   "the judge that gave it: _sum over _count is the mean.", [*_LABELS, "judge"],
                                   registry=registry)

    def record(self, run: ProbeRun) -> None:
        self.runs.labels(run.golden_set, run.target, "ok").inc()
        self.last_run.labels(run.golden_set, run.target).set(run.finished_at)
        for result in run.results:
            labels = (run.golden_set, run.target, result.intent or "unset", result.release or "not_reported")
            self.questions.labels(*labels, "error" if result.error is not None else "answered").inc()
            if result.fell_back is not None:
                self.fallbacks.labels(*labels, str(result.expect_fallback).lower(), str(result.fell_back).lower()).inc()
            if (scores := result.retrieval) is not None:
                self.hit.labels(*labels).observe(scores.hit)
                self.reciprocal_rank.labels(*labels).observe(scores.reciprocal_rank)
                self.recall.labels(*labels).observe(scores.recall)
                self.precision.labels(*labels).observe(scores.precision)
                self.ndcg.labels(*labels).observe(scores.ndcg)
            if result.groundedness is not None:
                self.hallucination.labels(*labels, result.judge or "local").observe(1.0 if result.groundedness <= 2 else 0.0)
            if result.correctness is not None:
                self.correctness.labels(*labels, result.correctness_judge or run.correctness_judge).observe(result.correctness)


class ProbeSchedule:
    """One golden set against one target, every interval, until cancelled."""

    def __init__(self, golden: GoldenSet, prober: Prober, registry: CollectorRegistry, db_path: str, *, interval: float,
                 jitter: float, target: str) -> None:
        self._golden = golden
        self._prober = prober
        self._metrics = shared(registry, ProbeMetrics)
        self._metrics.k.set(prober.k)  # probes.k, every prober's
        self._db_path = db_path
        self._interval = interval
        self._jitter = jitter
        self._target = target
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=f"ragpulse-probe-{self._golden.name}-{self._target}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self._prober.close()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(random.uniform(0, self._jitter))
            started = time.monotonic()
            try:
                run = await self._prober.run(self._golden)
                await asyncio.to_thread(self._save, run)
                self._metrics.record(run)
                overall = run.overall()
                log.info("probe run", golden_set=run.golden_set, target=run.target, run_id=run.run_id,
                         questions=overall.questions, errors=overall.errors, hit_rate=overall.hit_rate, mrr=overall.mrr)
            except Exception:  # a failed run is counted and logged; the next interval tries again
                self._metrics.runs.labels(self._golden.name, self._target, "failed").inc()
                log.exception("probe run failed", golden_set=self._golden.name, target=self._target)
            await asyncio.sleep(max(0.0, self._interval - (time.monotonic() - started)))

    def _save(self, run: ProbeRun) -> None:
        with closing(store.connect(self._db_path)) as db:
            store.save(db, run)
