"""The weekly review: the N worst bad cases of a period, chosen to cover the stages (retrieval, generation,
knowledge gap, over-refusal), each with what a person needs to judge it and how to record that judgment.

Within a stage the worst come first: the lowest groundedness, then the most user signals, then the newest.
The stages take turns, so a period of many retrieval failures still shows its few over-refusals. A case in the
audit sample (the review queue) is reviewed with `ragpulse review`; its review then counts in calibration. Any
case can take a review as a feedback event of kind `review` (docs/events.md); one outside the audit sample is
counted as unmatched (`not_audited`) and calibrates nothing.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import msgspec

from ragpulse.judging import STAGES

DEFAULT_CASES = 8
CANDIDATES_PER_STAGE = 200  # read a stage's worst among its newest this many: bounded work on a large store


def worst_cases(db: sqlite3.Connection, *, since: float, until: float, app: str | None = None,
                route: str | None = None, limit: int = DEFAULT_CASES) -> list[dict[str, Any]]:
    by_stage = {stage: sorted(_stage_records(db, stage, since, until, app, route), key=_badness) for stage in STAGES}
    chosen: list[dict[str, Any]] = []
    while len(chosen) < limit and any(by_stage.values()):
        for stage in STAGES:
            if by_stage[stage] and len(chosen) < limit:
                chosen.append(by_stage[stage].pop(0))
    return [_case(db, record) for record in chosen]


def _stage_records(db: sqlite3.Connection, stage: str, since: float, until: float, app: str | None,
                   route: str | None) -> list[dict[str, Any]]:
    conditions = [("stage = ?", stage), ("judged_at >= ?", since), ("judged_at < ?", until), ("app = ?", app),
                  ("route = ?", route)]
    given = [(clause, value) for clause, value in conditions if value is not None]
    rows = db.execute(f"SELECT record FROM badcases WHERE {' AND '.join(c for c, _ in given)} "
                      "ORDER BY judged_at DESC LIMIT ?", [*(value for _, value in given), CANDIDATES_PER_STAGE])
    return [msgspec.json.decode(row[0]) for row in rows]


def _badness(record: dict[str, Any]) -> tuple[int, int, float]:
    grounded = record.get("groundedness")
    return (6 if grounded is None else grounded, -len(record.get("signals") or []), -record["judged_at"])


def _reason(record: dict[str, Any]) -> str:
    """The judge's reason for the failed stage: the refusal's or the groundedness verdict's, else relevancy's."""
    if record["fallback"]:
        return record["context_relevance_reason"]
    if record["hallucination"]:
        return record["groundedness_reason"]
    wrong = [c for c in record.get("citations") or [] if c["verdict"] == "unsupported"]
    if wrong and (record.get("answer_relevancy") or 5) > 2:
        return f"wrong citation: {wrong[0]['sentence']!r} {wrong[0].get('reason') or ''}".strip()
    return record["answer_relevancy_reason"]


def _case(db: sqlite3.Connection, record: dict[str, Any]) -> dict[str, Any]:
    row = db.execute("SELECT reviewed_at, review FROM review_queue WHERE trace_id = ?", (record["trace_id"],)).fetchone()
    human = None if row is None or row[1] is None else json.loads(row[1])
    feedback = {"type": "feedback", "kind": "review", "trace_id": record["trace_id"],
                "scores": {"groundedness": "1-5", "answer_relevancy": "1-5"}}
    return {
        "trace_id": record["trace_id"], "judged_at": record["judged_at"], "stage": record["stage"],
        "app": record["app"], "route": record["route"], "release": record["release"],
        "question": record["query"], "answer": record["answer"],
        "chunks": [{"id": c.get("id"), "text": c.get("text"), "relevance": c.get("relevance")} for c in record["chunks"]],
        "judge": f"{record['judge']} ({record['judge_model']}, {record['prompt_version']})",
        "groundedness": record["groundedness"], "answer_relevancy": record["answer_relevancy"],
        "context_relevance": record["context_relevance"], "reason": _reason(record),
        "signals": record.get("signals") or [],
        "audited": row is not None, "human": human,
        "record_verdict": ("ragpulse review (it is in the audit queue)" if row is not None and human is None else
                           None if human is not None else
                           f"POST /v1/feedback {json.dumps(feedback)} (outside the audit sample: counted as "
                           "not_audited, no calibration)"),
    }
