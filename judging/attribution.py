"""Which layer failed: every judged bad case gets a stage.

- retrieval: the answer is a hallucination or off the question, and no chunk is relevant;
- generation: the same, but a relevant chunk was retrieved: the model did not use it well; or an
  answer otherwise fine that cites a chunk which does not support the sentence (a wrong citation:
  the user who clicks it finds nothing);
- knowledge_gap: the service fell back and nothing relevant was retrieved;
- over_refusal: the service fell back although a relevant chunk was retrieved.
"""

from __future__ import annotations

from ragpulse.judging.verdicts import IRRELEVANT_AT_MOST, RELEVANT_CHUNK_AT_LEAST, Judgment

STAGES = ("retrieval", "generation", "knowledge_gap", "over_refusal")


def attribute(judgment: Judgment, fallback: bool) -> str | None:
    """The stage of a bad case, or None when the answer is fine or the judgment failed."""
    best_chunk = judgment.context_relevance
    relevant = best_chunk is not None and best_chunk >= RELEVANT_CHUNK_AT_LEAST
    if fallback:
        if judgment.error is not None:
            return None
        return "over_refusal" if relevant else "knowledge_gap"
    off_question = judgment.answer_relevancy is not None and judgment.answer_relevancy <= IRRELEVANT_AT_MOST
    if judgment.hallucination or off_question:
        return "generation" if relevant else "retrieval"
    if any(c.verdict == "unsupported" for c in judgment.citations):
        return "generation"
    return None
