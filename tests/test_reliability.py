"""Regression tests for the second hardening round (issue: hardening, round two), against a running
`ragpulse run` over real sockets."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from helpers.events import ndjson, trace
from helpers.net import http
from helpers.processes import rss_bytes
from helpers.sidecar import RagpulseProcess

Factory = Callable[..., RagpulseProcess]
MB = 1024 * 1024


def oversized_event(number: int) -> bytes:
    """One trace event of 2 MiB: over limits.max_event_bytes (512 KiB), under http.max_body_bytes (8 MiB)."""
    return json.dumps(trace(f"big-{number}", answer="x" * (2 * MB))).encode()


def test_rejected_oversized_events_keep_no_memory(ragpulse_factory: Factory) -> None:
    """500 rejected 2 MiB events from 8 concurrent clients: each a 400 too_large, and the process keeps none of
    them (the rejection held its traceback, the traceback the decoding frame and its body, a cycle the
    product's raised GC threshold left alone: 4 MB a request)."""
    rp = ragpulse_factory()
    body = oversized_event(0)
    for _ in range(20):  # warm up: buffers and allocator arenas reach their steady size
        assert http("POST", f"{rp.url}/v1/events", body).status == 400
    before = rss_bytes(rp.process.pid)

    def send(number: int) -> tuple[int, str]:
        response = http("POST", f"{rp.url}/v1/events", body, {"Content-Type": "application/json"})
        return response.status, response.json()["errors"][0]["reason"]

    with ThreadPoolExecutor(8) as clients:
        answers = list(clients.map(send, range(500)))
    assert answers == [(400, "too_large")] * 500
    grown = rss_bytes(rp.process.pid) - before
    assert grown < 30 * MB, f"RSS grew {grown / MB:.0f} MB over 500 rejected events"
    assert http("POST", f"{rp.url}/v1/events", ndjson([trace(f"ok-{i}") for i in range(200)])).status == 200
    samples = rp.wait_processed(200)
    assert samples.get_value("ragpulse_events_invalid_total", source="http", reason="too_large") == 520


def test_a_malformed_first_line_costs_only_itself_whatever_the_content_type(ragpulse_factory: Factory) -> None:
    """A body that is not one JSON document and has several lines is NDJSON, with or without its content type."""
    rp = ragpulse_factory()
    good = [json.dumps(trace(f"line-{n}")).encode() for n in range(12)]
    shapes = [b"[1, 2", b"not json at all", b"{\"type\": \"trace\", ", b"[{\"type\": \"trace\"}", b"]"]
    content_types: list[dict[str, str]] = [{}, {"Content-Type": "application/json"},
                                            {"Content-Type": "application/x-ndjson"}]
    sent = 0
    for first in shapes:
        for headers in content_types:
            body = b"\n".join([first, good[sent % 12], good[(sent + 1) % 12]]).replace(b"line-", f"s{sent}-".encode())
            response = http("POST", f"{rp.url}/v1/events", body, headers)
            assert (response.status, response.json()["accepted"], response.json()["rejected"]) == (200, 2, 1), (first, headers)
            assert response.json()["errors"][0]["index"] == 0
            sent += 1
    samples = rp.wait_processed(2 * sent)
    assert samples.total("ragpulse_events_received_total") == 2 * sent


def test_content_encodings_are_read_refused_with_415_or_closed_cleanly(ragpulse_factory: Factory) -> None:
    """identity, gzip and deflate are read; any other coding is 415 with the source's own error body; a body that
    does not decode as its coding is 400 with Connection: close, and the client's next request is answered."""
    import gzip
    import zlib
    from http.client import HTTPConnection

    rp = ragpulse_factory()
    events = ndjson([trace("enc-1"), trace("enc-2")])
    ingest, otlp = f"{rp.url}/v1/events", f"http://127.0.0.1:{rp.otlp_port}/v1/traces"
    for coding, body in (("gzip", gzip.compress(events)), ("deflate", zlib.compress(events)), ("identity", events)):
        response = http("POST", ingest, body.replace(b"enc-", coding.encode()),
                        {"Content-Type": "application/x-ndjson", "Content-Encoding": coding})
        assert (response.status, response.json()["accepted"]) == (200, 2), coding
    for coding in ("br", "zstd", "x", "gzip, br"):
        response = http("POST", ingest, events, {"Content-Encoding": coding})
        assert (response.status, response.json()["error"]) == (415, "unsupported_encoding"), coding
        otlp_answer = http("POST", otlp, b"", {"Content-Type": "application/json", "Content-Encoding": coding})
        assert otlp_answer.status == 415 and otlp_answer.json()["code"] == 3, coding  # INVALID_ARGUMENT
    bomb = gzip.compress(b"0" * (9 * MB))  # 9 MB of zeros in 9 KB: over http.max_body_bytes once decompressed
    assert http("POST", ingest, bomb, {"Content-Encoding": "gzip"}).status == 413

    connection = HTTPConnection("127.0.0.1", rp.port, timeout=10)
    connection.request("POST", "/v1/events", events, {"Content-Encoding": "gzip"})  # plain bytes announced as gzip
    broken = connection.getresponse()
    assert (broken.status, broken.getheader("Connection"), json.loads(broken.read())["error"]) == (400, "close", "bad_encoding")
    connection.request("POST", "/v1/events", ndjson([trace("after-1")]))  # http.client reconnects after close
    after = connection.getresponse()
    assert (after.status, json.loads(after.read())["accepted"]) == (200, 1)
    connection.close()

    samples = rp.wait_processed(7)
    assert samples.get_value("ragpulse_http_requests_total", endpoint="/v1/events", code="415") == 4
    assert samples.get_value("ragpulse_http_requests_total", endpoint="/v1/events", code="400") == 1
    assert samples.get_value("ragpulse_otlp_requests_total", encoding="json", code="415") == 4
    assert not [line for line in rp.log_lines() if "exception" in line or line.get("level") == "error"]


def run_distributed(rp: RagpulseProcess, questions: int, *gateway_mode: str, retrieval_mode: tuple[str, ...] = ()) -> None:
    """tests/helpers/distributed_app.py: the gateway answers, then the retrieval service serves its calls and
    exports about 3 s after the gateway did."""
    import subprocess
    import sys
    from pathlib import Path

    app = str(Path(__file__).parent / "helpers" / "distributed_app.py")
    endpoint = f"http://127.0.0.1:{rp.otlp_port}/v1/traces"
    retrieval = subprocess.Popen([sys.executable, app, "retrieval", endpoint, *retrieval_mode], stdin=subprocess.PIPE)
    gateway = subprocess.run([sys.executable, app, "gateway", endpoint, str(questions), *gateway_mode],
                             capture_output=True, check=True, timeout=60)
    assert retrieval.stdin is not None
    retrieval.stdin.write(gateway.stdout)
    retrieval.stdin.close()
    assert retrieval.wait(timeout=60) == 0


def test_a_trace_from_two_processes_is_assembled_with_its_retrieval(ragpulse_factory: Factory) -> None:
    """A gateway and a retrieval service, each with the SDK's default batching: the retrieval spans come seconds
    after the root. Every trace is counted with its retrieval, none assembled without it, no span dropped late."""
    rp = ragpulse_factory()
    run_distributed(rp, 20)
    samples = rp.wait_processed(20)
    assert samples.get_value("ragpulse_otlp_traces_total", outcome="complete") == 20
    assert samples.total("ragpulse_retrieval_chunks_count") == 20  # every trace counted with its chunks
    assert samples.total("ragpulse_retrieval_empty_total") == 0
    assert samples.total("ragpulse_otlp_late_spans_total") == 0
    assert samples.get_value("ragpulse_otlp_spans_dropped_total", reason="late_span") == 0


def test_late_retrievals_without_a_client_span_are_learnt_and_waited_for(ragpulse_factory: Factory) -> None:
    """The gateway propagates its context by hand (no CLIENT span) and calls its model; the retrieval service's
    spans come 3 s after the root, past the 1 s grace. The first trace is assembled without its retrieval and the
    log names the setting that would have kept it (grace_seconds, with how late); from then on the gateway's traces
    wait for their retrieval: all 200 counted with it, under the default settings."""
    rp = ragpulse_factory()
    run_distributed(rp, 1, "by_hand")
    samples = rp.wait_processed(1)
    assert samples.get_value("ragpulse_otlp_traces_total", outcome="complete") == 1
    assert samples.total("ragpulse_retrieval_chunks_count") == 0
    assert samples.get_value("ragpulse_otlp_late_spans_total", kind="retriever") == 1
    assert samples.get_value("ragpulse_otlp_late_spans_total", kind="other") == 1  # the SERVER span
    [warning] = [line for line in rp.log_lines()
                 if line.get("event") == "spans came after their trace was assembled and were dropped"]
    assert (warning["service"], warning["trace_service"]) == ("retrieval", "gateway")
    assert 3.0 <= warning["late_seconds"] < 6.0, warning  # the retrieval service exports 3 s after the gateway
    assert warning["fix"] == f"raise otlp.grace_seconds (now 1) above {warning['late_seconds']:.1f}"
    [learnt] = [line for line in rp.log_lines() if line.get("event", "").startswith("retrievals came after their trace")]
    assert learnt["service"] == "gateway"

    run_distributed(rp, 200, "by_hand")
    samples = rp.wait_processed(201)
    assert samples.get_value("ragpulse_otlp_traces_total", outcome="complete") == 201
    assert samples.total("ragpulse_retrieval_chunks_count") == 200  # each later trace with its retrieval
    assert samples.get_value("ragpulse_otlp_spans_dropped_total", reason="late_span") == 2  # the first trace's only


def test_without_a_client_span_a_named_peer_or_a_server_span_of_another_service_waits_for_the_retrieval(
        ragpulse_factory: Factory) -> None:
    """No CLIENT span and nothing learnt, under the default settings: a gateway that propagates its context by hand
    but names the service it calls on its root (peer.service), then one whose retrieval service answers at once
    (its SERVER span) and hands the call by hand to a search service exporting 3 s later. Every trace is counted
    with its retrieval, the first too: none dropped late, nothing learnt."""
    rp = ragpulse_factory()
    run_distributed(rp, 20, "names_peer")
    run_distributed(rp, 20, "by_hand", retrieval_mode=("hands_on",))
    samples = rp.wait_processed(40)
    assert samples.get_value("ragpulse_otlp_traces_total", outcome="complete") == 40
    assert samples.total("ragpulse_retrieval_chunks_count") == 40  # every trace counted with its chunks
    assert samples.total("ragpulse_otlp_late_spans_total") == 0
    assert samples.get_value("ragpulse_otlp_spans_dropped_total", reason="late_span") == 0
    assert not [line for line in rp.log_lines() if line.get("event", "").startswith("retrievals came after their trace")]
