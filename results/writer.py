"""Hands judgment and review records to the sinks (SQLite bad-case store and review queue, JSONL
files, Kafka topics) on one thread of their own, so disk and broker never hold up the event loop.

The hand-over queue is bounded in records and in bytes (judging/records.py's record_bytes): when the sinks
fall behind, records are dropped and counted.
What is queued is written in batches (up to WRITE_BATCH records), sink by sink, and a sink with a
`flush` is flushed after its part: the SQLite stores commit a batch in one transaction, where a
transaction a record made the writer a sixth of the sidecar's CPU under OTLP load.
A sink that fails (a full disk, a broker away) is counted and logged; the others still get the
record, and judging goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

import structlog
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.handover import Handover
from ragpulse.collector.telemetry.shared import shared
from ragpulse.judging import Record, record_bytes


log = structlog.get_logger("ragpulse.results")
WRITE_BATCH = 500


class Sink(Protocol):
    def __call__(self, record: Record) -> None: ...

    def close(self) -> None: ...


class ResultMetrics:
    """Records not kept (the writer's queue, the stores' retention and caps) and failed writes, by sink: one set
    per registry (`shared`), the writer and the stores count into it."""

    DROP_REASONS = ("writer_full", "retention", "max_rows", "review_retention", "review_max_rows", "report_retention",
                    "report_max_rows")

    def __init__(self, registry: CollectorRegistry) -> None:
        self.dropped = Counter(
            "ragpulse_results_dropped_total",
            "Judgment records not kept: writer_full (sinks behind), retention and max_rows (bad-case store), "
            "review_retention and review_max_rows (review queue), report_retention and report_max_rows (the report's "
            "tallies).", ["reason"], registry=registry,
        )
        for reason in self.DROP_REASONS:
            self.dropped.labels(reason=reason)
        self.sink_errors = Counter("ragpulse_results_sink_errors_total", "Failed writes of a judgment record, by sink.",
                                   ["sink"], registry=registry)


class ResultWriter:
    def __init__(self, sinks: Sequence[tuple[str, Sink]], capacity: int, max_bytes: int,
                 registry: CollectorRegistry) -> None:
        metrics = shared(registry, ResultMetrics)
        self._sinks = list(sinks)
        self._flushes = [getattr(sink, "flush", None) for _, sink in self._sinks]  # aligned with _sinks
        self.queue: Handover[Record] = Handover(capacity, max_bytes)
        self._dropped = metrics.dropped
        self._errors = metrics.sink_errors
        self._thread = threading.Thread(target=self._run, name="ragpulse-results", daemon=True)

    def start(self) -> None:
        if self._sinks:
            self._thread.start()

    def write(self, record: Record, size: int | None = None) -> None:
        """`size`: what the record holds, when the caller knows it more cheaply than record_bytes()."""
        if self._sinks and not self.queue.offer(record, record_bytes(record) if size is None else size):
            self._dropped.labels(reason="writer_full").inc()

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (within `timeout`), then close the sinks."""
        if self._thread.is_alive() and not self.queue.close(self._thread, timeout):
            log.warning("result writer still busy at shutdown: queued records not written", queued=self.queue.qsize())

    def _run(self) -> None:
        self.queue.serve(WRITE_BATCH, self._write)
        for name, sink in self._sinks:
            try:
                sink.close()
            except Exception as exc:  # closing must not hide the others' close
                log.warning("result sink close failed", sink=name, error=str(exc))

    def _write(self, batch: list[Record]) -> None:
        """The batch to every sink in turn, each flushed after its part."""
        for (name, sink), flush in zip(self._sinks, self._flushes, strict=True):
            for record in batch:
                try:
                    sink(record)
                except Exception as exc:  # one record's failure (a full disk, a bug) never stops the writer
                    self._errors.labels(sink=name).inc()
                    log.warning("result sink failed", sink=name, error=f"{type(exc).__name__}: {exc}")
            if flush is not None:
                try:
                    flush()
                except Exception as exc:
                    self._errors.labels(sink=name).inc()
                    log.warning("result sink flush failed", sink=name, error=f"{type(exc).__name__}: {exc}")
