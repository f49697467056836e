"""The HTTP ingest contract in-process: backpressure, limits, auth, response bodies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

from aiohttp.test_utils import TestClient, TestServer
from helpers.events import ndjson, trace
from prometheus_client import CollectorRegistry

from ragpulse.app.server import build_app
from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.queue import EventQueue
from ragpulse.config import LimitsConfig, parse_config
from ragpulse.sources.access import access, api_scope
from ragpulse.sources.http import HttpIngest

Scenario = Callable[[TestClient, HttpIngest, EventQueue, CollectorRegistry], Awaitable[None]]


def run_scenario(scenario: Scenario, *, capacity: int = 5, token: str | None = None, max_body: int = 1 << 20) -> None:
    """Serve the real app on a real socket, with a queue nobody consumes, so its fill is under test control."""

    async def main() -> None:
        registry = CollectorRegistry()
        queue = EventQueue("pipeline", capacity, 1 << 30, registry)
        config = parse_config({"http": {"host": "127.0.0.1", "auth_token": token}})
        ingest = HttpIngest(EventDecoder(LimitsConfig(), "http"), queue, registry, access=access(config, "http"),
                            retry_after_seconds=2, body_timeout_seconds=5, max_body_bytes=max_body)
        app = build_app(ingest, registry, not_ready_reasons=lambda: [], api=api_scope(config), max_body_bytes=max_body)
        async with TestClient(TestServer(app)) as client:
            await scenario(client, ingest, queue, registry)

    asyncio.run(main())


def test_full_queue_answers_429_with_retry_after_and_keeps_nothing_of_the_request() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        ok = await client.post("/v1/events", data=ndjson([trace(f"t{i}") for i in range(4)]))
        assert ok.status == 200 and await ok.json() == {"accepted": 4, "rejected": 0}
        full = await client.post("/v1/events", data=ndjson([trace("t4"), trace("t5")]))
        assert full.status == 429
        assert full.headers["Retry-After"] == "2"
        assert (await full.json())["error"] == "backpressure"
        assert queue.depth == 4  # all or nothing: neither event of the refused request was queued
        assert registry.get_sample_value("ragpulse_events_refused_total", {"source": "http", "reason": "backpressure"}) == 2
        assert registry.get_sample_value("ragpulse_events_received_total", {"source": "http", "type": "trace"}) == 4
        await queue.get(10)  # the pipeline catches up...
        retry = await client.post("/v1/events", data=ndjson([trace("t4"), trace("t5")]))
        assert retry.status == 200  # ...and the same request goes through
        assert registry.get_sample_value("ragpulse_queue_depth_events", {"queue": "pipeline"}) == 2

    run_scenario(scenario)


def test_a_full_queue_answers_429_before_reading_the_body() -> None:
    """Overload (hardening, defect 9): the refusal must not cost a decode. A garbage body that would be a
    400 if it were read is a 429 while the queue is full, and nothing of it is counted as invalid."""
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        assert (await client.post("/v1/events", data=ndjson([trace(f"t{i}") for i in range(5)]))).status == 200
        assert queue.full
        refused = await client.post("/v1/events", data=b"\xff" * 1_000_000)
        assert refused.status == 429 and refused.headers["Retry-After"] == "2"
        assert registry.get_sample_value("ragpulse_events_invalid_total", {"source": "http", "reason": "malformed_json"}) == 0  # precreated by the source, never incremented
        await queue.get(10)
        assert (await client.post("/v1/events", data=b"\xff" * 100)).status == 400  # read, once there is room

    run_scenario(scenario)


def test_request_larger_than_the_queue_is_a_permanent_error() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        response = await client.post("/v1/events", data=ndjson([trace(f"t{i}") for i in range(6)]))
        assert response.status == 413
        assert "Retry-After" not in response.headers
        assert (await response.json())["error"] == "too_many_events"

    run_scenario(scenario)


def test_body_over_the_limit_is_413_with_a_reason() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        response = await client.post("/v1/events", data=json.dumps(trace("t", answer="x" * 3000)))
        assert response.status == 413
        assert await response.json() == {"error": "too_large", "message": "request body is over http.max_body_bytes=2048"}
        assert registry.get_sample_value("ragpulse_http_requests_total", {"endpoint": "/v1/events", "code": "413"}) == 1

    run_scenario(scenario, max_body=2048)


def test_shutting_down_answers_503() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        ingest.accepting = False
        response = await client.post("/v1/events", data=json.dumps(trace("t")))
        assert response.status == 503
        assert response.headers["Retry-After"] == "2"
        assert queue.depth == 0

    run_scenario(scenario)


def test_bearer_token_guards_ingest_but_not_metrics_or_health() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        body = json.dumps(trace("t"))
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            response = await client.post("/v1/events", data=body, headers=headers)
            assert response.status == 401
            assert response.headers["WWW-Authenticate"] == "Bearer"
        assert (await client.post("/v1/feedback", data=b"{}")).status == 401
        assert (await client.post("/v1/events", data=body, headers={"Authorization": "Bearer s3cret"})).status == 200
        assert (await client.get("/metrics")).status == 200
        assert (await client.get("/healthz")).status == 200
        assert queue.depth == 1

    run_scenario(scenario, token="s3cret")


def test_all_invalid_is_400_and_partly_invalid_is_200_with_errors() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        bad = await client.post("/v1/events", data=b'[{"type":"trace"}]')
        assert bad.status == 400
        assert await bad.json() == {
            "accepted": 0,
            "rejected": 1,
            "errors": [{"index": 0, "field": "trace_id", "reason": "missing_field", "message": "required field is missing"}],
        }
        mixed = await client.post("/v1/feedback", data=b'{"trace_id":"t","kind":"thumbs","value":"up"}\n{"kind":"thumbs"}',
                                  headers={"Content-Type": "application/x-ndjson"})
        assert mixed.status == 200
        body = await mixed.json()
        assert (body["accepted"], body["rejected"], body["errors"][0]["index"]) == (1, 1, 1)
        assert registry.get_sample_value("ragpulse_events_invalid_total", {"source": "http", "reason": "missing_field"}) == 2
        wrong_kind = await client.post("/v1/feedback", data=json.dumps(trace("t1")).encode())
        assert wrong_kind.status == 400
        assert (await wrong_kind.json())["errors"][0]["message"] == (
            "a trace event where only feedback events are taken (POST /v1/events takes both)")
        empty = await client.post("/v1/events", data=b"[]")
        assert (empty.status, await empty.json()) == (200, {"accepted": 0, "rejected": 0})  # docs/events.md: nothing to do

    run_scenario(scenario)


def test_metrics_endpoint_negotiates_openmetrics() -> None:
    async def scenario(client: TestClient, ingest: HttpIngest, queue: EventQueue, registry: CollectorRegistry) -> None:
        response = await client.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        assert response.headers["Content-Type"].startswith("application/openmetrics-text")
        assert (await response.text()).endswith("# EOF\n")

    run_scenario(scenario)
