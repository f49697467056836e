"""The judgment record: what a bad-case review needs, built once and handed to every sink.

A record carries the trace's labels and content (question, answer, chunks with their judged
relevance), every verdict with its reason, the attributed stage, and what the judgment cost
(judge model, prompt version, tokens, cost). `bad` is true when a stage was attributed.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from sys import getsizeof

import msgspec

from ragpulse.judging.verdicts import CitationVerdict, Claim


class RecordChunk(msgspec.Struct, omit_defaults=True):
    text: str | None
    id: str | None = None
    relevance: int | None = None


class JudgmentRecord(msgspec.Struct):
    trace_id: str
    judged_at: float
    app: str | None
    route: str | None
    model: str | None
    release: str | None
    session_id: str | None
    priority: str
    sample: str  # routine, targeted or feedback (judging/sampler.py)
    stratum: str
    reasons: list[str]  # every class the trace qualified for, whichever sampled it
    audit: bool  # in the random audit of the routine sample: queued for a human review
    fallback: bool  # a refusal: the service fell back, or the local judge found the answer claims nothing and declines
    stage: str | None
    bad: bool
    query: str
    answer: str
    chunks: list[RecordChunk]
    groundedness: int | None
    hallucination: bool
    supported_share: float | None
    claims: list[Claim]
    groundedness_reason: str
    answer_relevancy: int | None
    answer_relevancy_reason: str
    context_relevance: int | None
    context_relevance_reason: str
    error: str | None
    raw_output: str | None
    judge: str  # llm, local or rule
    judge_model: str
    prompt_version: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    # What users did about the answer (feedback/satisfaction.py): those known when it was judged; in the
    # bad-case store, later ones are appended.
    signals: list[str] = []
    # The groundedness verdict: grounded, hallucination, uncertain (the judge could not tell: never a
    # hallucination), error, or refusal for a fallback; and the judge's confidence in it, 0-1 (None: the
    # judge reports none, as an LLM judge does).
    verdict: str = ""
    confidence: float | None = None
    # An agent's searches (TraceEvent.retrieval_queries): the question is `query`; and how well they read it, 1-5.
    retrieval_queries: list[str] = []
    search_relevance: int | None = None
    search_relevance_reason: str = ""
    # The chunks (indices into `chunks`) that support at least one claim: None when the judge could not say.
    used_chunks: list[int] | None = None
    # The answer's cited sentences, each with the chunks it cites and whether they support it.
    citations: list[CitationVerdict] = []
    # The span that produced the answer (an OpenTelemetry span id: the event's span_id) and the answering model's
    # response id, for outputs that put the verdicts back on the trace (config interop).
    span_id: str | None = None
    response_id: str | None = None


class ReviewRecord(msgspec.Struct):
    """A human review of a judged trace, for the review queue's store (`ragpulse calibration`)."""

    trace_id: str
    reviewed_at: float
    groundedness: int | None
    answer_relevancy: int | None
    claims: list[dict[str, str]]
    comment: str | None
    reviewer: str | None


class SignalRecord(msgspec.Struct):
    """A satisfaction signal on an answer after its judgment: appended to its bad-case record."""

    trace_id: str
    signal: str


class CandidateRecord(msgspec.Struct):
    """A production answer a user signalled on, as a golden-set candidate for a person to review:
    `positive` (liked: its answer a candidate expected answer) or `to_label` (disliked or escalated)."""

    trace_id: str
    at: float  # epoch seconds of the signal
    kind: str
    signal: str
    query: str
    answer: str
    chunks: list[dict[str, str | None]]  # id and text of each retrieved chunk
    app: str | None = None
    route: str | None = None
    release: str | None = None


Record = JudgmentRecord | ReviewRecord | SignalRecord | CandidateRecord
# What a sink makes of a record: the object to write, or None to skip it.
Select = Callable[[Record], object | None]


def judgments_only(record: Record) -> object | None:
    return record if isinstance(record, JudgmentRecord) else None


_RECORD_ALLOWANCE = 1_024  # a record's struct, its lists and its small fields
_PART_ALLOWANCE = 192  # a chunk's, a claim's or a cited sentence's struct, list slot and id
_TEXT, _CLAIM, _REASON, _SENTENCE = (attrgetter(name) for name in ("text", "claim", "reason", "sentence"))


def record_bytes(record: Record) -> int:
    """An estimate of what a queued record holds, for the result writer's byte cap: its texts as they are held
    (sys.getsizeof) and an allowance for the structs around them; 0.9x a walk of every field and 1.0-2.1x what
    a fresh copy allocates (tests/test_badcases.py), at a tenth of the walk's cost. For a record written without
    its size (the judge's own come with theirs: judged_record_bytes)."""
    size = _RECORD_ALLOWANCE
    if isinstance(record, JudgmentRecord):
        chunks, claims, cited = record.chunks, record.claims, record.citations
        size += (getsizeof(record.query) + getsizeof(record.answer) + getsizeof(record.raw_output)
                 + getsizeof(record.groundedness_reason) + getsizeof(record.answer_relevancy_reason)
                 + getsizeof(record.context_relevance_reason) + getsizeof(record.search_relevance_reason)
                 + (len(chunks) + len(claims) + len(cited)) * _PART_ALLOWANCE
                 + sum(map(getsizeof, map(_TEXT, chunks)))
                 + sum(map(getsizeof, map(_CLAIM, claims))) + sum(map(getsizeof, map(_REASON, claims))))
        if cited:
            size += sum(map(getsizeof, map(_SENTENCE, cited))) + sum(map(getsizeof, map(_REASON, cited)))
        if record.retrieval_queries or record.signals:
            size += sum(map(getsizeof, record.retrieval_queries)) + sum(map(getsizeof, record.signals))
    elif isinstance(record, CandidateRecord):
        size += (getsizeof(record.query) + getsizeof(record.answer) + len(record.chunks) * _PART_ALLOWANCE
                 + sum(getsizeof(value) for chunk in record.chunks for value in chunk.values()))
    elif isinstance(record, ReviewRecord):
        size += (getsizeof(record.comment) + len(record.claims) * _PART_ALLOWANCE
                 + sum(getsizeof(value) for claim in record.claims for value in claim.values()))
    return size


def judged_record_bytes(record: JudgmentRecord, event_bytes: int, judgment_size: int) -> int:
    """record_bytes() of a judgment's record from its parts' sizes, known already (the judge's path, where every
    judged trace makes a record): its event's size as decoded, the measure of every event budget here (the
    pipeline's and the judge's queues, the join), and the judgment's estimate (kept beside a cached judgment),
    with an allowance for the record and its chunks' structs. Like those budgets it counts the texts' encoded
    bytes: Python holds a text with one character past Latin-1 at 2 or 4 bytes a character."""
    return _RECORD_ALLOWANCE + event_bytes + judgment_size + len(record.chunks) * _PART_ALLOWANCE
