"""Golden-set candidates from production: answers users signalled on, for a person to review.

While the sidecar runs, the feedback join tells this listener of every signal on an answer. An
answer whose event the join still keeps (judgeable: chunks with text) becomes a candidate:
`positive` on a liked answer (thumbs up, a high rating, a copy, a citation click, and a sample of
the silent accepts, `probes.candidate_silent_accept_rate`, which would otherwise be every quiet
answer), `to_label` on a disliked or escalated one (every negative signal). They go to the
candidates table through the result writer (bounded; drops counted). `ragpulse golden candidates`
exports them, and the bad-case store's judged bad cases as cases to label, in the golden-set format:
a positive's answer is a candidate expected answer and its retrieved chunks candidate relevant
chunks; a case to label has only its question. Nothing is a golden case until a person says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from ragpulse.collector.sampling import in_sample
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.feedback.satisfaction import NEGATIVE, POSITIVE
from ragpulse.feedback.tables import Listener, Turn
from ragpulse.judging import CandidateRecord
from ragpulse.results.writer import ResultWriter


class CandidateCollector(Listener):
    def __init__(self, join: FeedbackJoin, writer: ResultWriter, *, silent_accept_rate: float,
                 clock: Callable[[], float] = time.time) -> None:
        self._join = join
        self._writer = writer
        self._silent_accept_rate = silent_accept_rate
        self._clock = clock

    def signal(self, turn: Turn, signal: str) -> None:
        if signal in NEGATIVE:
            kind = "to_label"
        elif signal in POSITIVE and (signal != "silent_accept"
                                     or in_sample(turn.trace_id, self._silent_accept_rate, "golden_candidates")):
            kind = "positive"
        else:
            return
        event = self._join.peek(turn)
        if event is None:  # not judgeable, or no longer held: no text to make a case of
            return
        self._writer.write(CandidateRecord(
            trace_id=event.trace_id, at=self._clock(), kind=kind, signal=signal, query=event.query, answer=event.answer,
            chunks=[{"id": chunk.id, "text": chunk.text} for chunk in event.chunks or []],
            app=event.app, route=event.route, release=event.release,
        ))


def as_golden(records: Iterable[dict[str, Any]], bad_cases: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Candidates (CandidateRecord as stored) and bad-case records as golden-set lines, one per question and kind."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for record in records:
        key = (record["trace_id"], record["kind"])
        if key in seen:
            continue
        seen.add(key)
        case: dict[str, Any] = {"id": f"cand-{record['kind']}-{record['trace_id'][:16]}", "query": record["query"]}
        if record["kind"] == "positive":
            case["expected_answer"] = record["answer"]
            ids = [chunk["id"] for chunk in record["chunks"] if chunk.get("id")]
            if ids:
                case["relevant_chunk_ids"] = list(dict.fromkeys(ids))
        if record.get("route"):
            case["intent"] = record["route"]
        case["tags"] = ["candidate", record["kind"], record["signal"]]
        out.append(case)
    for bad in bad_cases:
        key = (bad["trace_id"], "to_label")
        if key in seen:
            continue
        seen.add(key)
        case = {"id": f"cand-to_label-{bad['trace_id'][:16]}", "query": bad["query"]}
        if bad.get("route"):
            case["intent"] = bad["route"]
        case["tags"] = ["candidate", "to_label", f"bad_case:{bad['stage']}", *bad.get("signals", [])]
        out.append(case)
    return out
