"""Retrieval metrics of one probed question against its labelled relevant chunks (docs/statistics.md, Probes).

The ranking is the order the service returned its chunks in (ties in score keep that order); an
id retrieved twice counts once, at its first rank; a chunk without an id is never relevant.

- hit@k: 1 when any of the first k is relevant;
- reciprocal rank: 1/i for the first relevant chunk at rank i <= k, else 0 (MRR is its mean);
- recall@k: relevant ids among the first k over all relevant ids;
- precision@k: relevant ids among the first k over k, also when fewer than k came back (a
  service that returns two chunks of which one is relevant has precision@5 = 0.2);
- nDCG@k: DCG@k = sum over i <= k of (2^g(r_i) - 1) / log2(i + 1), over the same for the ideal
  order of the labelled grades (binary relevance: g = 1).

A question without relevant chunks (expect_fallback) has no retrieval metrics: None, and it is
left out of the means.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RetrievalScores:
    hit: float
    reciprocal_rank: float
    recall: float
    precision: float
    ndcg: float


def score(retrieved: Sequence[str | None], grades: Mapping[str, int], k: int) -> RetrievalScores | None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not grades:
        return None
    seen: set[str] = set()
    gains: list[int] = []  # the grade at each of the first k ranks (0: not relevant, or seen before)
    for chunk_id in retrieved[:k]:
        grade = grades.get(chunk_id, 0) if chunk_id is not None and chunk_id not in seen else 0
        if chunk_id is not None:
            seen.add(chunk_id)
        gains.append(grade)
    found = sum(1 for gain in gains if gain)
    first = next((rank for rank, gain in enumerate(gains, 1) if gain), None)
    ideal = sorted(grades.values(), reverse=True)[:k]
    return RetrievalScores(
        hit=1.0 if found else 0.0,
        reciprocal_rank=1.0 / first if first else 0.0,
        recall=found / len(grades),
        precision=found / k,
        ndcg=_dcg(gains) / _dcg(ideal),
    )


def _dcg(gains: Sequence[int]) -> float:
    return sum((2**gain - 1) / math.log2(rank + 1) for rank, gain in enumerate(gains, 1))
