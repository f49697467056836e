"""Feedback in OTLP: `gen_ai.evaluation.result` span events (OpenTelemetry GenAI evaluations) as feedback events."""

from __future__ import annotations

from ragpulse.collector.events import FeedbackEvent, ReviewScores
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import float_value as _float
from ragpulse.sources.otlp.values import text_value as _str

EVALUATION_EVENT = "gen_ai.evaluation.result"
_RUBRIC = {"groundedness": "groundedness", "faithfulness": "groundedness",
           "relevance": "answer_relevancy", "relevancy": "answer_relevancy", "answer_relevancy": "answer_relevancy",
           "answer_relevance": "answer_relevancy"}
_POSITIVE = frozenset({"pass", "passed", "correct", "relevant", "grounded", "faithful", "good", "yes", "true"})
_NEGATIVE = frozenset({"fail", "failed", "incorrect", "not_relevant", "irrelevant", "ungrounded", "hallucinated",
                       "bad", "no", "false"})


def feedback_of(span: Span) -> tuple[list[FeedbackEvent], int]:
    """Feedback carried by a span's `gen_ai.evaluation.result` events, and how many could not be mapped.

    A score from 1 to 5 is a `review` with that value; otherwise a pass/fail-like label is a
    `thumbs` up or down; anything else (a 0-1 score without a label, say) is not mapped.
    """
    events: list[FeedbackEvent] = []
    unmapped = 0
    for event in span.events:
        if event.name != EVALUATION_EVENT:
            continue
        attrs = event.attributes
        score = _float(attrs.get("gen_ai.evaluation.score.value"))
        label = (_str(attrs.get("gen_ai.evaluation.score.label")) or "").strip().lower()
        details = {"evaluation": _str(attrs.get("gen_ai.evaluation.name")), "label": label or None, "score": score,
                   "explanation": _str(attrs.get("gen_ai.evaluation.explanation")), "span_id": span.span_id}
        details = {k: v for k, v in details.items() if v is not None}
        scores = None
        if score is not None and 1 <= score <= 5:
            kind, value = "review", score
            # The rubric the evaluation scored; another evaluation (correctness, say) is no rubric score.
            rubric = _RUBRIC.get((_str(attrs.get("gen_ai.evaluation.name")) or "").strip().lower())
            scores = ReviewScores(**{rubric: round(score)}) if rubric else ReviewScores()
        elif label in _POSITIVE or label in _NEGATIVE:
            kind, value = "thumbs", "up" if label in _POSITIVE else "down"
        else:
            unmapped += 1
            continue
        events.append(FeedbackEvent(kind=kind, trace_id=span.trace_id, value=value, scores=scores,  # type: ignore[arg-type]
                                    timestamp=event.time_unix_nano / 1e6 or None, attributes=details))
    return events, unmapped
