"""Safe by default: who may read user data (GET /api/*), send reviews (they steer calibration) and send spans,
by the address the sidecar binds and the tokens it has. One real sidecar per config; every endpoint is called with
every token state against it, and the whole table of answers is compared with the expected one."""

from __future__ import annotations

import ipaddress
import json
import subprocess
from collections.abc import Callable
from functools import cache

import grpc
import pytest
from helpers.events import ndjson, trace
from helpers.net import http
from helpers.otlp_payload import export, kv, otlp_trace
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ragpulse.config import parse_config
from ragpulse.sources.access import access, api_scope, bearer, is_loopback

Factory = Callable[..., RagpulseProcess]
Table = dict[tuple[str, str], int | str]

STATES = ("none", "wrong", "right", "lower-case scheme")
TOKENS = {"ingest": "ingest-t0ken", "api": "api-t0ken", "review": "review-t0ken"}
TOKEN_FLAGS = ("--set", f"http.auth_token={TOKENS['ingest']}", "--set", f"http.api_token={TOKENS['api']}",
               "--set", f"http.review_token={TOKENS['review']}")
# endpoint -> the scope whose token is the right one
ENDPOINTS = {"GET /api/badcases": "api", "GET /api/badcases/{id}": "api", "GET /api/calibration": "api",
             "POST /v1/feedback review": "review", "OTLP/HTTP": "ingest", "OTLP/gRPC": "ingest"}
# Every trace judged (the local judge) and audited, so a review taken is matched at once.
JUDGED = ("--set", "judge.sample_rate=1.0", "--set", "calibration.audit_rate=1.0",
          "--set", "judge.priority_rates.scorer_flag=0", "--set", "otlp.grace_seconds=0.1")
CHUNKS = [{"id": "kb-returns", "text": "Shoes can be returned within 30 days of delivery."}]
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


@cache
def outside_address() -> str:
    """A non-loopback IPv4 address of this machine; without one 0.0.0.0, which is no loopback bind either (the
    server decides by the address it binds, not by the peer's: a request from 127.0.0.1 to it is still refused)."""
    listed = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    found = [a for a in listed if ipaddress.ip_address(a).version == 4 and not ipaddress.ip_address(a).is_loopback]
    return found[0] if found else "0.0.0.0"


def authorization(state: str, token: str) -> dict[str, str]:
    return {"none": {}, "wrong": {"Authorization": "Bearer not-the-t0ken"}, "right": {"Authorization": f"Bearer {token}"},
            "lower-case scheme": {"Authorization": f"bearer {token}"}}[state]


def grpc_export(rp: RagpulseProcess, body: bytes, headers: dict[str, str]) -> str:
    """The gRPC status code's name of a TraceService/Export of `body` with these headers as metadata."""
    metadata = [(key.lower(), value) for key, value in headers.items()]
    with grpc.insecure_channel(f"{rp.host}:{rp.grpc_port}") as channel:
        try:
            channel.unary_unary(EXPORT)(body, metadata=metadata, timeout=10)
        except grpc.RpcError as exc:
            return str(exc.code().name)
    return "OK"


def call(rp: RagpulseProcess, endpoint: str, state: str, number: int) -> int | str:
    headers = authorization(state, TOKENS[ENDPOINTS[endpoint]])
    spans = export(otlp_trace(100 + number, {}))
    if endpoint == "OTLP/gRPC":
        return grpc_export(rp, spans, headers)
    if endpoint == "OTLP/HTTP":
        url = f"http://{rp.host}:{rp.otlp_port}/v1/traces"
        return http("POST", url, spans, {"Content-Type": "application/x-protobuf", **headers}).status
    if endpoint == "POST /v1/feedback review":
        review = {"kind": "review", "trace_id": f"t-{state}", "scores": {"groundedness": 5, "answer_relevancy": 5}}
        return rp.post("/v1/feedback", json.dumps(review).encode(), headers).status
    return rp.get(endpoint.removeprefix("GET ").replace("{id}", "t-bad"), headers).status


def answers(rp: RagpulseProcess) -> Table:
    """Every endpoint with every token state: (endpoint, state) -> the HTTP status or the gRPC code."""
    return {(endpoint, state): call(rp, endpoint, state, n)
            for n, (endpoint, state) in enumerate((e, s) for e in ENDPOINTS for s in STATES)}


def expected(api: tuple[int, ...], review: tuple[int, ...], otlp: tuple[int, ...], grpc_codes: tuple[str, ...]) -> Table:
    """The table from each scope's answers to the token states (none, wrong, right, lower-case scheme)."""
    by_scope = {"api": api, "review": review, "ingest": otlp}
    table: Table = {}
    for endpoint, scope in ENDPOINTS.items():
        row = grpc_codes if endpoint == "OTLP/gRPC" else by_scope[scope]
        table.update({(endpoint, state): row[i] for i, state in enumerate(STATES)})
    return table


