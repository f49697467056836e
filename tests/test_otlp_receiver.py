"""The OTLP/HTTP receiver of a running `ragpulse run`, fed by the real OTLP exporter and by hand."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from helpers.events import envelope
from helpers.net import http
from helpers.otlp_shapes import Collect, genai_trace, openinference_trace, provider
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

Factory = Callable[..., RagpulseProcess]
SHOP = {"app": "shop-bot", "release": "1.2.3"}


def exporter(rp: RagpulseProcess, compression: Compression = Compression.NoCompression) -> OTLPSpanExporter:
    return OTLPSpanExporter(endpoint=f"http://127.0.0.1:{rp.otlp_port}/v1/traces", compression=compression)


def test_instrumented_traces_over_the_real_otlp_exporter_become_metrics(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.2", "--set", "otlp.route_attribute=rag.route")
    processor = BatchSpanProcessor(exporter(rp, Compression.Gzip))
    tracer_provider = provider(processor)
    openinference_trace(tracer_provider)
    openinference_trace(tracer_provider, answer="I'm sorry, I couldn't find any information about that.")
    genai_trace(tracer_provider)
    assert tracer_provider.force_flush(10_000)

    wait_until(lambda: rp.metrics().total("ragpulse_traces_total") == 3, what="3 assembled traces")
    s = rp.metrics()
    returns = {"route": "returns", "model": "gpt-4o-mini", **SHOP}
    assert s.get_value("ragpulse_traces_total", **returns) == 2
    assert s.get_value("ragpulse_traces_total", route="unknown", model="gpt-4o-2024-08-06", **SHOP) == 1
    assert s.get_value("ragpulse_fallbacks_total", rule="en_not_found", **returns) == 1  # the answer came through
    assert s.get_value("ragpulse_retrieval_chunks_sum", **returns) == 6
    assert s.get_value("ragpulse_retrieval_top_score_bucket", le="0.9", **returns) == 0
    assert s.get_value("ragpulse_retrieval_top_score_bucket", le="1.0", **returns) == 2
    assert s.get_value("ragpulse_tokens_total", kind="prompt", **returns) == 840  # leaf LLM spans only
    assert s.get_value("ragpulse_events_received_total", source="otlp", type="trace") == 3
    assert s.get_value("ragpulse_otlp_spans_received_total", encoding="protobuf") == 2 * 5 + 3  # five spans an OpenInference trace, three a GenAI one
    assert s.get_value("ragpulse_otlp_traces_total", outcome="complete") == 3
    assert s.get_value("ragpulse_otlp_requests_total", encoding="protobuf", code="200") >= 1
    assert s.get_value("ragpulse_source_up", source="otlp") == 1


def hex_span(trace_id: str, span_id: str, parent: str | None, name: str, attributes: dict[str, object]) -> dict[str, object]:
    def any_value(value: object) -> dict[str, object]:
        if isinstance(value, bool):
            return {"boolValue": value}
        if isinstance(value, int):
            return {"intValue": str(value)}  # int64 as a string, as OTLP/JSON writes it
        if isinstance(value, float):
            return {"doubleValue": value}
        return {"stringValue": str(value)}

    span: dict[str, object] = {"traceId": trace_id, "spanId": span_id, "name": name, "kind": 1,
                               "startTimeUnixNano": "1764000000000000000", "endTimeUnixNano": "1764000001500000000",
                               "attributes": [{"key": k, "value": any_value(v)} for k, v in attributes.items()]}
    if parent:
        span["parentSpanId"] = parent
    return span


def otlp_json(*spans: dict[str, object]) -> bytes:
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "json-bot"}}]},
        "scopeSpans": [{"scope": {"name": "hand"}, "spans": list(spans)}]}]}).encode()


TRACE = "5b8efff798038103d269b633813fc60c"


def test_otlp_json_with_hex_ids_partial_success_and_errors(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.1", "--set", "otlp.max_body_bytes=20000")
    url = f"http://127.0.0.1:{rp.otlp_port}/v1/traces"
    root = hex_span(TRACE, "eee19b7ec3c1b174", None, "query", {"openinference.span.kind": "CHAIN",
                                                                "input.value": "q?", "output.value": "An answer."})
    retriever = hex_span(TRACE, "eee19b7ec3c1b175", "eee19b7ec3c1b174", "retrieve", {
        "openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.id": "d1",
        "retrieval.documents.0.document.content": "text", "retrieval.documents.0.document.score": 0.5})
    bad = hex_span("abc", "eee19b7ec3c1b176", None, "broken", {})
    # Children first, root in a second request: assembly waits for the root.
    first = http("POST", url, otlp_json(retriever, bad), {"Content-Type": "application/json"})
    assert first.status == 200
    partial = first.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "traceId 'abc' is neither hex nor base64" in partial["errorMessage"]
    second = http("POST", url, gzip.compress(otlp_json(root)), {"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert (second.status, second.json()) == (200, {})
    wait_until(lambda: rp.metrics().get_value("ragpulse_traces_total", app="json-bot", route="unknown",
                                              model="unknown", release="unknown") == 1, what="the JSON trace")
    s = rp.metrics()
    assert s.get_value("ragpulse_answer_latency_seconds_sum", app="json-bot", route="unknown", model="unknown", release="unknown") == 1.5
    assert s.get_value("ragpulse_otlp_spans_rejected_total", reason="invalid_trace_id") == 1
    # the request with "abc" for an id took the general path; the root's was read by the crate
    assert s.get_value("ragpulse_otlp_json_general_total") == 1

    garbage = http("POST", url, b"\xff\x00garbage", {"Content-Type": "application/x-protobuf"})
    assert garbage.status == 400 and b"not an OTLP protobuf" in garbage.body
    assert http("POST", url, b"{", {"Content-Type": "application/json"}).json()["code"] == 3
    assert http("POST", url, b"x" * 30000, {"Content-Type": "application/x-protobuf"}).status == 413
    assert http("POST", url, b"{}", {"Content-Type": "text/plain"}).status == 415
    assert rp.metrics().get_value("ragpulse_otlp_requests_total", encoding="other", code="415") == 1  # not "protobuf"
    empty = http("POST", url, b"", {"Content-Type": "application/x-protobuf"})
    assert empty.status == 200 and ExportTraceServiceResponse.FromString(empty.body).partial_success.rejected_spans == 0


CUT = "caf\u00e9 au lait"  # in the bad span, its \u00e9 cut after its first byte: what a writer cutting at a byte limit makes


def _attributes(values: dict[str, object]) -> list[KeyValue]:
    return [KeyValue(key=key, value=AnyValue(double_value=value) if isinstance(value, float) else AnyValue(string_value=value))
            for key, value in values.items()]  # type: ignore[arg-type]


def ten_traces_and_a_bad_span(app: str) -> ExportTraceServiceRequest:
    """Ten RAG traces (a root with the question and answer, a retriever with its document) and, among them, the one
    span of an eleventh trace, whose input.value is CUT."""
    spans = []
    for n in range(11):
        trace_id, root_id = hashlib.md5(f"{app} {n}".encode()).digest(), (2 * n + 1).to_bytes(8, "big")  # 16 bytes
        times = {"start_time_unix_nano": 1764000000000000000, "end_time_unix_nano": 1764000001500000000}
        root = Span(trace_id=trace_id, span_id=root_id, name="broken" if n == 5 else "query", **times, attributes=_attributes(
            {"openinference.span.kind": "CHAIN", "input.value": CUT if n == 5 else f"Question {n}?", "output.value": "An answer."}))
        spans.append(root)
        if n != 5:
            spans.append(Span(trace_id=trace_id, span_id=(2 * n + 2).to_bytes(8, "big"), parent_span_id=root_id, name="retrieve",
                              **times, attributes=_attributes({
                                  "openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.id": "d1",
                                  "retrieval.documents.0.document.content": "text", "retrieval.documents.0.document.score": 0.5})))
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource={"attributes": _attributes({"service.name": app})}, scope_spans=[ScopeSpans(scope={"name": "hand"}, spans=spans)])])


def _hex_ids(value: object) -> object:
    """MessageToDict's OTLP/JSON with the ids in hex, as exporters write them."""
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: base64.b64decode(item).hex() if key in ("traceId", "spanId", "parentSpanId") else _hex_ids(item)
            for key, item in value.items()}


