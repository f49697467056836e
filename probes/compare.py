"""Two probe runs on the same questions (before and after a change), compared question by question
(docs/statistics.md, Probes): McNemar's exact test on the hits (only the questions whose hit changed
count), a sign test on the scores (reciprocal rank, recall, precision, nDCG, correctness: only the
questions whose score changed count). Two independent proportions would ignore that the questions are the same."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

_SCORES = (("hit_rate", "hit"), ("mrr", "reciprocal_rank"), ("recall", "recall"), ("precision", "precision"),
           ("ndcg", "ndcg"))


@dataclass(frozen=True)
class Difference:
    metric: str
    before: float | None
    after: float | None
    pairs: int  # questions measured in both runs
    better: int  # questions where the after run scored higher
    worse: int
    p_value: float | None  # two-sided; None when no question changed
    test: str


def two_sided_binomial(successes: int, trials: int) -> float:
    """P(a count at least as far from trials/2 as `successes`), for a fair coin: the exact sign and McNemar test."""
    if trials == 0:
        return 1.0
    low = min(successes, trials - successes)
    tail = sum(math.comb(trials, i) for i in range(low + 1)) / 2**trials
    return min(1.0, 2 * tail)


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[Difference]:
    """Runs as `store.get` returns them."""
    first = {q["key"]: q for q in before["questions"]}
    second = {q["key"]: q for q in after["questions"]}
    shared = [key for key in first if key in second]
    out = []
    for metric, field in _SCORES:
        pairs = [(first[k]["retrieval"][field], second[k]["retrieval"][field]) for k in shared
                 if first[k]["retrieval"] is not None and second[k]["retrieval"] is not None]
        out.append(_difference(metric, pairs, "McNemar exact" if metric == "hit_rate" else "sign test"))
    pairs = [(first[k]["correctness"], second[k]["correctness"]) for k in shared
             if first[k]["correctness"] is not None and second[k]["correctness"] is not None]
    out.append(_difference("correctness", pairs, "sign test"))
    return out


def _difference(metric: str, pairs: list[tuple[float, float]], test: str) -> Difference:
    better = sum(b > a for a, b in pairs)
    worse = sum(b < a for a, b in pairs)
    return Difference(
        metric=metric,
        before=sum(a for a, _ in pairs) / len(pairs) if pairs else None,
        after=sum(b for _, b in pairs) / len(pairs) if pairs else None,
        pairs=len(pairs), better=better, worse=worse,
        p_value=two_sided_binomial(better, better + worse) if better + worse else None,
        test=test,
    )
