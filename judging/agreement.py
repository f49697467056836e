"""Judge against human: the audited judgment and its review, how they agree, and the calibration report
computed from the review store's rows (what `ragpulse calibration` and /api/v1/calibration show).

Plain data and sums, importable by the judging side and the review store alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragpulse.judging.estimators import Confusion, rogan_gladen, wilson
from ragpulse.judging.records import JudgmentRecord
from ragpulse.judging.verdicts import HALLUCINATION_AT_MOST

# Answer length in characters (so Chinese and English alike): short under 150, long over 500.
LENGTH_BUCKETS = ((150, "short"), (500, "medium"))
LENGTHS = ("short", "medium", "long")
SCORE_AGREEMENT = ("exact", "within_one", "off")


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


# -- the calibration report, from the review store's rows -------------------------------------

@dataclass(frozen=True, slots=True)
class ReviewedRow:
    """One audited judgment with its human review (from results/review_queue.py)."""

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
