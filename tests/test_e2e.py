"""End to end: `ragpulse run` as a real subprocess, events over HTTP, exact values from /metrics."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable

import pytest
from helpers.events import ndjson, trace
from helpers.net import http
from helpers.sidecar import RagpulseProcess, ragpulse_command
from helpers.waiting import wait_until

Factory = Callable[..., RagpulseProcess]
SHOP = {"app": "shop", "model": "m1", "release": "r1"}


def test_events_over_http_become_exact_metrics(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory("--set", "limits.max_event_bytes=4096", "--set", "http.max_body_bytes=65536")
    chunks = [{"id": "c1", "text": "Returns within 30 days.", "score": 0.9, "updated_at": 1_764_000_000_000},
              {"id": "c2", "text": "Gift cards never expire.", "score": 0.5, "updated_at": 1_763_913_600_000}]
    events = [
        trace("t1", chunks=chunks, latency_ms=1500, usage={"prompt_tokens": 100, "completion_tokens": 20},
              timestamp=1_764_086_400_000),  # one day after c1 was updated
        trace("t2", chunks=chunks, latency_ms=500, usage={"prompt_tokens": 50, "completion_tokens": 10}),
        trace("t3", chunks=[], answer="Hello!"),  # empty retrieval
        trace("t4", chunks=chunks, answer="I'm sorry, I couldn't find any information about that."),
        trace("t5", route="shipping", chunks=chunks, answer="抱歉，没有找到相关信息。"),
        trace("t6", route="shipping", fallback=True),
        trace("t7", route="shipping", answer="I found no issues with your order, here is the tracking link."),
        {"type": "trace", "trace_id": "t8"},  # invalid: no query, no answer
        trace("t9", chunks=[{"text": 42}]),  # invalid: wrong type
        trace("t1", chunks=chunks, latency_ms=1500),  # duplicate delivery of t1
        trace("t10", answer="x" * 5000),  # over limits.max_event_bytes
        {"type": "feedback", "trace_id": "t1", "kind": "thumbs", "value": "down", "timestamp": 1_764_086_460_000},
    ]
    response = rp.post("/v1/events", ndjson(events), {"Content-Type": "application/x-ndjson"})
    assert response.status == 200
    body = response.json()
    assert (body["accepted"], body["rejected"]) == (9, 3)
    assert [(e["index"], e["field"], e["reason"]) for e in body["errors"]] == [
        (7, "query", "missing_field"), (8, "chunks[0].text", "wrong_type"), (10, "", "too_large")]

    feedback = [
        {"trace_id": "t1", "kind": "thumbs", "value": "down", "timestamp": 1_764_086_460_000},  # duplicate of the one above
        {"session_id": "s1", "kind": "rating", "value": 4},
        {"trace_id": "t4", "kind": "escalation"},
    ]
    assert rp.post("/v1/feedback", json.dumps(feedback).encode()).status == 200
    oversized = rp.post("/v1/events", json.dumps([trace(f"x{i}", answer="y" * 3000) for i in range(30)]).encode())
    assert oversized.status == 413

    s = rp.wait_processed(traces=8, feedback=4)
    returns = {"route": "returns", **SHOP}
    shipping = {"route": "shipping", **SHOP}
    assert s.get_value("ragpulse_traces_total", **returns) == 4
    assert s.get_value("ragpulse_traces_total", **shipping) == 3
    assert s.get_value("ragpulse_events_received_total", source="http", type="trace") == 8
    assert s.get_value("ragpulse_events_received_total", source="http", type="feedback") == 4
    assert s.get_value("ragpulse_events_duplicate_total", type="trace") == 1
    assert s.get_value("ragpulse_events_duplicate_total", type="feedback") == 1
    assert s.get_value("ragpulse_events_processed_total", type="trace") == 7
    assert s.get_value("ragpulse_events_processed_total", type="feedback") == 3
    for reason, count in (("missing_field", 1), ("wrong_type", 1), ("too_large", 1)):
        assert s.get_value("ragpulse_events_invalid_total", source="http", reason=reason) == count
    assert s.get_value("ragpulse_fallbacks_total", rule="empty_retrieval", **returns) == 1
    assert s.get_value("ragpulse_fallbacks_total", rule="en_not_found", **returns) == 1
    assert s.get_value("ragpulse_fallbacks_total", rule="zh_not_found", **shipping) == 1
    assert s.get_value("ragpulse_fallbacks_total", rule="explicit", **shipping) == 1
    assert s.total("ragpulse_fallbacks_total") == 4  # t7 "I found no issues" is an answer
    assert s.get_value("ragpulse_retrieval_empty_total", **returns) == 1
    assert s.get_value("ragpulse_retrieval_chunks_count", **returns) == 4  # t1, t2, t3, t4 report retrieval
    assert s.get_value("ragpulse_retrieval_chunks_sum", **returns) == 6
    assert s.get_value("ragpulse_retrieval_top_score_sum", **returns) == pytest.approx(2.7)
    assert s.get_value("ragpulse_retrieval_mean_score_sum", **returns) == pytest.approx(2.1)  # 0.7 x 3
    assert s.get_value("ragpulse_retrieval_top_score_bucket", le="0.9", **returns) == 3
    assert s.get_value("ragpulse_retrieval_newest_chunk_age_seconds_bucket", le="86400.0", **returns) == 1
    assert s.get_value("ragpulse_answer_latency_seconds_sum", **returns) == 2.0
    assert s.get_value("ragpulse_answer_latency_seconds_bucket", le="1.0", **returns) == 1
    assert s.get_value("ragpulse_tokens_total", kind="prompt", **returns) == 150
    assert s.get_value("ragpulse_tokens_total", kind="completion", **returns) == 30
    assert s.get_value("ragpulse_feedback_total", kind="thumbs", value="down") == 1
    assert s.get_value("ragpulse_feedback_total", kind="rating", value="4") == 1
    assert s.get_value("ragpulse_feedback_total", kind="escalation", value="-") == 1
    assert s.get_value("ragpulse_http_requests_total", endpoint="/v1/events", code="200") == 1
    assert s.get_value("ragpulse_http_requests_total", endpoint="/v1/events", code="413") == 1
    assert s.get_value("ragpulse_source_up", source="http") == 1
    assert s.get_value("ragpulse_dedup_window_entries") == 10
    assert s.total("process_resident_memory_bytes") > 0

    assert rp.terminate() == 0
    text = rp.log_path.read_text()
    for secret in ("Returns within 30 days", "couldn't find", "没有找到"):
        assert secret not in text  # no query, answer or chunk text in the logs


def test_health_and_readiness(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory()
    assert http("GET", rp.url + "/healthz").json() == {"status": "ok"}
    assert http("GET", rp.url + "/readyz").json() == {"ready": True, "reasons": []}
    assert http("GET", rp.url + "/nope").status == 404
    assert rp.metrics().get_value("ragpulse_http_requests_total", endpoint="unmatched", code="404") == 1


def test_auth_token_from_environment(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory(env={"RAGPULSE_HTTP__AUTH_TOKEN": "tok-123"})
    assert rp.post("/v1/events", json.dumps(trace("a")).encode()).status == 401
    assert rp.post("/v1/events", json.dumps(trace("a")).encode(), {"Authorization": "Bearer tok-123"}).status == 200
    assert "tok-123" not in rp.log_path.read_text()


def test_invalid_config_exits_2_and_says_why() -> None:
    result = subprocess.run([*ragpulse_command(), "run", "--set", "http.prot=1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "http.prot: unknown option 'prot'; did you mean 'port'?" in result.stderr


def test_sigterm_under_load_loses_nothing_that_was_accepted(ragpulse_factory: Factory) -> None:
    # One event per pipeline step lets HTTP requests pile up in the queue, so SIGTERM lands while loaded.
    rp = ragpulse_factory("--set", "pipeline.max_batch_events=1", "--set", "pipeline.queue_capacity_events=100000")
    accepted = [0] * 4
    stop = threading.Event()
    # Bodies are encoded up front so the clients outpace the deliberately slow pipeline.
    bodies = [[ndjson([trace(f"w{w}-b{b}-{i}") for i in range(1000)]) for b in range(40)] for w in range(4)]

    def client(worker: int) -> None:
        for body in bodies[worker]:
            if stop.is_set():
                return
            try:
                response = rp.post("/v1/events", body, {"Content-Type": "application/x-ndjson"})
            except OSError:
                return  # the server closed: intake is over
            if response.status == 200:
                accepted[worker] += response.json()["accepted"]
            elif response.status == 503:
                return

    threads = [threading.Thread(target=client, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    wait_until(lambda: rp.metrics().get_value("ragpulse_queue_depth_events", queue="pipeline") >= 20_000, what="a loaded queue")
    assert rp.terminate() == 0
    stop.set()
    for t in threads:
        t.join(timeout=30)

    lines = rp.log_lines()
    [stopping] = [line for line in lines if line.get("event") == "stopping: intake closed, draining"]
    [stopped] = [line for line in lines if line.get("event") == "ragpulse stopped"]
    assert stopping["queued"] > 0  # SIGTERM arrived while events were waiting
    assert stopped["dropped"] == 0
    assert stopped["processed"] == {"trace": sum(accepted), "feedback": 0}


@pytest.mark.parametrize(("option", "message"), [
    ("http.port", "cannot listen for HTTP on 127.0.0.1:{port} (http.port): "),
    ("otlp.http_port", "cannot listen for OTLP/HTTP on 127.0.0.1:{port} (otlp.http_port, or otlp.enabled=false): "),
    ("otlp.grpc_port", "cannot listen for OTLP/gRPC on 127.0.0.1:{port} (otlp.grpc_port, or otlp.grpc_enabled=false): "),
])
def test_a_busy_port_is_a_clear_error_not_a_traceback(option: str, message: str) -> None:
    import socket

    from helpers.net import free_port

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        ports = {"http.port": free_port(), "otlp.http_port": free_port(), "otlp.grpc_port": free_port(), option: port}
        args = [arg for name, value in ports.items() for arg in ("--set", f"{name}={value}")]
        result = subprocess.run([*ragpulse_command(), "run", "--host", "127.0.0.1", "--set", "otlp.host=127.0.0.1", *args],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert message.format(port=port) in result.stderr
    assert "Traceback" not in result.stderr
