"""Calibration: is the judge right? Human reviews (feedback of kind `review`) meet the judgments of
the audit, a random share of the routine sample queued for review.

The calibrator holds, bounded in count, the audited judgments waiting for a review
(`review_window_seconds`, days: far longer than any trace stays in the feedback join); reviews
that come before their judgment wait in the feedback join (feedback/join.py, its pending table),
so either may come first. A match counts the hallucination decision of both (judge_verdict x
human_verdict: the confusion counts) and the score agreement, per judge, judge model and prompt
version, with the answer's length bucket (verbosity bias) and whether the judge judged its own
model's answer (self-preference). Reviews that meet no audited judgment are counted by reason.
The sums (agreement, kappa, sensitivity, specificity, the corrected rate) are computed from those
counters in PromQL, or from the review store by `ragpulse calibration` (judging/estimators.py).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.events import FeedbackEvent, ReviewScores
from ragpulse.config import CalibrationConfig
from ragpulse.feedback.tables import Listener
from ragpulse.judging.agreement import AuditedJudgment, score_agreement, verdict_of
from ragpulse.judging.records import JudgmentRecord, ReviewRecord

UNMATCHED = ("not_audited", "orphan", "no_trace_id", "pending_full", "revoked")


class ReviewSink(Protocol):
    def write(self, record: ReviewRecord) -> None: ...


class CalibrationMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.reviews = Counter(
            "ragpulse_calibration_reviews_total",
            "Human reviews matched to an audited judgment: the hallucination decision of the judge and of the human "
            "(the confusion counts), by judge, judge model, prompt version, answer length bucket and self-judging.",
            ["judge", "judge_model", "prompt_version", "answer_length", "self_judging", "judge_verdict", "human_verdict"],
            registry=registry,
        )
        self.score_agreement = Counter(
            "ragpulse_calibration_score_agreement_total",
            "Matched reviews by how close the judge's 1-5 score is to the human's: exact, within_one, off.",
            ["judge", "judge_model", "prompt_version", "metric", "agreement"],
            registry=registry,
        )
        self.unmatched = Counter(
            "ragpulse_calibration_reviews_unmatched_total",
            "Reviews that met no audited judgment: not_audited (the trace was judged outside the audit), orphan (no "
            "judgment within the window), no_trace_id, pending_full (evicted while waiting), revoked (waiting when its "
            "Kafka partition went to another replica).",
            ["reason"], registry=registry,
        )
        self.audited = Counter(
            "ragpulse_calibration_audited_total", "Judgments queued for human review (the audit sample).", ["judge"],
            registry=registry,
        )
        self.audited_evicted = Counter(
            "ragpulse_calibration_audited_evicted_total",
            "Audited judgments forgotten by the join before their review window ended (max_audited).",
            registry=registry,
        )
        self.waiting_reviews = Gauge("ragpulse_calibration_pending_reviews", "Reviews waiting for their judgment.",
                                     registry=registry)
        self.waiting_judgments = Gauge("ragpulse_calibration_audited_waiting",
                                       "Audited judgments held by the join, waiting for a review.", registry=registry)
        self.threshold = Gauge("ragpulse_calibration_agreement_threshold_ratio",
                               "calibration.agreement_threshold: agreement below it means the judge needs work.",
                               registry=registry)
        self.min_reviews = Gauge("ragpulse_calibration_min_reviews",
                                 "calibration.min_reviews: reviews of each class needed before a verdict on the judge.",
                                 registry=registry)
        for reason in UNMATCHED:  # from the first scrape, so rate() tells zero from no data
            self.unmatched.labels(reason=reason)


def _key(trace_id: str) -> bytes:
    """A fixed-size identity: the join never holds the producer's (possibly huge) string."""
    return hashlib.blake2b(trace_id.encode(), digest_size=16).digest()


