"""The review queue: the audit sample waiting for human review, and the reviews it got.

A sink on the result writer's thread (results/writer.py), in the SQLite file of the bad-case
store. An audited judgment becomes a row with what a reviewer needs (question, chunks, answer) in
`item` and the judge's verdict apart in `judgment`, so a review tool can hide it until the
reviewer has scored; a review fills `review`. The routine sample's verdicts are tallied per day,
judge, judge model and prompt version: the observed rate that the calibration corrects. Rows
older than the retention are deleted, and past `max_rows` the oldest go first (counted).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import msgspec

from ragpulse.judging import Record, JudgmentRecord, ReviewRecord
from ragpulse.judging import AuditedJudgment, ReviewedRow, answer_length
from ragpulse.results import badcases

_SCHEMA = """
CREATE TABLE IF NOT EXISTS review_queue (
    trace_id TEXT PRIMARY KEY,
    queued_at REAL NOT NULL,
    app TEXT, route TEXT, model TEXT, release TEXT,
    judge TEXT NOT NULL, judge_model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    item TEXT NOT NULL,
    judgment TEXT NOT NULL,
    reviewed_at REAL,
    review TEXT
);
CREATE INDEX IF NOT EXISTS review_queue_open ON review_queue (reviewed_at, queued_at);
CREATE TABLE IF NOT EXISTS routine_tally (
    day TEXT NOT NULL, judge TEXT NOT NULL, judge_model TEXT NOT NULL, prompt_version TEXT NOT NULL,
    judged INTEGER NOT NULL, hallucinated INTEGER NOT NULL,
    PRIMARY KEY (day, judge, judge_model, prompt_version)
);
"""
PURGE_EVERY_WRITES = 100


class AuditEntry(msgspec.Struct):
    """One audited trace as a reviewer gets it: content in `item`, the judge's verdict apart."""

    trace_id: str
    queued_at: float
    app: str | None
    route: str | None
    model: str | None
    release: str | None
    item: dict[str, Any]
    judgment: dict[str, Any]


def audit_entry(record: JudgmentRecord) -> AuditEntry:
    return AuditEntry(
        trace_id=record.trace_id, queued_at=record.judged_at,
        app=record.app, route=record.route, model=record.model, release=record.release,
        item={"question": record.query, "answer": record.answer,
              "chunks": [{"id": chunk.id, "text": chunk.text} for chunk in record.chunks]},
        judgment={"judge": record.judge, "judge_model": record.judge_model, "prompt_version": record.prompt_version,
                  "groundedness": record.groundedness, "groundedness_reason": record.groundedness_reason,
                  "answer_relevancy": record.answer_relevancy,
                  "answer_relevancy_reason": record.answer_relevancy_reason,
                  "claims": msgspec.to_builtins(record.claims), "hallucination": record.hallucination},
    )


def connect(path: str | Path, *, any_thread: bool = False) -> sqlite3.Connection:
    """The store's file, as the bad-case store opens it, with the review queue's tables."""
    connection = badcases.connect(path, any_thread=any_thread)
    connection.executescript(_SCHEMA)
    return connection


class ReviewQueueStore(badcases.RetainedStore):
    @staticmethod
    def connect(path: str) -> sqlite3.Connection:
        return connect(path, any_thread=True)

    def __call__(self, record: Record) -> None:
        try:
            self._begin()
            if isinstance(record, ReviewRecord):
                write_review(self._db, record)
                return
            if not isinstance(record, JudgmentRecord):
                return  # a signal: the review queue holds judgments and reviews
            if record.sample == "routine" and not record.fallback and record.groundedness is not None:
                day = time.strftime("%Y-%m-%d", time.gmtime(record.judged_at))
                self._db.execute(
                    "INSERT INTO routine_tally VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT DO UPDATE SET "
                    "judged = judged + 1, hallucinated = hallucinated + excluded.hallucinated",
                    (day, record.judge, record.judge_model, record.prompt_version, int(record.hallucination)),
                )
            if not record.audit:
                return
            entry = audit_entry(record)
            self._db.execute(
                "INSERT OR IGNORE INTO review_queue VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                (entry.trace_id, entry.queued_at, entry.app, entry.route, entry.model, entry.release,
                 record.judge, record.judge_model, record.prompt_version,
                 self._encode(entry.item).decode(), self._encode(entry.judgment).decode()),
            )
            self._writes += 1
            if self._writes >= PURGE_EVERY_WRITES:
                self.purge()
        except sqlite3.Error as exc:
            raise OSError(f"review queue: {exc}") from exc  # a sink failure: counted, judging goes on

    def purge(self) -> None:
        self._writes = 0
        cutoff = self._clock() - self._retention
        badcases.purge_table(self._db, "review_queue", "queued_at", cutoff=cutoff, max_rows=self._max_rows,
                             dropped=self._dropped, reason_prefix="review_")
        self._db.execute("DELETE FROM routine_tally WHERE day < ?", (time.strftime("%Y-%m-%d", time.gmtime(cutoff)),))

