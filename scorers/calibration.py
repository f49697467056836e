"""Calibration: is the judge right? Human reviews (feedback of kind `review`) meet the judgments of
the audit, a random share of the routine sample queued for review.

The calibrator holds, bounded in count, the audited judgments waiting for a review
(`review_window_seconds`, days: far longer than any trace stays in the feedback join); reviews
that come before their judgment wait in the feedback join (scorers/join.py, its pending table),
so either may come first. A match counts the hallucination decision of both (judge_verdict x
human_verdict: the confusion counts) and the score agreement, per judge, judge model and prompt
version, with the answer's length bucket (verbosity bias) and whether the judge judged its own
model's answer (self-preference). Reviews that meet no audited judgment are counted by reason.
The sums (agreement, kappa, sensitivity, specificity, the corrected rate) are computed from those
counters in PromQL, or from the review store by `ragpulse calibration` (scorers/estimators.py).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.events import FeedbackEvent, ReviewScores
from ragpulse.exporters.records import JudgmentRecord, ReviewRecord
from ragpulse.scorers.estimators import Confusion, rogan_gladen, wilson
from ragpulse.scorers.join import Listener
from ragpulse.scorers.judge import HALLUCINATION_AT_MOST

# Answer length in characters (so Chinese and English alike): short under 150, long over 500.
LENGTH_BUCKETS = ((150, "short"), (500, "medium"))
LENGTHS = ("short", "medium", "long")
SCORE_AGREEMENT = ("exact", "within_one", "off")
UNMATCHED = ("not_audited", "orphan", "no_trace_id", "pending_full")


def answer_length(answer: str) -> str:
    for limit, name in LENGTH_BUCKETS:
        if len(answer) < limit:
            return name
    return "long"


def verdict_of(groundedness: int) -> str:
    return "hallucination" if groundedness <= HALLUCINATION_AT_MOST else "grounded"


def score_agreement(judge: int, human: int) -> str:
    difference = abs(judge - human)
    return "exact" if difference == 0 else "within_one" if difference == 1 else "off"


@dataclass(frozen=True, slots=True)
class AuditedJudgment:
    judge: str
    judge_model: str
    prompt_version: str
    groundedness: int
    answer_relevancy: int | None
    answer_length: str
    self_judging: bool

    @classmethod
    def of(cls, record: JudgmentRecord) -> AuditedJudgment:
        assert record.groundedness is not None
        return cls(record.judge, record.judge_model, record.prompt_version, record.groundedness, record.answer_relevancy,
                   answer_length(record.answer), record.judge == "llm" and record.model == record.judge_model)


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
            "judgment within the window), no_trace_id, pending_full (evicted while waiting).",
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
        metrics: CalibrationMetrics,
        sink: ReviewSink,
        *,
        review_window: float,
        max_audited: int,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._metrics = metrics
        self._sink = sink
        self._review_window = review_window
        self._max_audited = max_audited
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


# -- the calibration report, from the review store's rows -------------------------------------

@dataclass(frozen=True, slots=True)
class ReviewedRow:
    """One audited judgment with its human review (from exporters/review_queue.py)."""

    judge: str
    judge_model: str
    prompt_version: str
    judge_groundedness: int
    judge_relevancy: int | None
    human_groundedness: int
    human_relevancy: int | None
    answer_length: str
    self_judging: bool


def confusion_of(rows: Sequence[ReviewedRow]) -> Confusion:
    a = b = c = d = 0
    for row in rows:
        judge = row.judge_groundedness <= HALLUCINATION_AT_MOST
        human = row.human_groundedness <= HALLUCINATION_AT_MOST
        if judge and human:
            a += 1
        elif judge:
            b += 1
        elif human:
            c += 1
        else:
            d += 1
    return Confusion(a, b, c, d)


def score_agreements(pairs: Iterable[tuple[int, int]]) -> dict[str, int]:
    tally = dict.fromkeys(SCORE_AGREEMENT, 0)
    for judge, human in pairs:
        tally[score_agreement(judge, human)] += 1
    return tally


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _summary(rows: Sequence[ReviewedRow], threshold: float, min_reviews: int) -> dict[str, Any]:
    confusion = confusion_of(rows)
    agreement = confusion.agreement
    return {
        "reviews": confusion.total,
        "confusion": {"both_hallucination": confusion.a, "judge_only": confusion.b, "human_only": confusion.c,
                      "neither": confusion.d},
        "agreement": _rounded(agreement),
        "kappa": _rounded(confusion.kappa),
        "sensitivity": _rounded(confusion.sensitivity),
        "specificity": _rounded(confusion.specificity),
        # Below the line only says something with enough reviews.
        "below_threshold": None if agreement is None or confusion.total < min_reviews else agreement < threshold,
    }


def report(rows: Sequence[ReviewedRow], routine: dict[tuple[str, str, str], tuple[int, int]], *,
           threshold: float, min_per_class: int) -> list[dict[str, Any]]:
    """Per judge, judge model and prompt version: the agreement table, kappa, sensitivity and
    specificity, score agreement, the bias cuts (answer length, self-judging) and the corrected
    hallucination rate of the routine sample (`routine`: key -> (judged, hallucinated))."""
    groups: dict[tuple[str, str, str], list[ReviewedRow]] = {}
    for row in rows:
        groups.setdefault((row.judge, row.judge_model, row.prompt_version), []).append(row)
    out = []
    for key in sorted(set(groups) | set(routine)):
        members = groups.get(key, [])
        confusion = confusion_of(members)
        judged, hallucinated = routine.get(key, (0, 0))
        observed = wilson(hallucinated, judged)
        corrected = rogan_gladen(hallucinated / judged if judged else 0.0, judged, confusion, min_per_class=min_per_class)
        out.append({
            "judge": key[0], "judge_model": key[1], "prompt_version": key[2],
            **_summary(members, threshold, min_per_class),
            "score_agreement": {
                "groundedness": score_agreements((r.judge_groundedness, r.human_groundedness) for r in members),
                "answer_relevancy": score_agreements((r.judge_relevancy, r.human_relevancy) for r in members
                                                     if r.judge_relevancy is not None and r.human_relevancy is not None),
            },
            "by_answer_length": {length: _summary([r for r in members if r.answer_length == length], threshold, min_per_class)
                                 for length in LENGTHS},
            "by_self_judging": {name: _summary([r for r in members if r.self_judging is flag], threshold, min_per_class)
                                for name, flag in (("self_judging", True), ("other", False))},
            "routine": {"judged": judged, "hallucinated": hallucinated,
                        "rate": None if observed is None else _rounded(observed.estimate),
                        "low": None if observed is None else _rounded(observed.low),
                        "high": None if observed is None else _rounded(observed.high)},
            "corrected": {"rate": _rounded(corrected.estimate), "low": _rounded(corrected.low),
                          "high": _rounded(corrected.high), "reason": corrected.reason},
        })
    return out
