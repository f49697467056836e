"""The local judge: verdicts from the lexical scorers, for when no LLM judge is configured.

It lets `ragpulse run` and `ragpulse demo` fill every judgment series on a fresh machine, with
`judge="local"` on them so nobody mistakes them for an LLM's. The mapping from shares to the
rubrics' scores is coarse and documented here; the limits of the lexical scorers apply (a
paraphrase scores low, a wrong answer in the chunks' words scores high).
"""

from __future__ import annotations

import re

from ragpulse.collector.events import TraceEvent
from ragpulse.scorers.judge import Claim, Judgment
from ragpulse.scorers.lexical import LexicalScorer

PROMPT_VERSION = "lexical.v1"
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


def _score(share: float | None, steps: tuple[float, float, float, float]) -> int | None:
    """A share (0-1) to a 1-5 score: at or above steps[0] is 5, ..., below steps[3] is 1."""
    if share is None:
        return None
    return 5 - sum(share < step for step in steps)


def _chunk_relevance(coverage: float) -> int:
    """The share of the question's terms in a chunk to the 0-3 scale (2 and up: relevant)."""
    return 3 if coverage >= 0.5 else 2 if coverage >= 0.3 else 1 if coverage > 0 else 0


class LocalJudge:
    model = "local"
    prompt_version = PROMPT_VERSION

    def __init__(self, scorer: LexicalScorer) -> None:
        self._scorer = scorer

    def judge(self, event: TraceEvent) -> Judgment:
        judgment = Judgment(trace_id=event.trace_id, judge_model=self.model, prompt_version=self.prompt_version)
        scores = self._scorer.score(event)
        # Only traces with chunks reach a judge (a refusal without them is attributed by rule).
        assert scores is not None and scores.question is not None
        judgment.chunk_relevance = [_chunk_relevance(c) for c in self._scorer.chunk_coverage(event, scores.question)]
        groundedness = _score(scores.groundedness, (0.8, 0.6, 0.4, 0.2))
        if groundedness is not None and scores.number_mismatch:
            groundedness = min(groundedness, 2)  # a number the chunks do not have is the classic hallucination
        judgment.groundedness = groundedness
        judgment.groundedness_reason = (
            f"{scores.groundedness:.0%} of the answer's terms are in the chunks" if scores.groundedness is not None else ""
        ) + ("; a number of the answer is not in the chunks" if scores.number_mismatch else "")
        judgment.claims = self._claims(event)
        judgment.answer_relevancy = _score(scores.answer_relevancy, (0.5, 0.3, 0.15, 0.01))
        if scores.answer_relevancy is not None:
            judgment.answer_relevancy_reason = f"{scores.answer_relevancy:.0%} of the question's terms are in the answer"
        if scores.context_relevance is not None:
            judgment.context_relevance_reason = f"{scores.context_relevance:.0%} of the question's terms are in the chunks"
        return judgment

    def _claims(self, event: TraceEvent) -> list[Claim]:
        """Each sentence of the answer as a claim: supported when most of its terms are in the chunks."""
        claims = []
        for sentence in _SENTENCE.findall(event.answer):
            sentence = sentence.strip()
            if not sentence:
                continue
            single = TraceEvent(trace_id=event.trace_id, query=event.query, answer=sentence, chunks=event.chunks)
            scores = self._scorer.score(single)
            if scores is None or scores.groundedness is None:
                continue
            if scores.number_mismatch:
                claims.append(Claim(sentence, "not_in_context", "a number of it is not in the chunks"))
            else:
                reason = f"{scores.groundedness:.0%} of its terms are in the chunks"
                claims.append(Claim(sentence, "supported" if scores.groundedness >= 0.5 else "not_in_context", reason))
        return claims

