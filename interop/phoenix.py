"""Judgments as span annotations in an Arize Phoenix server: one annotation per evaluation
(interop/evaluations.py) on the span that produced the judged answer (the event's span_id: the LLM or
agent span whose response id it carries, else the trace's root), posted in batches to Phoenix's REST API
(POST /v1/span_annotations?sync=true), annotator kind LLM for the LLM judge and CODE for the local one.

Each annotation has the identifier "ragpulse", so Phoenix upserts on (name, span, identifier): a retried
batch, or a trace judged again, replaces its annotation rather than adding a second. Phoenix refuses a
whole batch (404) when a span is not there yet (the app's exporter may send it after ragpulse judged it):
the missing spans' annotations wait and are retried until interop.phoenix.span_wait_seconds old, the rest
are posted at once. Unreachable, 429 and 5xx are retried with backoff up to max_retries; every annotation
not delivered is counted by reason, those cut off by shutdown's deadline too. The queue is capped in count and
bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections import deque
from dataclasses import dataclass

import aiohttp
import structlog
from prometheus_client import CollectorRegistry

from ragpulse.collector.telemetry.shared import shared
from ragpulse.config import InteropConfig
from ragpulse.interop.evaluations import evaluations, otel_trace_id
from ragpulse.interop.otlp_exporters import DROP_REASONS, InteropMetrics
from ragpulse.judging import JudgmentRecord

log = structlog.get_logger("ragpulse.interop")
OUTPUT = "phoenix"
IDENTIFIER = "ragpulse"
_SPAN_ID = re.compile(r"\b[0-9a-f]{16}\b")
_RETRIED = (429, 500, 502, 503, 504)


@dataclass(slots=True)
class _Pending:
    annotation: dict[str, object]
    size: int
    since: float  # when it was first queued, for span_wait_seconds
    failures: int = 0


class PhoenixAnnotations:
    def __init__(self, config: InteropConfig, registry: CollectorRegistry) -> None:
        metrics = shared(registry, InteropMetrics)
        self._options = options = config.phoenix
        self._include_content, self._max_chars = config.include_content, config.explanation_max_chars
        assert options.base_url is not None  # validated: required when enabled
        self._url = options.base_url.rstrip("/") + "/v1/span_annotations?sync=true"
        token = options.api_token()
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._queue: deque[_Pending] = deque()
        self._bytes = 0
        self._failures = 0  # flushes in a row that found the server away
        self._stopping = False
        self._in_flight = 0  # annotations of the batch being posted
        self._wake = asyncio.Event()
        self._session: aiohttp.ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        dropped = metrics.dropped
        self._sent = metrics.sent.labels(output=OUTPUT)
        self._drops = {reason: dropped.labels(output=OUTPUT, reason=reason) for reason in DROP_REASONS[OUTPUT]}
        metrics.queued.labels(output=OUTPUT).set_function(lambda: len(self._queue) + self._in_flight)

    def add(self, record: JudgmentRecord) -> None:
        """Queues a judgment record's annotations, never blocking: a consumer of judging's exit (app/interop_wiring.py)."""
        found = evaluations(record, include_content=self._include_content, max_chars=self._max_chars)
        if otel_trace_id(record.trace_id) is None:
            self._drops["no_trace_id"].inc(len(found))
            return
        if not record.span_id:
            self._drops["no_span_id"].inc(len(found))
            return
        metadata = {"judge": record.judge, "judge_model": record.judge_model, "prompt_version": record.prompt_version,
                    "sample": record.sample, **({"stage": record.stage} if record.stage else {})}
        now = time.monotonic()
        for evaluation in found:
            result = {"label": evaluation.label, "score": evaluation.score, "explanation": evaluation.explanation}
            annotation = {"span_id": record.span_id, "name": evaluation.name, "identifier": IDENTIFIER,
                          "annotator_kind": "LLM" if record.judge == "llm" else "CODE",
                          "result": {key: value for key, value in result.items() if value is not None},
                          "metadata": {**metadata, **({"error": evaluation.error} if evaluation.error else {})}}
            size = 200 + len(evaluation.explanation or "")
            if len(self._queue) >= self._options.max_queue or self._bytes + size > self._options.max_queue_bytes:
                self._drops["queue_full"].inc()
                continue
            self._queue.append(_Pending(annotation, size, now))
            self._bytes += size
        if len(self._queue) >= self._options.max_batch and not self._failures:  # never early while the server is away
            self._wake.set()

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(headers=self._headers,
                                              timeout=aiohttp.ClientTimeout(total=self._options.timeout_seconds))
        self._task = asyncio.create_task(self._run(), name="ragpulse-phoenix")

    async def _run(self) -> None:
        while not self._stopping:
            # After failed attempts, wait longer each time (up to a minute): a restarting server is not hammered.
            pause = min(self._options.flush_seconds * 2 ** self._failures, 60.0)
            try:
                await asyncio.wait_for(self._wake.wait(), pause)
            except TimeoutError:
                pass
            self._wake.clear()
            await self.flush()

    async def flush(self, deadline: float | None = None) -> None:
        """Posts what is queued, a batch at a time, until the queue is done (or the deadline, a monotonic time,
        passed, or shutdown began); what must wait (a missing span, a server away) stays queued."""
        waiting: list[_Pending] = []
        try:
            while self._queue and not (deadline is not None and time.monotonic() > deadline):
                batch = [self._queue.popleft() for _ in range(min(self._options.max_batch, len(self._queue)))]
                self._bytes -= sum(item.size for item in batch)
                self._in_flight = len(batch)
                try:
                    retry = await self._post(batch)
                except asyncio.CancelledError:  # shutdown's deadline: the batch was not delivered
                    self._drops["export_failed"].inc(self._in_flight)
                    raise
                finally:
                    self._in_flight = 0
                if retry is None:  # the server is away: what is left waits for the next flush, in order
                    self._failures += 1
                    break
                self._failures = 0
                waiting += retry
                if self._stopping and deadline is None:  # the loop's flush: shutdown takes over from here
                    break
        finally:  # cut off by shutdown's deadline too: shutdown counts them with the queue
            self._requeue(waiting)

    def _requeue(self, items: list[_Pending]) -> None:
        """Back at the front of the queue, in their order (the caps were checked when they came)."""
        for item in reversed(items):
            self._queue.appendleft(item)
            self._bytes += item.size

    async def _post(self, batch: list[_Pending]) -> list[_Pending] | None:
        """Posts one batch. Returns the annotations to retry later (their spans not yet in Phoenix), or None
        when the server could not be reached or asked to come back (the batch failed once more)."""
        assert self._session is not None
        try:
            async with self._session.post(self._url, json={"data": [item.annotation for item in batch]}) as response:
                status, text = response.status, await response.text()
        except (aiohttp.ClientError, TimeoutError) as exc:
            return self._failed(batch, f"{type(exc).__name__}: {exc}")
        if status == 200:
            self._sent.inc(len(batch))
            return []
        if status == 404 and (missing := set(_SPAN_ID.findall(text))):
            absent = self._unexpired([item for item in batch if item.annotation["span_id"] in missing])
            present = [item for item in batch if item.annotation["span_id"] not in missing]
            again = await self._post(present) if present else []
            if again is None:  # away now: `present` is queued again by _failed
                self._requeue(absent)
                return None
            return absent + again
        if status in _RETRIED:
            return self._failed(batch, f"HTTP {status}: {text[:200]}")
        self._drops["rejected"].inc(len(batch))
        log.warning("Phoenix refused span annotations", status=status, body=text[:500], annotations=len(batch))
        return []

    def _failed(self, batch: list[_Pending], reason: str) -> list[_Pending] | None:
        kept = []
        for item in batch:
            item.failures += 1
            if item.failures > self._options.max_retries:
                self._drops["export_failed"].inc()
            else:
                kept.append(item)
        log.warning("Phoenix span annotations not delivered", error=reason, retried=len(kept),
                    dropped=len(batch) - len(kept))
        self._requeue(kept)
        return None

    def _unexpired(self, items: list[_Pending]) -> list[_Pending]:
        deadline = time.monotonic() - self._options.span_wait_seconds
        kept = [item for item in items if item.since > deadline]
        if len(kept) < len(items):
            self._drops["span_not_found"].inc(len(items) - len(kept))
            self._in_flight -= len(items) - len(kept)  # counted: no longer the post's to count
        return kept

    async def shutdown(self, deadline: float) -> None:
        """Posts what is queued until `deadline` (a monotonic time), at most timeout_seconds, a post under way
        included, then stops; a post cut off at the deadline and what is still queued are counted as not delivered."""
        self._stopping = True
        self._wake.set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, min(deadline - time.monotonic(), self._options.timeout_seconds))):
                if self._task is not None:
                    await asyncio.gather(self._task, return_exceptions=True)
                if self._session is not None:
                    await self.flush(deadline=deadline)
        if self._session is not None:
            await self._session.close()
        if self._queue:
            self._drops["export_failed"].inc(len(self._queue))
            self._queue.clear()
            self._bytes = 0
