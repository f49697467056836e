"""Probe runs in SQLite: one row a run (its summary), one row a question (its result), for
`ragpulse probe list|show|compare`. Runs are kept until deleted; a run is a few kilobytes a question."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ragpulse.probes.runner import ProbeRun

_SCHEMA = """
CREATE TABLE IF NOT EXISTS probe_runs (
    run_id TEXT PRIMARY KEY, golden_set TEXT NOT NULL, target TEXT NOT NULL, k INTEGER NOT NULL,
    started_at REAL NOT NULL, finished_at REAL NOT NULL, correctness_judge TEXT NOT NULL, summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS probe_questions (
    run_id TEXT NOT NULL REFERENCES probe_runs(run_id), key TEXT NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
"""


def connect(path: str | Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    db.executescript(_SCHEMA)
    return db


def save(db: sqlite3.Connection, run: ProbeRun) -> None:
    record = run.as_dict()
    results = record.pop("results")
    summary = {"overall": _plain(run.overall()), "by_intent": {k: _plain(v) for k, v in run.by("intent").items()},
               "sensitivity": {k: {**vars(v), "changed_share": v.changed_share} for k, v in run.sensitivity().items()},
               "perturbations": record.pop("perturbations")}
    with db:
        db.execute("INSERT INTO probe_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (run.run_id, run.golden_set, run.target, run.k, run.started_at, run.finished_at,
                    run.correctness_judge, json.dumps(summary)))
        db.executemany("INSERT INTO probe_questions VALUES (?, ?, ?)",
                       [(run.run_id, r["key"], json.dumps(r, ensure_ascii=False)) for r in results])


def _plain(aggregate: Any) -> dict[str, Any]:
    return {**vars(aggregate), "error_rate": aggregate.error_rate}


def runs(db: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    rows = db.execute("SELECT * FROM probe_runs ORDER BY started_at DESC LIMIT ?", (limit,)).fetchall()
    return [{**dict(row), "summary": json.loads(row["summary"])} for row in rows]


def get(db: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    """A run with its questions, by its id or a unique prefix of it."""
    rows = db.execute("SELECT * FROM probe_runs WHERE substr(run_id, 1, length(?)) = ?", (run_id, run_id)).fetchall()
    if len(rows) != 1:
        return None
    run = {**dict(rows[0]), "summary": json.loads(rows[0]["summary"])}
    run["questions"] = [json.loads(row["result"]) for row in
                        db.execute("SELECT result FROM probe_questions WHERE run_id = ? ORDER BY rowid", (run["run_id"],))]
    return run
