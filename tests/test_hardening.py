"""Regression tests for the defects a hostile-client run found (issue: hardening), one per defect,
against a running `ragpulse run` over real sockets (and the real broker for Kafka)."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import time
from collections.abc import Callable

import grpc
from helpers.events import ndjson, trace
from helpers.kafka_broker import KafkaArgs, consume_all, create_topic, produce
from helpers.net import http
from helpers.otlp_payload import export, otlp_trace
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

Factory = Callable[..., RagpulseProcess]
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def test_a_poison_kafka_message_goes_to_the_dead_letters_and_its_partition_goes_on(ragpulse_factory: Factory,
                                                                                 kafka_args: KafkaArgs) -> None:
    """Defect 1: a message nested 10,000 levels raised RecursionError, the consumer re-read it forever."""
    topic, dlq = f"poison-{time.monotonic_ns()}", f"poison-dlq-{time.monotonic_ns()}"
    create_topic(topic, partitions=2)
    create_topic(dlq)
    good = [json.dumps(trace(f"p{i}")).encode() for i in range(40)]
    poison = b'{"type": "trace", "trace_id": "x", "query": "q", "answer": "a", "attributes": {"k": ' + nested(10_000) + b"}}"
    deep_attributes = json.dumps(trace("deep", attributes={"a": json.loads(nested(20))})).encode()  # 21 levels
    # Keys put the poison first on both partitions, with good messages behind it.
    produce(topic, [poison, poison, deep_attributes, *good], [b"a", b"b", b"a", *(str(i).encode() for i in range(40))])
    rp = ragpulse_factory(*kafka_args(topic, f"group-{time.monotonic_ns()}", dead_letters=dlq))
    wait_until(lambda: rp.metrics().total("ragpulse_traces_total") == 40
               and rp.metrics().total("ragpulse_kafka_consumer_lag_records", topic=topic) == 0, timeout=60,
               what="every good message behind the poison")
    s = rp.metrics()
    assert s.get_value("ragpulse_events_invalid_total", source="kafka", reason="too_deep") == 3
    assert s.get_value("ragpulse_kafka_dead_letters_total", topic=topic) == 3
    assert s.get_value("ragpulse_kafka_records_consumed_total", topic=topic) == 43
    dead = consume_all(dlq, 3)
    assert sorted(dict(m.headers)["ragpulse.error.reason"] for m in dead) == [b"too_deep"] * 3
    assert b"limits.max_attribute_depth=16" in [dict(m.headers)["ragpulse.error.message"] for m in dead if m.value == deep_attributes][0]


def test_one_bad_otlp_span_costs_its_trace_or_field_never_the_assembler(ragpulse_factory: Factory) -> None:
    """Defect 2: +Inf token counts, an array or kvlist operation name, a 4,300-digit document index or
    JSON nested ~3,000 levels killed the assembly task silently."""
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.1")
    url = f"http://127.0.0.1:{rp.otlp_port}/v1/traces"
    deep_json = "[" * 3000 + "]" * 3000
    kvlist = AnyValue()
    kvlist.kvlist_value.values.append(KeyValue(key="a", value=AnyValue(string_value="chat")))
    array = AnyValue()
    array.array_value.values.append(AnyValue(string_value="chat"))
    hostile = [
        otlp_trace(1, {}, llm={"llm.token_count.prompt": float("inf")}),
        otlp_trace(2, {}, llm={"gen_ai.operation.name": array}),
        otlp_trace(3, {}, llm={"gen_ai.operation.name": kvlist}),
        otlp_trace(4, {}, retriever={"retrieval.documents." + "9" * 4300 + ".document.content": "x"}),
        otlp_trace(5, {"metadata": deep_json, "output.value": deep_json}),
        otlp_trace(6, {}, llm={"llm.token_count.prompt": 2**52}, second_llm={"llm.token_count.prompt": 2**52}),  # sum > 2^53-1
    ]
    response = http("POST", url, export(*hostile), PROTOBUF)
    assert response.status == 200
    after = http("POST", url, export(otlp_trace(7, {})), PROTOBUF)  # the assembler is still there
    assert after.status == 200
    wait_until(lambda: rp.metrics().get_value("ragpulse_otlp_traces_total", outcome="complete") == 7, what="7 traces assembled")
    s = rp.metrics()
    assert s.total("ragpulse_traces_total", app="hostile") == 7
    assert s.get_value("ragpulse_component_restarts_total", component="span_assembler") == 0
    # Token counts that are no counts make usage "not reported": only 5 traces report tokens (10 each).
    assert s.total("ragpulse_tokens_total", kind="prompt") == 10 * 5  # traces 1 and 6 report none
    ready = http("GET", rp.url + "/readyz")
    assert ready.status == 200 and "notes" not in ready.json()
    assert rp.terminate() == 0
    assert any(line.get("event") == "ragpulse stopped" for line in rp.log_lines())


def test_hostile_http_bodies_are_4xx_counted_and_good_lines_survive(ragpulse_factory: Factory) -> None:
    """Defects 4, 5, 6: deep JSON and a false Content-Encoding were 500s (uncounted); integers past
    2^64-1 were accepted then lost; good lines behind an invalid first line without an NDJSON type vanished."""
    rp = ragpulse_factory()
    deep = b'{"type": "trace", "trace_id": "deep", "query": "q", "answer": "a", "x": ' + nested(997) + b"}"
    lines = ndjson([trace("g1")]) + b"\n" + deep + b"\n" + ndjson([trace("g2")])
    response = rp.post("/v1/events", lines, {"Content-Type": "application/x-ndjson"})
    assert response.status == 200
    body = response.json()
    assert (body["accepted"], body["rejected"]) == (2, 1)
    assert body["errors"][0]["index"] == 1 and body["errors"][0]["reason"] == "too_deep"
    assert rp.post("/v1/events", deep).json()["errors"][0]["reason"] == "too_deep"  # one object, no NDJSON

    otlp = http("POST", f"http://127.0.0.1:{rp.otlp_port}/v1/traces", b'{"resourceSpans": ' + nested(5000) + b"}",
                {"Content-Type": "application/json"})
    assert otlp.status == 400 and otlp.json()["code"] == 3

    gzip_lie = rp.post("/v1/events", ndjson([trace("g3")]), {"Content-Encoding": "gzip"})
    assert gzip_lie.status == 400 and gzip_lie.json()["error"] == "bad_encoding"

    huge = rp.post("/v1/events", ndjson([trace("big", usage={"prompt_tokens": 2**64 + 5}),
                                          trace("rank", chunks=[{"text": "x", "rank": 2**70}])]),
                   {"Content-Type": "application/x-ndjson"})
    assert huge.status == 400
    assert [(e["field"], e["reason"]) for e in huge.json()["errors"]] == [
        ("usage.prompt_tokens", "invalid_value"), ("chunks[0].rank", "invalid_value")]

    # No NDJSON content type, the first line valid JSON but no valid event: each line on its own.
    mixed = ndjson([{"type": "trace", "trace_id": "bad"}, trace("g4"), trace("g5")])
    answer = rp.post("/v1/events", mixed)
    assert answer.status == 200 and (answer.json()["accepted"], answer.json()["rejected"]) == (2, 1)

    long_id = rp.post("/v1/events", json.dumps(trace("t" * 400_000)).encode())
    assert long_id.status == 400 and long_id.json()["errors"][0]["field"] == "trace_id"

    s = rp.wait_processed(traces=4)
    assert s.get_value("ragpulse_events_processed_total", type="trace") == 4
    assert s.get_value("ragpulse_http_requests_total", endpoint="/v1/events", code="400") == 4
    assert s.total("ragpulse_http_requests_total", code="500") == 0
    assert s.get_value("ragpulse_stage_errors_total", stage="judge_sampler") == 0


def test_grpc_bit_flipped_protobuf_is_invalid_argument(ragpulse_factory: Factory) -> None:
    """Defect 4: a corrupted protobuf over gRPC was answered UNKNOWN."""
    rp = ragpulse_factory()
    good = export(otlp_trace(1, {}))
    corrupted = bytearray(good)
    corrupted[1] ^= 0x80  # the top bit of the first length: the field now runs past the end
    try:
        ExportTraceServiceRequest.FromString(bytes(corrupted))
        raise AssertionError("the corruption must make the protobuf unreadable")
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError
        assert "Error parsing message" in str(exc) or "truncated" in str(exc).lower(), exc

    async def call(body: bytes) -> grpc.StatusCode:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{rp.grpc_port}") as channel:
            export_rpc = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                             request_serializer=None, response_deserializer=None)
            try:
                await export_rpc(body, timeout=10)
                return grpc.StatusCode.OK
            except grpc.aio.AioRpcError as exc:
                return exc.code()

    assert asyncio.run(call(bytes(corrupted))) == grpc.StatusCode.INVALID_ARGUMENT
    assert asyncio.run(call(b"\xff" * 64)) == grpc.StatusCode.INVALID_ARGUMENT
    assert asyncio.run(call(good)) == grpc.StatusCode.OK
    s = rp.metrics()
    assert s.get_value("ragpulse_otlp_requests_total", encoding="grpc", code="INVALID_ARGUMENT") == 2


def eof_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (whatever it answers first)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except TimeoutError:
        return False


def closed_now(socks: list[socket.socket]) -> int:
    """How many of `socks` the server has closed already."""
    readable, _, _ = select.select(socks, [], [], 0)
    return sum(1 for sock in readable if sock.recv(1) == b"")


def test_slow_heads_slow_bodies_and_idle_connections_are_closed(ragpulse_factory: Factory) -> None:
    """Defect 8: a 1 GB Content-Length with 8 bytes sent, unfinished heads and idle connections were held."""
    rp = ragpulse_factory("--set", "http.idle_timeout_seconds=1", "--set", "http.body_timeout_seconds=1")
    slow = []
    for _ in range(20):  # slowloris: unfinished request heads
        sock = socket.create_connection(("127.0.0.1", rp.port))
        sock.sendall(b"POST /v1/events HTTP/1.1\r\nHost: x\r\n")
        slow.append(sock)
    idle = socket.create_connection(("127.0.0.1", rp.port))
    lying = socket.create_connection(("127.0.0.1", rp.port))
    lying.sendall(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000000000\r\n\r\n12345678")
    # A connection made after them served: the server has taken them all in (it accepts in order), their timers run.
    wait_until(lambda: rp.get("/healthz").status == 200, what="a later connection served")
    for sock in slow[:5]:
        sock.sendall(b"X-Trickle: 1\r\n")  # a trickle does not keep a head open
    started = time.monotonic()
    lying.settimeout(5)
    answer = lying.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert all(eof_within(sock, 5) for sock in [*slow, idle, lying])
    assert time.monotonic() - started < 3  # all of them within the 1 s timeouts, give or take
    for sock in [*slow, idle, lying]:
        sock.close()
    s = rp.metrics()
    assert s.get_value("ragpulse_http_body_timeouts_total", listener="http") == 1
    assert s.get_value("ragpulse_http_requests_total", endpoint="/v1/events", code="408") == 1


def test_connections_over_the_cap_are_closed_at_accept_and_counted(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory("--set", "http.max_connections=30", "--set", "otlp.max_connections=5")
    crowd = [socket.create_connection(("127.0.0.1", rp.port)) for _ in range(40)]
    otlp_crowd = [socket.create_connection(("127.0.0.1", rp.otlp_port)) for _ in range(8)]
    wait_until(lambda: closed_now(crowd) >= 10 and closed_now(otlp_crowd) >= 3, what="the connections over the caps closed")
    closed, otlp_closed = closed_now(crowd), closed_now(otlp_crowd)
    assert (closed, otlp_closed) == (10, 3)  # and no more: the 11th refusal below is the one connection more
    try:  # the crowd holds all 30: one more is closed too, whatever it asks
        rp.get("/healthz")
        raise AssertionError("a 31st connection was served")
    except ConnectionError:
        pass
    for sock in [*crowd, *otlp_crowd]:
        sock.close()
    refused_retries = []

    def served() -> bool:
        try:
            return rp.get("/healthz").status == 200
        except ConnectionError:  # the server has not seen the crowd leave yet
            refused_retries.append(1)
            return False

    wait_until(served, what="room again once the crowd left")
    s = rp.metrics()
    assert s.get_value("ragpulse_http_connections_refused_total", listener="http") == 11 + len(refused_retries)
    assert s.get_value("ragpulse_http_connections_refused_total", listener="otlp") == 3
