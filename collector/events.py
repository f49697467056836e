"""The event contract, v1: trace and feedback events.

The structs decode and type-check JSON in one pass (msgspec). Checks that need
configuration (size limits) or several fields at once live in
`ragpulse.collector.decode`. Unknown top-level fields are ignored so producers
can add fields before ragpulse knows them; free-form data belongs in
`attributes`, which is kept but never becomes a metric label.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, TypeAlias

import msgspec

# Ids and label values are short in every real producer; the bound keeps what ragpulse holds
# per trace (dedup, joins, label caches) small whatever a client sends.
MAX_ID_CHARS = 256
# Counts beyond 2^53 - 1 cannot be held exactly by a float (Prometheus samples, JSON readers).
MAX_COUNT = 2**53 - 1
Id = Annotated[str, msgspec.Meta(max_length=MAX_ID_CHARS)]
NonEmptyId = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID_CHARS)]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
# An OpenTelemetry span id: 8 bytes in lower-case hex, not all zero.
SpanId = Annotated[str, msgspec.Meta(pattern="^(?!0{16})[0-9a-f]{16}$")]
# RFC 3339 with an offset, or epoch milliseconds. Normalised to epoch seconds (float).
Timestamp: TypeAlias = Annotated[datetime, msgspec.Meta(tz=True)] | float

FeedbackKind = Literal[
    "thumbs", "rating", "escalation", "copy", "citation_click", "regenerate", "abandon", "review"
]
FEEDBACK_KINDS: tuple[str, ...] = FeedbackKind.__args__  # type: ignore[attr-defined]


class Chunk(msgspec.Struct, kw_only=True, omit_defaults=True):
    text: str | None = None  # None: the source did not report the text (no groundedness is judged on it)
    id: Id | None = None
    score: float | None = None
    rank: NonNegativeInt | None = None  # defaults to the chunk's position in the list
    source: str | None = None
    updated_at: Timestamp | None = None
    # Which retrieval of the trace returned it (0-based, in the order they ran), when it made several.
    retrieval: NonNegativeInt | None = None


class Usage(msgspec.Struct, kw_only=True, omit_defaults=True):
    prompt_tokens: NonNegativeInt = 0
    completion_tokens: NonNegativeInt = 0
    # LLM calls of the trace that reported no usage: above 0 the counts are partial, never the whole.
    unreported_calls: NonNegativeInt = 0


# An answer's structured citations: one entry a cited sentence, each naming at most this many chunks; the
# parser of inline markers (scorers/citations.py) stops at the same count per answer.
MAX_CITATIONS = 256
Rank = Annotated[int, msgspec.Meta(ge=1, le=MAX_COUNT)]


class EventCitation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the app knows an answer cites (as OpenAI file citations or Anthropic's citations report it)."""

    text: str | None = None  # the cited span or sentence of the answer
    chunk_ids: Annotated[list[Id], msgspec.Meta(max_length=MAX_CITATIONS)] = []  # matched to chunks[].id
    ranks: Annotated[list[Rank], msgspec.Meta(max_length=MAX_CITATIONS)] = []  # 1-based positions in chunks