def test_a_span_with_invalid_utf8_costs_only_itself_on_every_protocol(ragpulse_factory: Factory) -> None:
    """Ten traces and one span with a cut multibyte character in one request, which the protobuf runtime refuses
    whole (400 INVALID_ARGUMENT, not retried: ten traces lost): the span is rejected as a partial success naming
    what is wrong, and the ten traces are counted, over OTLP/HTTP protobuf, OTLP/HTTP JSON (a lone surrogate escape,
    JSON's form of it) and gRPC."""
    import grpc

    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.1")
    url = f"http://127.0.0.1:{rp.otlp_port}/v1/traces"
    problem = "span 'broken': attribute 'input.value' is not valid UTF-8"

    body = ten_traces_and_a_bad_span("utf8-protobuf").SerializeToString()
    assert body.count(CUT.encode()) == 1
    answer = http("POST", url, body.replace(CUT.encode(), b"caf\xc3x au lait"), {"Content-Type": "application/x-protobuf"})
    assert answer.status == 200
    partial = ExportTraceServiceResponse.FromString(answer.body).partial_success
    assert (partial.rejected_spans, partial.error_message) == (1, problem)

    body = json.dumps(_hex_ids(json_format.MessageToDict(ten_traces_and_a_bad_span("utf8-json")))).encode()
    assert body.count(b"caf\\u00e9 au lait") == 1
    answer = http("POST", url, body.replace(b"caf\\u00e9", b"caf\\ud800"), {"Content-Type": "application/json"})
    assert (answer.status, answer.json()) == (200, {"partialSuccess": {"rejectedSpans": "1", "errorMessage":
        "span 'broken': attribute 'input.value' holds a lone surrogate escape, which is not valid Unicode"}})

    body = ten_traces_and_a_bad_span("utf8-grpc").SerializeToString()
    with grpc.insecure_channel(f"127.0.0.1:{rp.grpc_port}") as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                     response_deserializer=ExportTraceServiceResponse.FromString)
        response = export(body.replace(CUT.encode(), b"caf\xc3x au lait"), timeout=10)
    assert (response.partial_success.rejected_spans, response.partial_success.error_message) == (1, problem)

    apps = ("utf8-protobuf", "utf8-json", "utf8-grpc")
    unknown = {"route": "unknown", "model": "unknown", "release": "unknown"}
    wait_until(lambda: all(rp.metrics().get_value("ragpulse_traces_total", app=app, **unknown) == 10 for app in apps),
               what="ten traces on each protocol")
    wait_until(lambda: rp.metrics().get_value("ragpulse_otlp_traces_in_flight") == 0, what="no trace in flight")
    s = rp.metrics()
    assert [s.get_value("ragpulse_traces_total", app=app, **unknown) for app in apps] == [10, 10, 10]
    assert s.get_value("ragpulse_otlp_traces_total", outcome="complete") == 30
    assert s.get_value("ragpulse_otlp_spans_rejected_total", reason="invalid_utf8") == 3
    assert [s.get_value("ragpulse_otlp_spans_received_total", encoding=kind) for kind in ("protobuf", "json", "grpc")] == [20] * 3
    assert s.get_value("ragpulse_otlp_json_general_total") == 1  # the crate's reader refuses a lone surrogate: Python reads it


