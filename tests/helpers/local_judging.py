"""The local judge on one question, answer and chunks, with a cache of its own."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.judging.verdicts import Judgment


def judged(question: str, answer: str, *chunks: str) -> Judgment:
    return LocalJudge(CollectorRegistry(), cache_entries=100, cache_max_bytes=10_000_000).judge(
        TraceEvent(trace_id="t", query=question, answer=answer, chunks=[Chunk(text=text) for text in chunks]))


# a claim's verdicts that fault it (the others: supported, uncertain)
FAULTS = ("contradicted", "not_in_context")


def refused(result: Judgment) -> bool:
    """A refusal with no claim, never a hallucination (the reason shown when not)."""
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason
    return True


def verdicts(judgment: Judgment) -> list[str]:
    return [c.verdict for c in judgment.claims]


@cache
def _development() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    data = Path(__file__).resolve().parent.parent / "data"
    rows = map(json.loads, (data / "refusals_dev.jsonl").read_text(encoding="utf-8").splitlines())
    return {row["id"]: row for row in rows}, json.loads((data / "refusals_kb.json").read_text(encoding="utf-8"))


def development_row(row: str) -> Judgment:
    """A row of tests/data/refusals_dev.jsonl judged over its own chunks."""
    rows, knowledge = _development()
    written = rows[row]
    return judged(written["q"], written["a"], *(knowledge[key] for key in written["chunks"]))
