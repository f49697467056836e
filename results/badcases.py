"""The bad-case store: judged bad cases in an embedded SQLite file, with retention.

Only records with an attributed stage are kept (hallucinations, off-question answers,
fallbacks), one row per trace (a later judgment of the same trace replaces it). Rows older than
the retention period are deleted, and past `max_rows` the oldest go first; both are counted.
The sidecar writes; `ragpulse badcases` and GET /api/badcases read the same file (WAL mode lets
readers in while it writes).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.telemetry.shared import shared
from ragpulse.judging import JudgmentRecord, Record, SignalRecord
from ragpulse.results.writer import ResultMetrics

_SCHEMA = """
CREATE TABLE IF NOT EXISTS badcases (
    trace_id TEXT PRIMARY KEY,
    judged_at REAL NOT NULL,
    app TEXT, route TEXT, model TEXT, release TEXT,
    stage TEXT NOT NULL,
    priority TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS badcases_judged_at ON badcases (judged_at);
CREATE INDEX IF NOT EXISTS badcases_app ON badcases (app, judged_at);
CREATE INDEX IF NOT EXISTS badcases_stage ON badcases (stage, judged_at);
"""
# Expired and surplus rows are deleted every this many writes, or at the first write this long after the last purge.
PURGE_EVERY_WRITES = 100
PURGE_EVERY_SECONDS = 600.0


def connect(path: str | Path, *, any_thread: bool = False) -> sqlite3.Connection:
    # autocommit: one statement, one write. any_thread: made on one thread, used by another (never two at once).
    connection = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=not any_thread)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.executescript(_SCHEMA)
    return connection


class RetainedStore:
    """A sink on an SQLite file whose rows are kept for a retention period and up to max_rows; the
    subclass writes and purges. Made here, written by the result writer's thread."""

    def __init__(
        self,
        path: str,
        *,
        retention_seconds: float,
        max_rows: int,
        registry: CollectorRegistry,
        clock: Callable[[], float] = time.time,
    ) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = self.connect(path)
        self._retention = retention_seconds
        self._max_rows = max_rows
        self._dropped = shared(registry, ResultMetrics).dropped  # the writer's family: the records not kept
        self._clock = clock
        self._encode = msgspec.json.Encoder().encode
        self._writes = 0
        self._purged_at = 0.0
        self.purge()

    @staticmethod
    def connect(path: str) -> sqlite3.Connection:
        return connect(path, any_thread=True)

    def purge(self) -> None:
        raise NotImplementedError

    def _begin(self) -> None:
        """Writes go into one transaction until the writer flushes (a transaction a record cost most of a write)."""
        if not self._db.in_transaction:
            self._db.execute("BEGIN")

    def flush(self) -> None:
        try:
            if self._db.in_transaction:
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise OSError(f"{type(self).__name__}: {exc}") from exc

    def close(self) -> None:
        self.flush()
        self._db.close()


class BadCaseStore(RetainedStore):
    def __call__(self, record: Record) -> None:
        if isinstance(record, SignalRecord):
            self._append_signal(record)
            return
        if not isinstance(record, JudgmentRecord) or record.stage is None:
            return
        try:
            self._begin()
            self._db.execute(
                "INSERT OR REPLACE INTO badcases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record.trace_id, record.judged_at, record.app, record.route, record.model, record.release,
                 record.stage, record.priority, self._encode(record).decode()),
            )
            self._writes += 1
            if self._writes >= PURGE_EVERY_WRITES or self._clock() - self._purged_at >= PURGE_EVERY_SECONDS:
                self.purge()
        except sqlite3.Error as exc:
            raise OSError(f"bad-case store: {exc}") from exc  # a sink failure: counted, judging goes on

    def _append_signal(self, record: SignalRecord) -> None:
        try:  # a trace with no bad case has no row: nothing to append to
            self._begin()
            self._db.execute("UPDATE badcases SET record = json_insert(record, '$.signals[#]', ?) WHERE trace_id = ?",
                             (record.signal, record.trace_id))
        except sqlite3.Error as exc:
            raise OSError(f"bad-case store: {exc}") from exc

    def purge(self) -> None:
        self._writes, self._purged_at = 0, self._clock()
        purge_table(self._db, "badcases", "judged_at", cutoff=self._clock() - self._retention, max_rows=self._max_rows,
                    dropped=self._dropped)