def judged_traces(rp: RagpulseProcess, reader: dict[str, str] | None, ingest: dict[str, str] | None = None) -> None:
    """A trace per token state (each review is of its own trace) and a bad one, all judged and audited; the bad case
    stored, when `reader` can read the API."""
    events = [trace(f"t-{state}", chunks=CHUNKS, answer="You can return them within 30 days of delivery.")
              for state in STATES]
    events.append(trace("t-bad", chunks=CHUNKS, answer="You can return them within 90 days of delivery."))
    assert rp.post("/v1/events", ndjson(events), ingest).json()["accepted"] == 5
    wait_until(lambda: rp.metrics().total("ragpulse_calibration_audited_total") == 5, what="5 audited judgments")
    if reader is not None:
        wait_until(lambda: rp.get("/api/badcases", reader).json()["count"] == 1, what="the bad case stored")


def warnings(rp: RagpulseProcess) -> list[dict[str, object]]:
    """The start's warnings about user-data scopes, once the start is logged."""
    wait_until(lambda: any(line.get("event") == "ragpulse started" for line in rp.log_lines()), what="the start logged")
    return [{k: v for k, v in line.items() if k != "timestamp"} for line in rp.log_lines()
            if line.get("level") == "warning" and "scope" in line]


def evaluation_review(number: int) -> bytes:
    """A span of an evaluator with a groundedness score of 4: a review over OTLP."""
    [root, *_] = spans = otlp_trace(number, {})
    event = root.events.add(name="gen_ai.evaluation.result", time_unix_nano=1_764_000_002_000_000_000)
    event.attributes.extend([kv("gen_ai.evaluation.name", "groundedness"), kv("gen_ai.evaluation.score.value", 4.0)])
    return export(spans)


def test_defaults_beyond_loopback_refuse_user_data_and_say_so_at_start(ragpulse_factory: Factory) -> None:
    host = outside_address()
    rp = ragpulse_factory(*JUDGED, host=host)
    judged_traces(rp, reader=None)
    assert answers(rp) == expected(api=(403,) * 4, review=(403,) * 4, otlp=(200,) * 4, grpc_codes=("OK",) * 4)
    refused = rp.get("/api/calibration")
    assert refused.json() == {
        "error": "unprotected", "setting": "http.api_token",
        "message": "GET /api/ (bad cases, calibration), GET /report is user data: without http.api_token set it is allowed on a "
                   "loopback address only. Set http.api_token (or http.api_token_file) and send it as Authorization: "
                   "Bearer <token>, or listen on 127.0.0.1, or set http.allow_unauthenticated_user_data: true"}
    review = rp.post("/v1/feedback", json.dumps({"kind": "review", "trace_id": "t-bad", "value": 1}).encode())
    assert (review.status, review.json()["setting"], review.json()["accepted"]) == (403, "http.review_token", 0)
    # Over OTLP, an evaluation score is a review: the span is taken, its review is not, and the answer says why.
    answer = http("POST", f"http://{host}:{rp.otlp_port}/v1/traces", evaluation_review(7),
                  {"Content-Type": "application/x-protobuf"})
    partial = ExportTraceServiceResponse.FromString(answer.body).partial_success
    assert (answer.status, partial.rejected_spans) == (200, 0)
    assert partial.error_message.startswith("1 review(s) (evaluation scores 1-5) not taken: review feedback is user "
                                            "data: without http.review_token set")
    s = rp.metrics()
    # The five reviews refused never reached the queue, so never calibration.
    assert s.get_value("ragpulse_events_refused_total", source="http", reason="unprotected") == 5
    assert s.get_value("ragpulse_events_refused_total", source="otlp", reason="unprotected") == 1
    assert s.get_value("ragpulse_events_received_total", source="http", type="feedback") == 0
    assert s.get_value("ragpulse_events_received_total", source="otlp", type="feedback") == 0
    assert s.total("ragpulse_calibration_reviews_total") == 0
    assert s.get_value("ragpulse_calibration_pending_reviews") == 0
    assert warnings(rp) == [
        {"event": "user data refused (403): no token on a non-loopback address", "level": "warning", "scope": "api",
         "endpoints": "GET /api/ (bad cases, calibration), GET /report", "listeners": [f"HTTP {host}:{rp.port}"],
         "setting": "http.api_token", "fix": "set http.api_token (or http.api_token_file), or listen on 127.0.0.1"},
        {"event": "user data refused (403): no token on a non-loopback address", "level": "warning",
         "scope": "review", "endpoints": "review feedback",
         "listeners": [f"HTTP {host}:{rp.port}", f"OTLP {host}:{rp.otlp_port}"], "setting": "http.review_token",
         "fix": "set http.review_token (or http.review_token_file), or listen on 127.0.0.1"},
    ]


