"""The local judge on one question, answer and chunks, with a cache of its own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.judging.verdicts import Judgment


def judged(question: str, answer: str, *chunks: str) -> Judgment:
    return LocalJudge(CollectorRegistry(), cache_entries=100, cache_max_bytes=10_000_000).judge(
        TraceEvent(trace_id="t", query=question, answer=answer, chunks=[Chunk(text=text) for text in chunks]))


# a claim's verdicts that fault it (the others: supported, uncertain)
FAULTS = ("contradicted", "not_in_context")


def verdicts(judgment: Judgment) -> list[str]:
    return [c.verdict for c in judgment.claims]
