"""The golden-set candidates table, in the bad-case store's SQLite file: production answers users
signalled on (probes/candidates.py picks them), one row per trace and kind, kept for the results'
retention and up to `probes.candidates_max_rows`, both counted as dropped (`candidates_retention`,
`candidates_max_rows`). Read by `ragpulse golden candidates`."""

from __future__ import annotations

import sqlite3
from typing import Any

from ragpulse.results import badcases
from ragpulse.results.badcases import (
    PURGE_EVERY_SECONDS,
    PURGE_EVERY_WRITES,
    RetainedStore,
    purge_table,
    select_records,
)
from ragpulse.judging import CandidateRecord, Record

_SCHEMA = """
CREATE TABLE IF NOT EXISTS golden_candidates (
    trace_id TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (trace_id, kind)
);
CREATE INDEX IF NOT EXISTS golden_candidates_at ON golden_candidates (at);
"""


def connect(path: str, *, any_thread: bool = False) -> sqlite3.Connection:
    connection = badcases.connect(path, any_thread=any_thread)
    connection.executescript(_SCHEMA)
    return connection


class CandidateStore(RetainedStore):
    @staticmethod
    def connect(path: str) -> sqlite3.Connection:
        return connect(path, any_thread=True)

    def __call__(self, record: Record) -> None:
        if not isinstance(record, CandidateRecord):
            return
        try:  # the first signal of a kind on an answer makes its row; later ones change nothing
            self._begin()
            self._db.execute("INSERT OR IGNORE INTO golden_candidates VALUES (?, ?, ?, ?)",
                             (record.trace_id, record.kind, record.at, self._encode(record).decode()))
            self._writes += 1
            if self._writes >= PURGE_EVERY_WRITES or self._clock() - self._purged_at >= PURGE_EVERY_SECONDS:
                self.purge()
        except sqlite3.Error as exc:
            raise OSError(f"golden candidates: {exc}") from exc

    def purge(self) -> None:
        self._writes, self._purged_at = 0, self._clock()
        purge_table(self._db, "golden_candidates", "at", cutoff=self._clock() - self._retention, max_rows=self._max_rows,
                    dropped=self._dropped, reason_prefix="candidates_")


def query(connection: sqlite3.Connection, *, kind: str | None, since: float | None, limit: int) -> list[dict[str, Any]]:
    return select_records(connection, "golden_candidates", "at", limit, [("kind = ?", kind), ("at >= ?", since)])
