"""The one HTTP server: ingest endpoints, the bad-case API, the report, /metrics, /healthz and /readyz."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence

import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

from ragpulse.collector.telemetry.exposition import TextExposition
from ragpulse.errors import ExportRefused
from ragpulse.results.json_response import json_response
from ragpulse.sources.access import Scope, bearer
from ragpulse.sources.http import HttpIngest

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# The APIs that return user content (bad cases, calibration, the report); ingest checks its own scopes (sources/http.py).
API_PREFIX = "/api/"
REPORT_PATH = "/report"

HTTP_DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

log = structlog.get_logger("ragpulse.server")


class ServerMetrics:
    """Requests the HTTP server answered, labelled by route pattern (never the raw path) and status code."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.http_requests = Counter("ragpulse_http_requests_total", "HTTP requests served, by endpoint and status code.",
                                     ["endpoint", "code"], registry=registry)
        self.http_duration = Histogram("ragpulse_http_request_duration_seconds", "Time to serve an HTTP request.",
                                       ["endpoint"], buckets=HTTP_DURATION_BUCKETS, registry=registry)


def build_app(
    ingest: HttpIngest,
    registry: CollectorRegistry,
    *,
    not_ready_reasons: Callable[[], list[str]],
    readiness_notes: Callable[[], list[str]] = list,
    on_export: Sequence[Callable[[], Awaitable[None]]] = (),  # called right after each /metrics render
    api: Scope,
    max_body_bytes: int,
    api_routes: Sequence[web.RouteDef] = (),
) -> web.Application:
    metrics = ServerMetrics(registry)
    exposition = TextExposition(registry)

    @web.middleware
    async def observe(request: web.Request, handler: Handler) -> web.StreamResponse:
        # Label by route pattern, never by raw path: paths are client input.
        resource = request.match_info.route.resource
        endpoint = resource.canonical if resource is not None else "unmatched"
        started = time.perf_counter()
        try:
            response = await _guarded(request, handler)
        finally:
            metrics.http_duration.labels(endpoint).observe(time.perf_counter() - started)
        metrics.http_requests.labels(endpoint, str(response.status)).inc()
        return response

    async def _guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith(API_PREFIX) or request.path == REPORT_PATH:
            refused = api.refusal(bearer(request.headers.get("Authorization", "")))
            if refused is not None:
                return json_response(refused.status, refused.body(), refused.headers)
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, "too_large", f"request body is over http.max_body_bytes={max_body_bytes}")
        except web.HTTPException as exc:
            if exc.status >= 400:
                return _error(exc.status, exc.reason.lower().replace(" ", "_"), exc.text or exc.reason)
            raise
        except Exception:
            # A bug must cost one answer, counted like any other, never a traceback to the client.
            log.exception("request failed", endpoint=request.match_info.route.resource.canonical
                          if request.match_info.route.resource is not None else "unmatched")
            return _error(500, "internal_error", "ragpulse failed on this request; see its log")

    async def get_metrics(request: web.Request) -> web.Response:
        encoder, content_type = exposition.encoder(request.headers.get("Accept", ""))
        body = encoder(registry)
        # What this body counts is now exported: sources may commit it (Kafka offsets) before
        # the scraper gets it. Each hook snapshots synchronously, right after the render.
        try:
            for pending in [hook() for hook in on_export]:
                await pending
        except ExportRefused as exc:  # a count ahead of what a source committed would be counted twice after a crash
            return _error(503, "not_committed", str(exc))
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def get_healthz(request: web.Request) -> web.Response:
        return json_response(200, {"status": "ok"})

    async def get_readyz(request: web.Request) -> web.Response:
        reasons = not_ready_reasons()
        body: dict[str, object] = {"ready": not reasons, "reasons": reasons}
        if notes := readiness_notes():
            body["notes"] = notes
        return json_response(503 if reasons else 200, body)

    app = web.Application(middlewares=[observe], client_max_size=max_body_bytes)
    app.add_routes(ingest.routes())
    app.add_routes(api_routes)
    app.add_routes([web.get("/metrics", get_metrics), web.get("/healthz", get_healthz), web.get("/readyz", get_readyz)])
    return app


def _error(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return json_response(status, {"error": error, "message": message}, headers)

