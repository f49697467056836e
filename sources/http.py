"""HTTP ingest: POST /v1/events and POST /v1/feedback.

A request is decoded and validated whole, then its valid events go into the
pipeline queue all at once or not at all: when the queue is full the answer is
429 with Retry-After and nothing of the request is kept, so the client can
resend it as is. A full queue is answered before the body is read: under
overload, refusing costs nothing. The response says how many events were accepted and, for each
rejected one, its index, field and reason. Tokens (sources/access.py): a request no token lets in is
refused unread (401); once decoded, each event needs its scope (a review the review scope, any other
event ingest), or the whole request is refused (401 or 403) and its events counted as refused.
"""

from __future__ import annotations

from collections import Counter as Tally
from typing import Any

import msgspec
from aiohttp import web
from prometheus_client import CollectorRegistry

from ragpulse.collector.decode import Decoded, EventDecoder, EventType
from ragpulse.collector.events import Envelope, FeedbackEvent
from ragpulse.collector.intake import IntakeMetrics
from ragpulse.collector.queue import EventQueue
from ragpulse.collector.telemetry.shared import shared
from ragpulse.sources.access import Access, Refusal, bearer
from ragpulse.sources.connections import BodyError, ConnectionMetrics, read_body

SOURCE = "http"
MAX_ERRORS_IN_RESPONSE = 100
NDJSON_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"})


class HttpIngest:
    def __init__(
        self,
        decoder: EventDecoder,
        queue: EventQueue,
        registry: CollectorRegistry,
        *,
        access: Access,
        retry_after_seconds: float,
        body_timeout_seconds: float,
        max_body_bytes: int,
    ) -> None:
        self._decoder = decoder
        self._access = access
        self._queue = queue
        self._metrics = metrics = shared(registry, IntakeMetrics)
        metrics.precreate(SOURCE)
        # 1 while the server that routes to this ingest listens (the service runs it).
        self.up = metrics.source_up.labels(source=SOURCE)
        self._connections = shared(registry, ConnectionMetrics)
        self._body_timeout = body_timeout_seconds
        self._max_body = max_body_bytes
        self._retry_after = str(max(1, round(retry_after_seconds)))
        self.accepting = True

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/events", self.post_events), web.post("/v1/feedback", self.post_feedback)]

    async def post_events(self, request: web.Request) -> web.Response:
        return await self._ingest(request, None)

    async def post_feedback(self, request: web.Request) -> web.Response:
        return await self._ingest(request, "feedback")

    async def _ingest(self, request: web.Request, event_type: EventType | None) -> web.Response:
        token = bearer(request.headers.get("Authorization", ""))
        if (refused := self._access.door(token)) is not None:
            return json_response(refused.status, {"accepted": 0, **refused.body()}, refused.headers)
        if not self.accepting:
            return self._refuse(503, "shutting_down", "ragpulse is shutting down; retry against another replica")
        if self._queue.full:  # the events are not counted (unread): the request is, as a 429 in http_requests_total
            return self._refuse(429, "backpressure", "the pipeline queue is full; retry after the Retry-After delay")
        try:
            body = await read_body(request, self._body_timeout, self._connections, "http", self._max_body)
        except BodyError as exc:
            response = json_response(exc.status, {"accepted": 0, "error": exc.reason, "message": exc.message})
            if exc.status in (400, 415):
                response.force_close()  # the body is unread: Connection: close, so the client's next request is new
            return response
        decoded = self._decoder.decode_body(body, event_type=event_type, ndjson=request.content_type in NDJSON_TYPES)
        if (refused := self._scope_refusal(decoded.envelopes, token)) is not None:
            # All or nothing, as with a full queue: a review never reaches calibration without its scope.
            self._metrics.events_refused.labels(source=SOURCE, reason=refused.reason).inc(len(decoded.envelopes))
            return json_response(refused.status, {"accepted": 0, **refused.body()}, refused.headers)
        if len(decoded.envelopes) > self._queue.capacity:
            return json_response(413, {
                "accepted": 0,
                "error": "too_many_events",
                "message": f"{len(decoded.envelopes)} events in one request is over the queue capacity "
                f"({self._queue.capacity}); send smaller batches",
            })
        if decoded.envelopes and not self._queue.offer(decoded.envelopes):
            self._metrics.events_refused.labels(source=SOURCE, reason="backpressure").inc(len(decoded.envelopes))
            return self._refuse(429, "backpressure", "the pipeline queue is full; retry after the Retry-After delay")
        self._count(decoded)
        status = 400 if decoded.rejections and not decoded.envelopes else 200
        return json_response(status, _summary(decoded))

    def _scope_refusal(self, envelopes: list[Envelope], token: str | None) -> Refusal | None:
        """Why the request's events may not all be taken with this token: reviews first, then the rest."""
        if self._access.ingest.open and self._access.review.open:  # e.g. loopback without tokens: nothing to look at
            return None
        reviews = sum(isinstance(e.event, FeedbackEvent) and e.event.kind == "review" for e in envelopes)
        if reviews and (refused := self._access.review.refusal(token)) is not None:
            return refused
        return self._access.ingest.refusal(token) if reviews < len(envelopes) else None

    def _count(self, decoded: Decoded) -> None:
        self._metrics.count_accepted(SOURCE, decoded.envelopes)
        for reason, count in Tally(r.error.reason.value for r in decoded.rejections).items():
            self._metrics.events_invalid.labels(source=SOURCE, reason=reason).inc(count)

    def _refuse(self, status: int, reason: str, message: str) -> web.Response:
        return json_response(status, {"accepted": 0, "error": reason, "message": message}, {"Retry-After": self._retry_after})


def _summary(decoded: Decoded) -> dict[str, Any]:
    errors = [
        {"index": r.index, "field": r.error.field, "reason": r.error.reason.value, "message": r.error.message}
        for r in decoded.rejections[:MAX_ERRORS_IN_RESPONSE]
    ]
    summary: dict[str, Any] = {"accepted": len(decoded.envelopes), "rejected": len(decoded.rejections)}
    if errors:
        summary["errors"] = errors
        if len(decoded.rejections) > MAX_ERRORS_IN_RESPONSE:
            summary["errors_omitted"] = len(decoded.rejections) - MAX_ERRORS_IN_RESPONSE
    if decoded.truncations:
        summary["truncated"] = [{"index": i, "fields": list(f)} for i, f in decoded.truncations[:MAX_ERRORS_IN_RESPONSE]]
    return summary


def json_response(status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=msgspec.json.encode(payload), content_type="application/json", headers=headers)