def write_review(connection: sqlite3.Connection, review: ReviewRecord) -> bool:
    """Stores a review on its audited trace; False when the trace is not in the queue."""
    return connection.execute(
        "UPDATE review_queue SET reviewed_at = ?, review = ? WHERE trace_id = ?",
        (review.reviewed_at, msgspec.json.encode(review).decode(), review.trace_id),
    ).rowcount > 0


def open_items(connection: sqlite3.Connection, *, limit: int, skip: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Audited traces not reviewed yet, oldest first: trace_id, labels, item and judgment."""
    rows = connection.execute(
        "SELECT trace_id, queued_at, app, route, model, release, item, judgment FROM review_queue "
        "WHERE reviewed_at IS NULL ORDER BY queued_at LIMIT ?", (limit + len(skip),),
    ).fetchall()
    found = [
        {"trace_id": trace_id, "queued_at": queued_at, "app": app, "route": route, "model": model, "release": release,
         "item": msgspec.json.decode(item), "judgment": msgspec.json.decode(judgment)}
        for trace_id, queued_at, app, route, model, release, item, judgment in rows if trace_id not in skip
    ]
    return found[:limit]


def count_open(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT count(*) FROM review_queue WHERE reviewed_at IS NULL").fetchone()[0])


def reviewed_rows(connection: sqlite3.Connection, *, since: float) -> list[ReviewedRow]:
    rows = connection.execute(
        "SELECT judge, judge_model, prompt_version, model, item, judgment, review FROM review_queue "
        "WHERE review IS NOT NULL AND reviewed_at >= ?", (since,),
    ).fetchall()
    out = []
    for judge, judge_model, prompt_version, model, item, judgment, review in rows:
        verdict, human = msgspec.json.decode(judgment), msgspec.json.decode(review)
        if human.get("groundedness") is None:
            continue  # a review without a groundedness score says nothing on hallucinations
        out.append(ReviewedRow(
            judge=judge, judge_model=judge_model, prompt_version=prompt_version,
            judge_groundedness=verdict["groundedness"], judge_relevancy=verdict.get("answer_relevancy"),
            human_groundedness=human["groundedness"], human_relevancy=human.get("answer_relevancy"),
            answer_length=answer_length(msgspec.json.decode(item)["answer"]),
            self_judging=judge == "llm" and model == judge_model,
        ))
    return out


def routine_counts(connection: sqlite3.Connection, *, since: float) -> dict[tuple[str, str, str], tuple[int, int]]:
    day = time.strftime("%Y-%m-%d", time.gmtime(since))
    rows = connection.execute(
        "SELECT judge, judge_model, prompt_version, sum(judged), sum(hallucinated) FROM routine_tally "
        "WHERE day >= ? GROUP BY judge, judge_model, prompt_version", (day,),
    ).fetchall()
    return {(judge, model, version): (int(judged), int(bad)) for judge, model, version, judged, bad in rows}


def waiting(connection: sqlite3.Connection, *, now: float, window: float) -> list[tuple[str, float, AuditedJudgment]]:
    """Audited judgments without a review, queued within `window`, oldest first: for the join after a restart."""
    rows = connection.execute(
        "SELECT trace_id, queued_at, judge, judge_model, prompt_version, model, item, judgment FROM review_queue "
        "WHERE reviewed_at IS NULL AND queued_at >= ? ORDER BY queued_at", (now - window,),
    ).fetchall()
    out = []
    for trace_id, queued_at, judge, judge_model, prompt_version, model, item, judgment in rows:
        verdict = msgspec.json.decode(judgment)
        out.append((trace_id, max(0.0, now - queued_at), AuditedJudgment(
            judge, judge_model, prompt_version, verdict["groundedness"], verdict.get("answer_relevancy"),
            answer_length(msgspec.json.decode(item)["answer"]), judge == "llm" and model == judge_model)))
    return out