class Calibrator(Listener):
    """Told of review events by the feedback join, and of every judgment record by the judge workers.
    Reviews that come before their judgment wait in the join (its pending table), not here."""

    def __init__(
        self,
        options: CalibrationConfig,
        registry: CollectorRegistry,
        sink: ReviewSink,
        *,
        pending_reviews: Callable[[], int],  # the reviews the join holds for their judgment
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._metrics = metrics = CalibrationMetrics(registry)
        metrics.threshold.set(options.agreement_threshold)
        metrics.min_reviews.set(options.min_reviews)
        metrics.waiting_reviews.set_function(pending_reviews)
        self._sink = sink
        self._review_window = options.review_window_seconds
        self._max_audited = options.max_audited
        self._clock = clock
        self._wall_clock = wall_clock
        self._audited: OrderedDict[bytes, tuple[float, AuditedJudgment]] = OrderedDict()
        metrics.waiting_judgments.set_function(lambda: len(self._audited))

    def restore(self, entries: Iterable[tuple[str, float, AuditedJudgment]]) -> int:
        """Audited judgments still waiting for a review (trace id, age in seconds, judgment), e.g. from
        the review store after a restart; the oldest first. Returns how many were taken."""
        now, taken = self._clock(), 0
        for trace_id, age, judgment in entries:
            if age < self._review_window:
                self._hold(_key(trace_id), now - age, judgment)
                taken += 1
        return taken

    def review(self, event: FeedbackEvent) -> bool:
        """A review event: matched to its audited judgment; False when that is not (yet) here."""
        if not event.trace_id:
            self._metrics.unmatched.labels(reason="no_trace_id").inc()
            return True
        held = self._audited.get(_key(event.trace_id))
        if held is not None and self._clock() - held[0] < self._review_window:
            self._match(event.trace_id, held[1], event)  # kept: a second reviewer counts too
            return True
        return False

    def review_expired(self, reason: str) -> None:
        self._metrics.unmatched.labels(reason=reason).inc()

    def reviews_judged(self, trace_id: str, reviews: list[FeedbackEvent]) -> None:
        held = self._audited.get(_key(trace_id))
        for review in reviews:
            if held is not None:
                self._match(trace_id, held[1], review)
            else:
                self._metrics.unmatched.labels(reason="not_audited").inc()

    def judged(self, record: JudgmentRecord) -> None:
        if record.audit and record.groundedness is not None:
            self._metrics.audited.labels(judge=record.judge).inc()
            self._hold(_key(record.trace_id), self._clock(), AuditedJudgment.of(record))

    def _hold(self, key: bytes, since: float, judgment: AuditedJudgment) -> None:
        audited = self._audited
        audited.pop(key, None)
        audited[key] = (since, judgment)
        now = self._clock()
        while audited and now - next(iter(audited.values()))[0] >= self._review_window:
            audited.popitem(last=False)  # its review window is over
        while len(audited) > self._max_audited:
            audited.popitem(last=False)
            self._metrics.audited_evicted.inc()

    def _match(self, trace_id: str, judgment: AuditedJudgment, review: FeedbackEvent) -> None:
        scores = review.scores or ReviewScores()
        metrics, j = self._metrics, judgment
        if scores.groundedness is not None:
            metrics.reviews.labels(j.judge, j.judge_model, j.prompt_version, j.answer_length, str(j.self_judging).lower(),
                                   verdict_of(j.groundedness), verdict_of(scores.groundedness)).inc()
            metrics.score_agreement.labels(j.judge, j.judge_model, j.prompt_version, "groundedness",
                                           score_agreement(j.groundedness, scores.groundedness)).inc()
        if scores.answer_relevancy is not None and j.answer_relevancy is not None:
            metrics.score_agreement.labels(j.judge, j.judge_model, j.prompt_version, "answer_relevancy",
                                           score_agreement(j.answer_relevancy, scores.answer_relevancy)).inc()
        reviewer = review.user_id or (review.attributes.get("reviewer") if isinstance(review.attributes.get("reviewer"), str) else None)
        self._sink.write(ReviewRecord(
            trace_id=trace_id, reviewed_at=review.timestamp if isinstance(review.timestamp, float) else self._wall_clock(),
            groundedness=scores.groundedness, answer_relevancy=scores.answer_relevancy,
            claims=[{"claim": c.claim, "verdict": c.verdict} for c in scores.claims], comment=review.comment,
            reviewer=reviewer,
        ))