class RunError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Why a run gave no answer: the error's type (an exception class, an HTTP status), the span (operation) that
    failed, and its message."""

    type: Id
    span: Id | None = None
    message: Annotated[str, msgspec.Meta(max_length=1024)] | None = None


class TraceEvent(msgspec.Struct, tag_field="type", tag="trace", kw_only=True, omit_defaults=True):
    trace_id: NonEmptyId
    query: str
    # Required unless `error` says why the run gave none (collector/decode.py): a failed run has no answer.
    answer: str | None = None
    timestamp: Timestamp | None = None
    session_id: Id | None = None
    user_id: Id | None = None
    app: Id | None = None
    route: Id | None = None
    intent: Id | None = None  # accepted as a synonym of route
    model: Id | None = None
    release: Id | None = None
    # None: the service did not report retrieval; []: it retrieved nothing.
    chunks: list[Chunk] | None = None
    fallback: bool | None = None
    latency_ms: NonNegative | None = None
    usage: Usage | None = None
    attributes: dict[str, Any] = {}
    # An agent's searches: what each retrieval was asked (the query is the user's question, not these).
    retrieval_queries: list[str] | None = None
    # Retrievals the trace made (None: not reported; with chunks, at least one).
    retrievals: NonNegativeInt | None = None
    # The answer's citations as the app structured them; None: parsed from the answer's markers ("[1]").
    citations: Annotated[list[EventCitation], msgspec.Meta(max_length=MAX_CITATIONS)] | None = None
    # Where the verdicts go back to (config interop): the span that produced the answer (OTLP: the LLM or agent
    # span whose gen_ai.response.id is response_id, else the trace's root; HTTP and Kafka: as the producer gives
    # it), and the answering model's response id.
    span_id: SpanId | None = None
    response_id: Id | None = None
    # A failed run: what failed. Counted, never scored or judged.
    error: RunError | None = None
    # What else the model read before answering besides the chunks: tool results that are no retrieval (a
    # calculator's, an API's). Judged against, never counted as retrieval.
    context: list[Chunk] | None = None


Score = Annotated[int, msgspec.Meta(ge=1, le=5)]


class ReviewClaim(msgspec.Struct, kw_only=True, omit_defaults=True):
    claim: str
    verdict: Literal["supported", "contradicted", "not_in_context"]


class ReviewScores(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A human review's rubric scores (kind `review`), on the judge's scales."""

    groundedness: Score | None = None
    answer_relevancy: Score | None = None
    claims: list[ReviewClaim] = []


class FeedbackEvent(
    msgspec.Struct, tag_field="type", tag="feedback", kw_only=True, omit_defaults=True
):
    kind: FeedbackKind
    trace_id: Id | None = None
    session_id: Id | None = None
    timestamp: Timestamp | None = None
    value: Id | Annotated[int, msgspec.Meta(ge=-MAX_COUNT, le=MAX_COUNT)] | float | bool | None = None
    comment: str | None = None
    feedback_id: Id | None = None  # producer's id, used for duplicate detection when given
    scores: ReviewScores | None = None  # kind review only
    user_id: Id | None = None
    attributes: dict[str, Any] = {}


Event: TypeAlias = TraceEvent | FeedbackEvent


class LexicalScores(msgspec.Struct, frozen=True):
    """What the lexical scorer (scorers/lexical.py) finds, carried on the envelope for the judge sampler."""

    groundedness: float | None  # share of the answer's units found in the chunks
    answer_relevancy: float | None  # share of the question's units found in the answer
    context_relevance: float | None  # share of the question's units found in the chunks
    number_mismatch: bool  # the answer has a number (with its unit) that no chunk has


@dataclass(slots=True)
class Envelope:
    """One accepted event on its way through the pipeline, with what stages learned of it."""

    event: Event
    source: str
    received_at: float
    identity: int  # the dedup key, a fixed-size digest: see ragpulse.collector.dedup.event_identity
    truncated: tuple[str, ...] = ()
    size: int = 0  # bytes the event takes, as decoded or estimated: what byte budgets count
    fallback_rule: str | None = None  # set by the fallback stage; None: not a fallback
    local_scores: LexicalScores | None = None  # set by the local scorers stage, read by the judge sampler
    # The answer without its citation markers, set by the citations stage when it cites ("[1]" is no number to
    # the local scorers); None: the answer as sent.
    answer_text: str | None = None
    # The Kafka partition it was read from (None: another source). The feedback join keeps a partition's answers
    # and feedback together: they meet only when from the same partition, and leave when it goes to another replica.
    partition: int | None = None


def json_schema(event_type: str) -> dict[str, Any]:
    """The published JSON Schema of one event type (collector/schemas/<type>.v1.json)."""
    struct = {"trace": TraceEvent, "feedback": FeedbackEvent}[event_type]
    schema = msgspec.json.schema(struct)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:ragpulse:schema:{event_type}:v1",
        "title": f"ragpulse {event_type} event, v1",
        **schema,
    }