def test_bearer_token_on_the_otlp_receiver(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory(env={"RAGPULSE_OTLP__AUTH_TOKEN": "otlp-secret"})
    url = f"http://127.0.0.1:{rp.otlp_port}/v1/traces"
    assert http("POST", url, otlp_json(), {"Content-Type": "application/json"}).status == 401
    ok = http("POST", url, otlp_json(), {"Content-Type": "application/json", "Authorization": "Bearer otlp-secret"})
    assert ok.status == 200


def test_grpc_exporter_and_tls_with_bearer_token_on_both_protocols(ragpulse_factory: Factory, tmp_path: Path) -> None:
    import grpc
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.1", "--set", f"otlp.tls_cert_file={cert}",
                          "--set", f"otlp.tls_key_file={key}", env={"RAGPULSE_OTLP__AUTH_TOKEN": "tok"})
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())

    def grpc_exporter(token: str) -> GrpcExporter:
        return GrpcExporter(endpoint=f"localhost:{rp.grpc_port}", credentials=credentials,
                            headers={"authorization": f"Bearer {token}"}, timeout=5)

    # A wrong token is refused (UNAUTHENTICATED is not retried by the exporter).
    collect = Collect()
    openinference_trace(provider(SimpleSpanProcessor(collect)))
    assert grpc_exporter("wrong").export(collect.spans) == SpanExportResult.FAILURE

    good = provider(BatchSpanProcessor(grpc_exporter("tok")))
    openinference_trace(good)
    genai_trace(good)
    assert good.force_flush(10_000)
    wait_until(lambda: rp.metrics().total("ragpulse_traces_total") == 2, what="2 traces over gRPC with TLS")
    s = rp.metrics()
    assert s.get_value("ragpulse_otlp_spans_received_total", encoding="grpc") == 5 + 3
    assert s.get_value("ragpulse_otlp_requests_total", encoding="grpc", code="UNAUTHENTICATED") == 1

    # OTLP/HTTP on the same receiver is TLS too.
    import ssl
    import urllib.request

    request = urllib.request.Request(f"https://localhost:{rp.otlp_port}/v1/traces", data=otlp_json(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer tok"})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=str(cert)), timeout=10) as response:
        assert response.status == 200


def test_evaluation_events_become_feedback_even_after_the_trace(ragpulse_factory: Factory) -> None:
    from opentelemetry import trace as otel_trace

    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.1")
    tracer_provider = provider(BatchSpanProcessor(exporter(rp)))
    collect = Collect()
    tracer_provider.add_span_processor(SimpleSpanProcessor(collect))
    openinference_trace(tracer_provider)
    assert tracer_provider.force_flush(10_000)
    wait_until(lambda: rp.metrics().total("ragpulse_traces_total") == 1, what="the trace")
    [root] = [span for span in collect.spans if span.parent is None]
    evaluated = otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(root.get_span_context()))
    tracer = tracer_provider.get_tracer("evaluator")
    # Later, an evaluator records its results on a span of the evaluated trace.
    with tracer.start_as_current_span("evaluate", context=evaluated) as span:
        for name, score, label in (("groundedness", 4.0, None), ("relevance", 0.2, "not_relevant"),
                                   ("toxicity", 0.01, None), ("correctness", None, "pass")):
            attributes = {"gen_ai.evaluation.name": name}
            if score is not None:
                attributes["gen_ai.evaluation.score.value"] = score
            if label is not None:
                attributes["gen_ai.evaluation.score.label"] = label
            span.add_event("gen_ai.evaluation.result", attributes)
    assert tracer_provider.force_flush(10_000)
    wait_until(lambda: rp.metrics().total("ragpulse_feedback_total") == 3, what="3 feedback events")
    s = rp.metrics()
    assert s.get_value("ragpulse_feedback_total", kind="review", value="4") == 1
    assert s.get_value("ragpulse_feedback_total", kind="thumbs", value="down") == 1
    assert s.get_value("ragpulse_feedback_total", kind="thumbs", value="up") == 1
    assert s.get_value("ragpulse_otlp_feedback_unmapped_total") == 1
    assert s.get_value("ragpulse_events_received_total", source="otlp", type="feedback") == 3
    assert s.get_value("ragpulse_otlp_spans_dropped_total", reason="late_span") == 1  # the span itself, not its feedback


def test_backpressure_and_shutdown_answers_on_both_protocols() -> None:
    import asyncio

    import aiohttp
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
    from prometheus_client import CollectorRegistry

    from ragpulse.config import LimitsConfig, parse_config
    from ragpulse.collector.decode import EventDecoder
    from ragpulse.collector.events import TraceEvent
    from ragpulse.collector.queue import EventQueue
    from ragpulse.sources.access import access
    from ragpulse.sources.otlp.intake import SpanIntake
    from ragpulse.sources.otlp.receiver import OtlpReceiver

    async def main() -> None:
        registry = CollectorRegistry()
        queue = EventQueue("pipeline", 2, 1 << 30, registry)  # nobody consumes it
        whole = parse_config({"otlp": {"host": "127.0.0.1", "http_port": 0, "grpc_port": 0}})
        config = whole.otlp
        intake = SpanIntake(config, EventDecoder(LimitsConfig(), "otlp"), queue, registry,
                            max_event_bytes=LimitsConfig().max_event_bytes)
        receiver = OtlpReceiver(config, intake, queue, registry, access=access(whole, "otlp"))
        await receiver.start()
        url = f"http://127.0.0.1:{receiver.http_port}/v1/traces"
        body = ExportTraceServiceRequest().SerializeToString()
        async with aiohttp.ClientSession() as session, grpc.aio.insecure_channel(f"127.0.0.1:{receiver.grpc_port}") as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)

            async def post() -> tuple[int, str | None, bytes]:
                async with session.post(url, data=body, headers={"Content-Type": "application/x-protobuf"}) as response:
                    return response.status, response.headers.get("Retry-After"), await response.read()

            async def grpc_code() -> grpc.StatusCode:
                try:
                    await stub.Export(ExportTraceServiceRequest(), timeout=5)
                    return grpc.StatusCode.OK
                except grpc.aio.AioRpcError as exc:
                    return exc.code()

            assert (await post())[0] == 200 and await grpc_code() == grpc.StatusCode.OK
            event = TraceEvent(trace_id="t", query="q", answer="a")
            assert queue.offer([envelope(event, 1), envelope(event, 2)])  # now full
            status, retry_after, status_body = await post()
            assert (status, retry_after) == (429, "1")
            assert status_body.startswith(b"\x08\x08")  # google.rpc.Status code 8, RESOURCE_EXHAUSTED
            assert await grpc_code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            await queue.get(10)
            await receiver.stop_intake()
            status, retry_after, _ = await post()
            assert (status, retry_after) == (503, "1")
            assert await grpc_code() == grpc.StatusCode.UNAVAILABLE
        await receiver.close()

    asyncio.run(main())
