"""A judgment as evaluations, one per metric its judge scored, in the terms of the OpenTelemetry GenAI
conventions' evaluation event (`gen_ai.evaluation.result`): a name, a score, a label, an explanation, an
error type. The OTLP evaluation events and the Phoenix annotations both send these.

Names are those of ragpulse_judgments_total's `metric` label. Scores are the judge's: 1-5 for groundedness,
answer and search relevancy; 0-3 for context relevance (the best retrieved chunk's); for citation accuracy
the share of the judged citations whose chunks support their sentence (0-1). A refusal (fallback) is labelled
`refusal` with no score: it asserts nothing to be grounded. Explanations quote the answer's claims, so they
are built only when content may leave (interop.include_content).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragpulse.judging import JudgmentRecord
from ragpulse.judging import IRRELEVANT_AT_MOST, RELEVANT_CHUNK_AT_LEAST

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
JUDGED_CITATIONS = ("supported", "unsupported", "dangling")


@dataclass(frozen=True, slots=True)
class Evaluation:
    name: str  # groundedness, answer_relevancy, context_relevance, search_relevance, citation_accuracy
    label: str  # grounded, hallucination, uncertain, relevant, off_question, irrelevant, accurate, inaccurate, refusal, error
    score: float | None = None
    explanation: str | None = None  # None unless content may leave
    error: str | None = None  # error.type: why the judge gave no verdict


def otel_trace_id(trace_id: str) -> int | None:
    """The trace id as OpenTelemetry's 16 bytes: 32 hex digits (a UUID's, dashes dropped), not all zero; else None."""
    if _HEX32.fullmatch(trace_id) or _UUID.fullmatch(trace_id):
        value = int(trace_id.replace("-", ""), 16)
        return value or None
    return None


def evaluations(record: JudgmentRecord, *, include_content: bool, max_chars: int) -> list[Evaluation]:
    """The evaluations of one judged trace, groundedness first."""
    def explain(text: str) -> str | None:
        return _trim(text, max_chars) if include_content and text else None

    found = [_groundedness(record, explain(_with_claims(record)))]
    if record.fallback:
        found.append(Evaluation("answer_relevancy", "refusal"))
    else:
        found.append(_scored("answer_relevancy", record.answer_relevancy, record.error,
                             explain(record.answer_relevancy_reason), IRRELEVANT_AT_MOST))
    if record.chunks:
        score = record.context_relevance
        label = "error" if score is None else "relevant" if score >= RELEVANT_CHUNK_AT_LEAST else "irrelevant"
        found.append(Evaluation("context_relevance", label, score, explain(record.context_relevance_reason),
                                (record.error or "no_verdict") if score is None else None))
    if record.search_relevance is not None:
        found.append(_scored("search_relevance", record.search_relevance, None, explain(record.search_relevance_reason),
                             IRRELEVANT_AT_MOST))
    if record.citations:
        found.append(_citations(record, include_content, max_chars))
    return found


def _groundedness(record: JudgmentRecord, explanation: str | None) -> Evaluation:
    if record.fallback:
        return Evaluation("groundedness", "refusal")
    if record.groundedness is None:
        return Evaluation("groundedness", "error", None, explanation, record.error or "no_verdict")
    return Evaluation("groundedness", record.verdict, record.groundedness, explanation)


def _scored(name: str, score: int | None, error: str | None, explanation: str | None, low_at_most: int) -> Evaluation:
    if score is None:
        return Evaluation(name, "error", None, explanation, error or "no_verdict")
    return Evaluation(name, "relevant" if score > low_at_most else "off_question", score, explanation)


def _citations(record: JudgmentRecord, include_content: bool, max_chars: int) -> Evaluation:
    judged = [c for c in record.citations if c.verdict in JUDGED_CITATIONS]
    wrong = [c for c in judged if c.verdict != "supported"]
    explanation = None
    if include_content and wrong:
        explanation = _trim("\n".join(f"[{c.verdict}] {c.sentence}" + (f": {c.reason}" if c.reason else "") for c in wrong),
                            max_chars)
    if not judged:
        return Evaluation("citation_accuracy", "uncertain", None, explanation)
    share = (len(judged) - len(wrong)) / len(judged)
    return Evaluation("citation_accuracy", "accurate" if not wrong else "inaccurate", share, explanation)


def _with_claims(record: JudgmentRecord) -> str:
    """The groundedness reason, then the claims that are not supported (the ones a reader looks for)."""
    lines = [record.groundedness_reason] if record.groundedness_reason else []
    lines += [f"[{c.verdict}] {c.claim}" + (f": {c.reason}" if c.reason else "")
              for c in record.claims if c.verdict != "supported"]
    return "\n".join(lines)


def _trim(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
