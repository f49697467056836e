"""What a judgment is: the verdicts on one trace (claims, scores, cited sentences), their thresholds, and
the types a judgment record carries.

Apart from the judges, so that what reads judgments and records (the sinks, the bad-case store, the rate
estimators) needs neither judge nor the scorers the judges use.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Annotated, Literal

import msgspec

HALLUCINATION_AT_MOST = 2  # groundedness score
# The groundedness verdicts that judged an answer (error did not): the denominator of every hallucination rate.
# "uncertain" is in it: an answer the judge could not fault counts against no rate, never for it.
JUDGED_VERDICTS = ("hallucination", "grounded", "uncertain")
IRRELEVANT_AT_MOST = 2  # answer relevancy score
RELEVANT_CHUNK_AT_LEAST = 2  # chunk relevance 0-3
# Cited sentences judged per answer, the rest counted as not judged: one answer's citation verdicts are
# bounded (an answer may have up to 256 cited sentences: scorers/citations.py).
MAX_JUDGED_CITATIONS = 32

ClaimVerdict = Literal["supported", "contradicted", "not_in_context", "uncertain"]
_NOT_WORD = re.compile(r"[\W_]+")


class Claim(msgspec.Struct):
    claim: str
    verdict: ClaimVerdict
    reason: str = ""
    chunks: list[Annotated[int, msgspec.Meta(ge=0)]] = []  # the chunks (indices) that support it


class CitationVerdict(msgspec.Struct):
    """A cited sentence of the answer: the chunks it cites (indices; markers naming no retrieved chunk are
    `dangling`) and whether those chunks, not any others, support it: supported, unsupported, uncertain (the
    judge could not tell), dangling (it cites no retrieved chunk) or error (the judge gave no verdict)."""

    sentence: str
    chunks: list[int]
    dangling: list[str]
    verdict: Literal["supported", "unsupported", "uncertain", "dangling", "error"]
    reason: str = ""


@dataclass(slots=True)
class Judgment:
    """The verdicts on one trace, or the reason there are none (`error`): failures are data."""

    trace_id: str
    judge_model: str  # "local" for the lexical judge, "rule" for a fallback with nothing retrieved
    prompt_version: str
    groundedness: int | None = None
    claims: list[Claim] = field(default_factory=list)
    groundedness_reason: str = ""
    answer_relevancy: int | None = None
    answer_relevancy_reason: str = ""
    chunk_relevance: list[int | None] = field(default_factory=list)  # 0-3 per chunk, in chunk order
    context_relevance_reason: str = ""
    # The judge's confidence in its groundedness verdict, 0-1 (the local judge's; an LLM judge reports none)
    confidence: float | None = None
    # The judge's own abstention on the answer (the local judge's model: its probability within the uncertain
    # band); None: an answer is uncertain when one of its claims is (an LLM judge's).
    uncertain: bool | None = None
    # The answer claims nothing and declines (the local judge's reading, scorers/refusal.py): a refusal like a
    # fallback, never a hallucination (judging/exit.py); groundedness stays None.
    refusal: bool = False
    # The chunks (indices) that support at least one claim: context utilisation; None when the judge could
    # not say (an error, a refusal, or an LLM judge that named no chunks for its supported claims).
    used_chunks: list[int] | None = None
    citations: list[CitationVerdict] = field(default_factory=list)  # the answer's cited sentences judged
    citations_not_judged: int = 0  # cited sentences past MAX_JUDGED_CITATIONS: no verdict
    search_relevance: int | None = None  # 1-5: the agent's searches as a reading of the question
    search_relevance_reason: str = ""
    error: str | None = None  # an exception type, or "invalid_output"
    raw_output: str | None = None  # kept when it could not be parsed, for inspection
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # HTTP requests made, retries included
    seconds: float = 0.0

    @property
    def hallucination(self) -> bool:
        return self.groundedness is not None and self.groundedness <= HALLUCINATION_AT_MOST

    @property
    def groundedness_verdict(self) -> str:
        """hallucination, uncertain (a claim the judge could neither support nor fault: never a hallucination),
        grounded, refusal (the answer claims nothing and declines), or error when there is no score."""
        if self.refusal:
            return "refusal"
        if self.groundedness is None:
            return "error"
        if self.hallucination:
            return "hallucination"
        if self.uncertain is not None:
            return "uncertain" if self.uncertain else "grounded"
        return "uncertain" if any(c.verdict == "uncertain" for c in self.claims) else "grounded"

    @property
    def supported_share(self) -> float | None:
        if not self.claims:
            return None
        return sum(c.verdict == "supported" for c in self.claims) / len(self.claims)

    @property
    def context_relevance(self) -> int | None:
        """The best chunk's relevance (0-3): could the answer have been found in the context?"""
        known = [r for r in self.chunk_relevance if r is not None]
        return max(known) if known else None


def searches_differ(question: str, searches: Sequence[str] | None) -> bool:
    """Whether an agent's searches are its own reading of the question: one at least is not the question itself,
    compared without case, whitespace and punctuation. A plain retriever searches with the question: there is
    nothing to judge (it would read 5 every time)."""
    if not searches:
        return False
    asked = _NOT_WORD.sub("", question.casefold())
    return any(_NOT_WORD.sub("", search.casefold()) != asked for search in searches)


def _held(value: object) -> int:
    if isinstance(value, list):
        return sys.getsizeof(value) + sum(map(_held, value))
    if isinstance(value, msgspec.Struct):
        return sys.getsizeof(value) + sum(_held(getattr(value, name)) for name in value.__struct_fields__)
    return sys.getsizeof(value)


def judgment_bytes(judgment: Judgment) -> int:
    """An upper estimate of what a judgment holds in memory, in bytes (shared objects counted each time):
    what a cache of judgments counts against its byte cap."""
    return sys.getsizeof(judgment) + sum(_held(getattr(judgment, f.name)) for f in fields(judgment))