def purge_table(db: sqlite3.Connection, table: str, time_column: str, *, cutoff: float, max_rows: int,
                dropped: Counter, reason_prefix: str = "") -> None:
    """Deletes the rows older than `cutoff`, then the oldest past `max_rows`; counts both (reasons
    retention and max_rows, after `reason_prefix`). `table` and `time_column` are this package's names."""
    expired = db.execute(f"DELETE FROM {table} WHERE {time_column} < ?", (cutoff,)).rowcount
    over = db.execute(
        f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} ORDER BY {time_column} DESC LIMIT -1 OFFSET ?)",
        (max_rows,),
    ).rowcount
    if expired:
        dropped.labels(reason=f"{reason_prefix}retention").inc(expired)
    if over:
        dropped.labels(reason=f"{reason_prefix}max_rows").inc(over)


DEFAULT_LIMIT = 20  # bad cases listed when no limit is given, by the CLI and the API alike


def query(
    connection: sqlite3.Connection,
    *,
    app: str | None = None,
    route: str | None = None,
    stage: str | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """Bad cases, newest first, filtered by what is given."""
    return select_records(connection, "badcases", "judged_at", limit, _conditions(app, route, stage, since, until))


def count(connection: sqlite3.Connection, *, app: str | None = None, route: str | None = None, stage: str | None = None,
          since: float | None = None, until: float | None = None) -> int:
    """How many bad cases the same filters match, whatever the limit (for "20 of 312")."""
    given = [(clause, value) for clause, value in _conditions(app, route, stage, since, until) if value is not None]
    where = " WHERE " + " AND ".join(clause for clause, _ in given) if given else ""
    return int(connection.execute(f"SELECT count(*) FROM badcases{where}", [value for _, value in given]).fetchone()[0])


def _conditions(app: str | None, route: str | None, stage: str | None, since: float | None,
                until: float | None) -> list[tuple[str, object]]:
    return [("app = ?", app), ("route = ?", route), ("stage = ?", stage), ("judged_at >= ?", since), ("judged_at < ?", until)]


def select_records(connection: sqlite3.Connection, table: str, time_column: str, limit: int,
                   conditions: list[tuple[str, object]]) -> list[dict[str, Any]]:
    """The records of `table`, newest first; each condition ("column = ?", value) applies when its value is given."""
    given = [(clause, value) for clause, value in conditions if value is not None]
    where = " WHERE " + " AND ".join(clause for clause, _ in given) if given else ""
    rows = connection.execute(f"SELECT record FROM {table}{where} ORDER BY {time_column} DESC LIMIT ?",
                              (*(value for _, value in given), limit)).fetchall()
    return [msgspec.json.decode(row[0]) for row in rows]


def get(connection: sqlite3.Connection, trace_id: str) -> dict[str, Any] | None:
    row = connection.execute("SELECT record FROM badcases WHERE trace_id = ?", (trace_id,)).fetchone()
    return msgspec.json.decode(row[0]) if row else None


class AmbiguousPrefix(ValueError):
    def __init__(self, prefix: str, matches: list[str]) -> None:
        self.prefix, self.matches = prefix, matches
        super().__init__(f"trace id prefix {prefix!r} matches several bad cases ({', '.join(matches)}...); give more of it")


def get_by_prefix(connection: sqlite3.Connection, prefix: str) -> dict[str, Any] | None:
    """The bad case whose trace id is `prefix` or the only one that starts with it; AmbiguousPrefix when several do."""
    exact = get(connection, prefix)
    if exact is not None or not prefix:
        return exact
    rows = connection.execute("SELECT trace_id, record FROM badcases WHERE substr(trace_id, 1, ?) = ? LIMIT 3",
                              (len(prefix), prefix)).fetchall()
    if len(rows) > 1:
        raise AmbiguousPrefix(prefix, [row[0] for row in rows])
    return msgspec.json.decode(rows[0][1]) if rows else None


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_time(text: str, now: float) -> float:
    """A point in time: a duration back from now ("30m", "2h", "7d"), an RFC 3339 timestamp or
    epoch seconds. Raises ValueError saying what is accepted."""
    text = text.strip()
    if match := _DURATION.match(text):
        return now - float(match[1]) * _SECONDS[match[2]]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not a time: use a duration back from now (30m, 2h, 7d), "
                         "an RFC 3339 timestamp or epoch seconds") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