def test_defaults_on_loopback_need_no_token(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory(*JUDGED)
    judged_traces(rp, reader={})
    assert answers(rp) == expected(api=(200,) * 4, review=(200,) * 4, otlp=(200,) * 4, grpc_codes=("OK",) * 4)
    wait_until(lambda: rp.metrics().total("ragpulse_calibration_reviews_total") == 4, what="the 4 reviews matched")
    assert warnings(rp) == []


def test_each_scope_takes_its_own_token_and_the_scheme_in_any_case(ragpulse_factory: Factory) -> None:
    host = outside_address()
    rp = ragpulse_factory(*JUDGED, *TOKEN_FLAGS, host=host)
    judged_traces(rp, reader=authorization("right", TOKENS["api"]), ingest=authorization("right", TOKENS["ingest"]))
    # OTLP has no token of its own (otlp.auth_token): http.auth_token guards both of its ports.
    assert answers(rp) == expected(api=(401, 401, 200, 200), review=(401, 401, 200, 200), otlp=(401, 401, 200, 200),
                                   grpc_codes=("UNAUTHENTICATED", "UNAUTHENTICATED", "OK", "OK"))
    wait_until(lambda: rp.metrics().total("ragpulse_calibration_reviews_total") == 2, what="the 2 reviews matched")
    # With no token or a wrong one, a request is refused unread: counted by request, its events never decoded.
    s = rp.metrics()
    assert s.get_value("ragpulse_http_requests_total", endpoint="/v1/feedback", code="401") == 2
    assert s.get_value("ragpulse_events_refused_total", source="http", reason="unauthorized") == 0
    # A token opens its own scope only.
    review = json.dumps({"kind": "review", "trace_id": "t-bad", "value": 1}).encode()
    crossed = {
        "ingest token on the API": rp.get("/api/badcases", authorization("right", TOKENS["ingest"])).status,
        "review token on the API": rp.get("/api/badcases", authorization("right", TOKENS["review"])).status,
        "ingest token on a review": rp.post("/v1/feedback", review, authorization("right", TOKENS["ingest"])).status,
        "api token on a review": rp.post("/v1/feedback", review, authorization("right", TOKENS["api"])).status,
        "review token on a trace": rp.post("/v1/events", json.dumps(trace("t-x")).encode(),
                                           authorization("right", TOKENS["review"])).status,
        "api token on OTLP": http("POST", f"http://{host}:{rp.otlp_port}/v1/traces", export(otlp_trace(99, {})),
                                  {"Content-Type": "application/x-protobuf", **authorization("right", TOKENS["api"])}).status,
    }
    assert crossed == dict.fromkeys(crossed, 401)
    refused = rp.post("/v1/feedback", review, authorization("right", TOKENS["ingest"]))
    assert refused.headers["WWW-Authenticate"] == "Bearer"
    assert refused.json() == {"accepted": 0, "error": "unauthorized", "setting": "http.review_token",
                              "message": "review feedback needs the bearer token of http.review_token (Authorization: "
                                         "Bearer <token>): it is missing or wrong"}
    s = rp.metrics()
    # Read, then refused: the review with the ingest token (twice) and the trace with the review token.
    assert s.get_value("ragpulse_events_refused_total", source="http", reason="unauthorized") == 3
    assert s.total("ragpulse_calibration_reviews_total") == 2  # the refused reviews never reached calibration
    assert warnings(rp) == []


def test_the_opt_out_serves_user_data_beyond_loopback_without_a_token_and_warns(ragpulse_factory: Factory) -> None:
    host = outside_address()
    rp = ragpulse_factory(*JUDGED, "--set", "http.allow_unauthenticated_user_data=true", host=host)
    judged_traces(rp, reader={})
    assert answers(rp) == expected(api=(200,) * 4, review=(200,) * 4, otlp=(200,) * 4, grpc_codes=("OK",) * 4)
    assert http("POST", f"http://{host}:{rp.otlp_port}/v1/traces", evaluation_review(8),
                {"Content-Type": "application/x-protobuf"}).status == 200
    wait_until(lambda: rp.metrics().get_value("ragpulse_events_received_total", source="otlp", type="feedback") == 1,
               what="the OTLP review taken")
    assert [(w["scope"], w["event"], w["because"]) for w in warnings(rp)] == [
        ("api", "user data open to the network without a token", "http.allow_unauthenticated_user_data is true"),
        ("review", "user data open to the network without a token", "http.allow_unauthenticated_user_data is true"),
    ]


@pytest.mark.unit
@pytest.mark.parametrize(("header", "token"), [
    ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("  Bearer   abc  ", "abc"),
    ("Basic abc", None), ("abc", None), ("Bearer", None), ("Bearer ", None), ("", None), ("Bearerabc", None),
])
def test_the_bearer_scheme_is_case_insensitive(header: str, token: str | None) -> None:
    assert bearer(header) == token


@pytest.mark.unit
@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("", False), ("192.0.2.2", False), ("ragpulse.internal", False),
])
def test_loopback_is_decided_by_the_bind_address(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.unit
def test_one_ingest_token_guards_every_ingest_port_unless_otlp_has_its_own() -> None:
    one = parse_config({"http": {"auth_token": "h"}})
    assert [(a.ingest.token, a.ingest.setting) for a in (access(one, "http"), access(one, "otlp"))] == [
        ("h", "http.auth_token"), ("h", "http.auth_token")]
    own = access(parse_config({"http": {"auth_token": "h"}, "otlp": {"auth_token": "o"}}), "otlp")
    assert (own.ingest.token, own.ingest.setting) == ("o", "otlp.auth_token")
    # Scopes never share a token: an ingest token set leaves the user-data scopes without one.
    assert (api_scope(one).token, access(one, "http").review.token) == (None, None)
