"""Judging's one exit: a judged trace is built once and handed to each consumer in turn.

Like the pipeline's exporters: the consumers (metrics, the result writer, the calibrator, the feedback
join) are registered in one place, the app's wiring, in the order they run; a consumer that fails costs
its own part of this judgment, counted, never the others'.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog
from prometheus_client import CollectorRegistry

from ragpulse.collector.pipeline import PipelineMetrics
from ragpulse.collector.telemetry.shared import shared
from ragpulse.judging.records import JudgmentRecord, RecordChunk
from ragpulse.judging.sampler import JudgeItem
from ragpulse.judging.verdicts import Judgment

log = structlog.get_logger("ragpulse.judge")


@dataclass(frozen=True, slots=True)
class JudgedTrace:
    item: JudgeItem
    judgment: Judgment
    stage: str | None  # the failed stage of a bad case (judging/attribution.py), None for a good answer
    judge: str  # llm, local or rule
    record: JudgmentRecord  # what the sinks keep: built once, with the signals the join had seen
    record_size: int  # an estimate of what the record holds (judging/records.py), for the writer's byte cap

    @property
    def refusal(self) -> bool:
        """The service fell back, or the local judge found that the answer claims nothing and declines: either is
        a refusal, never a hallucination."""
        return self.item.fallback or self.judgment.refusal


Consumer = Callable[[JudgedTrace], None]
REFUSAL_REASON = "a refusal (fallback): not judged for groundedness, never a hallucination"


def build_record(item: JudgeItem, judgment: Judgment, stage: str | None, judge: str, cost: float,
                 audit: bool, signals: list[str] | None = None) -> JudgmentRecord:
    event = item.event
    relevance = judgment.chunk_relevance
    refused = item.fallback or judgment.refusal  # JudgedTrace.refusal
    chunks = [
        RecordChunk(text=chunk.text, id=chunk.id, relevance=relevance[i] if i < len(relevance) else None)
        for i, chunk in enumerate(event.chunks or [])
    ]
    return JudgmentRecord(
        trace_id=event.trace_id, judged_at=time.time(),
        app=event.app, route=event.route, model=event.model, release=event.release, session_id=event.session_id,
        priority=item.priority, sample=item.sample, stratum=item.stratum, reasons=list(item.reasons), audit=audit,
        fallback=refused, stage=stage, bad=stage is not None,
        query=event.query, answer=event.answer, chunks=chunks,
        # A refusal asserts nothing to be grounded: never a hallucination; its stage says whether it was right
        # to refuse (knowledge_gap: nothing relevant retrieved) or not (over_refusal).
        groundedness=None if refused else judgment.groundedness,
        hallucination=False if refused else judgment.hallucination,
        supported_share=None if refused else judgment.supported_share,
        claims=[] if refused else judgment.claims,
        groundedness_reason=REFUSAL_REASON if item.fallback else judgment.groundedness_reason,
        answer_relevancy=judgment.answer_relevancy, answer_relevancy_reason=judgment.answer_relevancy_reason,
        context_relevance=judgment.context_relevance, context_relevance_reason=judgment.context_relevance_reason,
        error=judgment.error, raw_output=judgment.raw_output,
        judge=judge, judge_model=judgment.judge_model, prompt_version=judgment.prompt_version,
        prompt_tokens=judgment.prompt_tokens, completion_tokens=judgment.completion_tokens, cost=cost,
        signals=signals or [],
        verdict="refusal" if refused else judgment.groundedness_verdict,
        confidence=None if refused else judgment.confidence,
        retrieval_queries=event.retrieval_queries or [],
        search_relevance=judgment.search_relevance, search_relevance_reason=judgment.search_relevance_reason,
        used_chunks=None if refused else judgment.used_chunks,
        citations=[] if refused else judgment.citations,
        span_id=event.span_id, response_id=event.response_id,
    )


class JudgmentExit:
    def __init__(self, consumers: Sequence[tuple[str, Consumer]], registry: CollectorRegistry) -> None:
        self._consumers = list(consumers)
        self._failures = shared(registry, PipelineMetrics).stage_errors.labels(stage="judge")  # a consumer's failure

    def __call__(self, judged: JudgedTrace) -> None:
        for name, consume in self._consumers:
            try:
                consume(judged)
            except Exception:
                self._failures.inc()
                log.exception("a judgment consumer failed", consumer=name, trace_id=judged.item.event.trace_id)
