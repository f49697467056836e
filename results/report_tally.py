"""The report's tallies: the routine sample's judgments counted by minute, app, route, release and judge, in the
bad-case store's SQLite file, so that `ragpulse report` can compute rates over any period without Prometheus.

The bad-case store keeps the bad cases only; a rate needs the good answers too. This sink counts what the
sidecar's counters count for the recording rules, over the same answers (judging/utilisation.py and the judgment
metrics): the routine sample's groundedness verdicts (judged and hallucinated), its records and refusals (the
fallback share of a simple random sample), cited sentences judged supported or unsupported, and the chunks
retrieved and used by rank. A row a minute and label set; rows older than the retention are deleted and past
`max_rows` (results.max_rows; the rank table eleven times that) the oldest go first (counted as the writer's drops,
reasons report_retention and report_max_rows).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ragpulse.judging import JUDGED_VERDICTS, JudgmentRecord, Record, rank_label
from ragpulse.results import badcases, review_queue

BUCKET_SECONDS = 60.0
_LABELS = "bucket, app, route, release, judge, judge_model, prompt_version"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS report_tally (
    bucket REAL NOT NULL, app TEXT, route TEXT, release TEXT, judge TEXT, judge_model TEXT, prompt_version TEXT,
    routine INTEGER NOT NULL, refusals INTEGER NOT NULL, judged INTEGER NOT NULL, hallucinated INTEGER NOT NULL,
    cited_judged INTEGER NOT NULL, cited_supported INTEGER NOT NULL,
    UNIQUE ({_LABELS})
);
CREATE INDEX IF NOT EXISTS report_tally_bucket ON report_tally (bucket);
CREATE TABLE IF NOT EXISTS report_rank_tally (
    bucket REAL NOT NULL, app TEXT, route TEXT, release TEXT, judge TEXT, judge_model TEXT, prompt_version TEXT,
    rank TEXT NOT NULL,
    retrieved INTEGER NOT NULL, used INTEGER NOT NULL,
    UNIQUE ({_LABELS}, rank)
);
CREATE INDEX IF NOT EXISTS report_rank_tally_bucket ON report_rank_tally (bucket);
"""
RANKS = 11  # 1-10 and 11+ (judging's rank labels)
TALLY_COLUMNS = ("routine", "refusals", "judged", "hallucinated", "cited_judged", "cited_supported")


def connect(path: str, *, any_thread: bool = False) -> sqlite3.Connection:
    """The store's file, as the bad-case store opens it, with the review queue's tables and the report's."""
    connection = review_queue.connect(path, any_thread=any_thread)
    connection.executescript(_SCHEMA)
    return connection


def tally_of(record: JudgmentRecord) -> tuple[int, ...] | None:
    """The record's counts in TALLY_COLUMNS' order; None outside the routine sample (its ratios are unbiased; the
    targeted and feedback samples over-represent suspect answers)."""
    if record.sample != "routine":
        return None
    answered = not record.fallback and record.error is None
    judged = not record.fallback and record.verdict in JUDGED_VERDICTS
    cited = [c.verdict for c in record.citations] if answered else []
    return (1, int(record.fallback), int(judged), int(judged and record.verdict == "hallucination"),
            sum(v in ("supported", "unsupported") for v in cited), cited.count("supported"))


def ranks_of(record: JudgmentRecord) -> list[tuple[str, int, int]]:
    """(rank, retrieved, used) of an answer whose judge said which chunks it used (as ContextRecorder counts)."""
    if record.sample != "routine" or record.fallback or record.error is not None or record.used_chunks is None:
        return []
    chosen = set(record.used_chunks)
    found: dict[str, list[int]] = {}
    for index in range(len(record.chunks)):
        tally = found.setdefault(rank_label(index), [0, 0])
        tally[0] += 1
        tally[1] += index in chosen
    return [(rank, retrieved, used) for rank, (retrieved, used) in found.items()]


class ReportTallyStore(badcases.RetainedStore):
    """Counts a batch in memory and writes its sums at the writer's flush: one upsert a label set and minute, not
    one a record (15 us a record one by one, three upserts each)."""

    def __init__(self, path: str, **options: Any) -> None:
        self._tallies: dict[tuple[Any, ...], list[int]] = {}
        self._ranks: dict[tuple[Any, ...], list[int]] = {}
        super().__init__(path, **options)

    @staticmethod
    def connect(path: str) -> sqlite3.Connection:
        return connect(path, any_thread=True)

    def __call__(self, record: Record) -> None:
        if not isinstance(record, JudgmentRecord) or (counts := tally_of(record)) is None:
            return
        labels = (record.judged_at - record.judged_at % BUCKET_SECONDS, record.app, record.route, record.release,
                  record.judge, record.judge_model, record.prompt_version)
        tally = self._tallies.setdefault(labels, [0] * len(TALLY_COLUMNS))
        for index, count in enumerate(counts):
            tally[index] += count
        for rank, retrieved, used in ranks_of(record):
            found = self._ranks.setdefault((*labels, rank), [0, 0])
            found[0] += retrieved
            found[1] += used

    def flush(self) -> None:
        adds = ", ".join(f"{c} = {c} + excluded.{c}" for c in TALLY_COLUMNS)
        try:
            if self._tallies:
                self._begin()
                self._db.executemany(f"INSERT INTO report_tally VALUES ({', '.join('?' * 13)}) "
                                     f"ON CONFLICT ({_LABELS}) DO UPDATE SET {adds}",
                                     [(*labels, *counts) for labels, counts in self._tallies.items()])
                self._db.executemany(f"INSERT INTO report_rank_tally VALUES ({', '.join('?' * 10)}) ON CONFLICT "
                                     f"({_LABELS}, rank) DO UPDATE SET retrieved = retrieved + excluded.retrieved, "
                                     "used = used + excluded.used", [(*key, *pair) for key, pair in self._ranks.items()])
                self._writes += len(self._tallies)
                self._tallies.clear()
                self._ranks.clear()
                if self._writes >= badcases.PURGE_EVERY_WRITES:
                    self.purge()
        except sqlite3.Error as exc:
            self._tallies.clear()  # a failed write is counted by the writer; the sums are not carried on
            self._ranks.clear()
            raise OSError(f"report tally: {exc}") from exc
        super().flush()

    def purge(self) -> None:
        self._writes = 0
        cutoff = self._clock() - self._retention
        # A tally row has up to RANKS rank rows beside it: the rank table keeps as many minutes as the tally.
        for table, cap in (("report_tally", self._max_rows), ("report_rank_tally", self._max_rows * RANKS)):
            badcases.purge_table(self._db, table, "bucket", cutoff=cutoff, max_rows=cap, dropped=self._dropped,
                                 reason_prefix="report_")


def rows(connection: sqlite3.Connection, table: str, *, since: float, until: float,
         app: str | None = None, route: str | None = None) -> list[dict[str, Any]]:
    """The tally rows of `table` (report_tally or report_rank_tally) in [since, until), oldest first."""
    conditions = [("bucket >= ?", since), ("bucket < ?", until), ("app = ?", app), ("route = ?", route)]
    given = [(clause, value) for clause, value in conditions if value is not None]
    cursor = connection.execute(f"SELECT * FROM {table} WHERE {' AND '.join(c for c, _ in given)} ORDER BY bucket",
                                [value for _, value in given])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
