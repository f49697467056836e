"""Fuzzing every entry point with hypothesis, deterministic seeds, a bounded budget (issue: hardening).

Two `ragpulse run`s (one for HTTP ingest, one for OTLP/HTTP and OTLP/gRPC, on real sockets, every
pipeline stage, the local judge) take thousands of generated requests. Whatever comes in:
no 5xx (gRPC: no UNKNOWN or INTERNAL), no dead or restarted task, no stage error, what was
accepted is what is counted, and the process memory stays flat after warm-up. Kafka message
values and config files are fuzzed at their decoders: a value is an event or that message's
EventError, a config is a Config or a ConfigError, never another exception.
"""

from __future__ import annotations

import gzip
import json
import math
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from helpers.metrics import Samples
from helpers.processes import rss_bytes
from helpers.sidecar import start_ragpulse
from helpers.waiting import wait_until
from prometheus_client import CollectorRegistry, Counter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from ragpulse.collector.decode import EventDecoder
from ragpulse.config import Config, KafkaTopic, LimitsConfig, load_config
from ragpulse.errors import ConfigError, EventError
from ragpulse.sources.kafka import json_codec, otlp_proto_codec

pytestmark = pytest.mark.beside  # run in scripts/test's second pytest (pyproject.toml)

FUZZ: dict[str, Any] = {"derandomize": True, "database": None, "deadline": None, "print_blob": True,
                        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                                  HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture]}

# -- generated inputs ------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(
    allow_nan=False) | st.text(max_size=40)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=10), inner, max_size=4), max_leaves=20)
FIELDS = ["type", "trace_id", "query", "answer", "timestamp", "session_id", "app", "route", "model", "release", "chunks",
          "fallback", "latency_ms", "usage", "attributes", "kind", "value", "scores", "feedback_id", "comment"]


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly-valid events with some fields replaced by anything: what a buggy producer sends."""
    base: dict[str, Any] = draw(st.sampled_from([
        {"type": "trace", "trace_id": "t", "query": "Can I return shoes?", "answer": "Yes, within 30 days.",
         "chunks": [{"text": "Shoes can be returned within 30 days.", "id": "c1", "score": 0.8}]},
        {"type": "feedback", "kind": "thumbs", "trace_id": "t", "value": "down"},
        {"type": "feedback", "kind": "review", "trace_id": "t", "scores": {"groundedness": 2}},
    ]))
    event = dict(base, trace_id=draw(st.text(min_size=1, max_size=12)))
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=4)):
        event[name] = draw(json_values)
    return event


@st.composite
def http_bodies(draw: st.DrawFn) -> tuple[bytes, dict[str, str]]:
    shape = draw(st.sampled_from(["one", "array", "ndjson", "ndjson_untyped", "raw", "deep", "gzip", "gzip_lie"]))
    headers = {"Content-Type": "application/json"}
    items = draw(st.lists(events(), min_size=1, max_size=5))
    if shape == "one":
        body = json.dumps(items[0]).encode()
    elif shape == "array":
        body = json.dumps(items).encode()
    elif shape in ("ndjson", "ndjson_untyped"):
        body = b"\n".join(json.dumps(i).encode() for i in items)
        if shape == "ndjson":
            headers["Content-Type"] = "application/x-ndjson"
    elif shape == "deep":
        levels = draw(st.integers(min_value=500, max_value=20_000))
        body = b'{"type": "trace", "trace_id": "d", "query": "q", "answer": "a", "attributes": {"x": ' + b"[" * levels + b"]" * levels + b"}}"
    else:
        body = draw(st.binary(max_size=300)) if shape == "raw" else json.dumps(items[0]).encode()
    if shape == "gzip":
        body = gzip.compress(body)
    if shape in ("gzip", "gzip_lie"):
        headers["Content-Encoding"] = "gzip"
    return body, headers


ATTRIBUTE_KEYS = [
    "openinference.span.kind", "input.value", "output.value", "output.mime_type", "llm.model_name",
    "llm.token_count.prompt", "llm.token_count.completion", "retrieval.documents.0.document.content",
    "retrieval.documents.0.document.id", "retrieval.documents.1.document.score", "reranker.output_documents.0.document.content",
    "llm.output_messages.0.message.content", "llm.input_messages.0.message.role", "llm.input_messages.0.message.content",
    "gen_ai.operation.name", "gen_ai.retrieval.documents", "gen_ai.retrieval.query.text", "gen_ai.usage.input_tokens",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.conversation.id", "session.id", "user.id", "metadata",
    "tag.tags", "traceloop.span.kind", "traceloop.entity.name", "traceloop.entity.input", "traceloop.entity.output",
    "gen_ai.prompt.0.content", "gen_ai.completion.0.content", "llm.prompts", "llm.request.type",
]
KIND_VALUES = ["LLM", "RETRIEVER", "RERANKER", "CHAIN", "chat", "retrieval", "task"]


def _any_values() -> st.SearchStrategy[AnyValue]:
    def build(kind: str, payload: Any) -> AnyValue:
        value = AnyValue()
        if kind == "array":
            value.array_value.values.extend(payload)
        elif kind == "kvlist":
            value.kvlist_value.values.extend(KeyValue(key=k, value=v) for k, v in payload)
        else:
            setattr(value, kind, payload)
        return value

    leaves = (
        st.builds(build, st.just("string_value"), st.sampled_from(KIND_VALUES) | st.text(max_size=30) | st.builds(
            lambda n: "[" * n + "]" * n, st.integers(0, 4000)) | st.builds(json.dumps, json_values))
        | st.builds(build, st.just("int_value"), st.integers(-(2**63), 2**63 - 1))
        | st.builds(build, st.just("double_value"), st.floats(allow_nan=True, allow_infinity=True))
        | st.builds(build, st.just("bool_value"), st.booleans())
        | st.builds(build, st.just("bytes_value"), st.binary(max_size=20))
        | st.just(AnyValue())
    )
    return st.recursive(leaves, lambda inner: st.builds(build, st.just("array"), st.lists(inner, max_size=3))
                        | st.builds(build, st.just("kvlist"), st.lists(st.tuples(st.text(max_size=8), inner), max_size=3)),
                        max_leaves=8)


ANY_VALUES = _any_values()  # built once: a recursive strategy is costly to build per draw


@st.composite
def otlp_requests(draw: st.DrawFn) -> bytes:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="fuzz")))
    spans = resource.scope_spans.add().spans
    trace_id = draw(st.binary(min_size=16, max_size=16)) if draw(st.booleans()) else draw(st.binary(max_size=17))
    for index in range(draw(st.integers(1, 4))):
        keys = draw(st.lists(st.sampled_from(ATTRIBUTE_KEYS) | st.text(max_size=20), max_size=6))
        attributes = [KeyValue(key=key, value=draw(ANY_VALUES)) for key in keys]
        if draw(st.booleans()):
            attributes.append(KeyValue(key="openinference.span.kind", value=AnyValue(string_value=draw(st.sampled_from(KIND_VALUES)))))
        spans.add(trace_id=trace_id, span_id=(index + 1).to_bytes(8, "big"),
                  parent_span_id=b"" if index == 0 else (1).to_bytes(8, "big"), name=draw(st.text(max_size=10)),
                  start_time_unix_nano=draw(st.integers(0, 2**64 - 1)), end_time_unix_nano=draw(st.integers(0, 2**64 - 1)),
                  attributes=attributes)
    body = request.SerializeToString()
    if draw(st.booleans()) and body:  # corrupt it: bit flips and a cut
        data = bytearray(body)
        for position in draw(st.lists(st.integers(0, len(data) - 1), max_size=3)):
            data[position] ^= 1 << draw(st.integers(0, 7))
        body = bytes(data[: draw(st.integers(0, len(data)))])
    return body


def otlp_json(body: bytes) -> bytes:
    """The same request in OTLP/JSON, when it parses; else the bytes as they are."""
    from google.protobuf import json_format

    try:
        request = ExportTraceServiceRequest.FromString(body)
    except Exception:  # noqa: BLE001 - a corrupted body stays corrupted
        return body
    return json.dumps(json_format.MessageToDict(request)).encode()


# -- the services under fuzz -------------------------------------------------------------------


class Running:
    """A real `ragpulse run` (its own process, so its memory is its own), for synchronous clients.

    Each entry point's generated cases run once per process, by whichever test needs their traces
    first (`fuzz`): a test that checks what they left behind runs them itself when it runs alone."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.rp = start_ragpulse(tmp, "--set", "otlp.grace_seconds=0.05", "--set", "otlp.max_bytes_in_flight=2000000", *args)
        self.url = self.rp.url
        self.otlp_url = f"http://127.0.0.1:{self.rp.otlp_port}/v1/traces"
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.rp.grpc_port}")
        self.export = self.channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        self.accepted = 0
        self.rss: list[int] = []
        self._fuzzed: dict[str, BaseException | None] = {}

    def metrics(self) -> Samples:
        return self.rp.metrics()

    def sample_rss(self) -> None:
        self.rss.append(rss_bytes(self.rp.process.pid))

    def fuzz(self, cases: Callable[[Running], None]) -> None:
        """Run the generated `cases` against this process, unless they ran already (a failure is not rerun)."""
        name = cases.__name__
        if name not in self._fuzzed:
            self._fuzzed[name] = None
            try:
                cases(self)
            except BaseException as exc:
                self._fuzzed[name] = exc
                raise
        elif (failed := self._fuzzed[name]) is not None:
            raise AssertionError(f"{name} failed in an earlier test of this module") from failed

    def settled(self) -> Samples:
        """The metrics once every accepted event went through the pipeline and every trace was assembled."""
        wait_until(lambda: (s := self.metrics()).get_value("ragpulse_queue_depth_events", queue="pipeline") == 0
                   and s.get_value("ragpulse_otlp_traces_in_flight") == 0, what="the pipeline drained, no trace in flight")
        return self.metrics()

    def stop(self) -> None:
        self.channel.close()
        assert self.rp.terminate() == 0


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture(scope="module")
def http_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The process the HTTP ingest cases go to: what it accepted and its memory are theirs alone."""
    instance = Running(tmp_path_factory.mktemp("fuzz-http"))
    yield instance
    instance.stop()


@pytest.fixture(scope="module")
def otlp_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The process the OTLP cases go to; a trace without its root span is assembled 2 s on (30 s by default),
    so that every trace is assembled soon after the last case."""
    instance = Running(tmp_path_factory.mktemp("fuzz-otlp"), "--set", "otlp.trace_ttl_seconds=2")
    yield instance
    instance.stop()


@settings(**FUZZ, max_examples=2500)
@given(http_bodies(), st.sampled_from(["/v1/events", "/v1/feedback"]))
def http_ingest_cases(running: Running, request: tuple[bytes, dict[str, str]], path: str) -> None:
    body, headers = request
    status, answer = post(running.url + path, body, headers)
    assert status in (200, 400, 413), (status, answer)
    running.accepted += json.loads(answer).get("accepted", 0)
    if len(running.rss) < 5000:
        running.sample_rss()


@settings(**FUZZ, max_examples=1200)
@given(otlp_requests(), st.booleans())
def otlp_http_cases(running: Running, body: bytes, as_json: bool) -> None:
    if as_json:
        status, answer = post(running.otlp_url, otlp_json(body), {"Content-Type": "application/json"})
    else:
        status, answer = post(running.otlp_url, body, {"Content-Type": "application/x-protobuf"})
    assert status in (200, 400), (status, answer)


@settings(**FUZZ, max_examples=1000)
@given(otlp_requests())
def otlp_grpc_cases(running: Running, body: bytes) -> None:
    try:
        running.export(body, timeout=30)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, exc  # type: ignore[attr-defined]


def test_http_ingest(http_target: Running) -> None:
    http_target.fuzz(http_ingest_cases)


def test_http_ingest_counted_what_it_accepted_and_stayed_flat(http_target: Running) -> None:
    http_target.fuzz(http_ingest_cases)
    s = http_target.settled()
    processed = s.get_value("ragpulse_events_processed_total", type="trace") + s.get_value(
        "ragpulse_events_processed_total", type="feedback")
    assert http_target.accepted > 1000  # the fuzz reached the pipeline, not only the decoder
    assert s.total("ragpulse_events_received_total") == http_target.accepted
    assert processed + s.total("ragpulse_events_duplicate_total") == http_target.accepted
    answered = sum(v for (name, labels), v in s.items() if name == "ragpulse_http_requests_total"
                   and dict(labels)["code"] in ("200", "400", "413"))
    assert s.total("ragpulse_http_requests_total") == answered  # no 5xx, no other answer
    rss = http_target.rss
    warm = rss[len(rss) // 3]
    assert max(rss[len(rss) // 3:]) - warm < 20e6, (warm, max(rss))


def test_otlp_http(otlp_target: Running) -> None:
    otlp_target.fuzz(otlp_http_cases)


def test_otlp_grpc(otlp_target: Running) -> None:
    otlp_target.fuzz(otlp_grpc_cases)


def test_otlp_spans_were_all_accounted_for(otlp_target: Running) -> None:
    otlp_target.fuzz(otlp_http_cases)
    otlp_target.fuzz(otlp_grpc_cases)
    s = otlp_target.metrics()
    assert s.total("ragpulse_otlp_spans_received_total") > 1000
    assembled = sum(v for (name, labels), v in s.items() if name == "ragpulse_otlp_traces_total")
    assert assembled > 50  # many cases share a trace id; most carry no question and answer (content_not_captured)
    assert s.get_value("ragpulse_otlp_traces_in_flight_bytes") <= 2_000_000
    codes = {dict(labels)["code"] for (name, labels), v in s.items() if name == "ragpulse_otlp_requests_total" and v}
    assert codes <= {"200", "400", "OK", "INVALID_ARGUMENT"}, codes


def test_no_task_died_and_no_stage_failed(http_target: Running, otlp_target: Running) -> None:
    """What every entry point's cases left behind, once every trace was assembled and went through the
    pipeline: nothing dead or restarted, no stage or mapping failure."""
    http_target.fuzz(http_ingest_cases)
    otlp_target.fuzz(otlp_http_cases)
    otlp_target.fuzz(otlp_grpc_cases)
    for target in (http_target, otlp_target):
        s = target.settled()
        assert s.get_value("ragpulse_component_restarts_total", component="pipeline") == 0
        assert s.get_value("ragpulse_component_restarts_total", component="span_assembler") == 0
        assert s.total("ragpulse_stage_errors_total") == 0
        assert s.get_value("ragpulse_otlp_traces_total", outcome="mapping_failed") == 0
        ready = target.rp.get("/readyz")
        assert ready.status == 200 and "notes" not in ready.json()
    assert http_target.metrics().total("ragpulse_http_requests_total") > 2500


DECODER = EventDecoder(LimitsConfig(), "kafka")
CODECS = [json_codec(DECODER), otlp_proto_codec(Counter("rejected_total", "r", ["reason"], registry=CollectorRegistry()))]


@settings(**FUZZ, max_examples=2000)
@given(st.one_of(http_bodies().map(lambda r: r[0]), otlp_requests(), st.binary(max_size=200)),
       st.sampled_from(["json", "otlp_proto"]), st.sampled_from([None, "trace", "feedback"]))
def test_kafka_message_values(value: bytes, encoding: str, event_type: str | None) -> None:
    topic = KafkaTopic(name="t", type=event_type, encoding=encoding)  # type: ignore[arg-type]
    try:
        envelopes, spans = CODECS[encoding == "otlp_proto"](value, topic)
    except EventError as exc:
        assert exc.reason.value and exc.message
        return
    assert all(e.size > 0 for e in envelopes)
    assert all(len(s.trace_id) == 32 for s in spans)


config_sections = st.dictionaries(
    st.sampled_from(list(Config.__struct_fields__)) | st.text(max_size=8),
    st.dictionaries(st.text(max_size=25) | st.sampled_from(["port", "host", "sample_rate", "rules", "topics", "max_chunks"]),
                    json_values, max_size=4) | json_values, max_size=4)


@settings(**FUZZ, max_examples=2000)
@given(config_sections | json_values, st.booleans())
def test_config_files(tmp_path_factory: pytest.TempPathFactory, data: Any, as_text: bool) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz-config.yaml"
    text = yaml.safe_dump(data) if not as_text else json.dumps(data, default=str)[::-1]  # reversed: usually not YAML
    path.write_text(text, encoding="utf-8")
    try:
        config = load_config(path, environ={})
    except ConfigError as exc:
        assert exc.problems and all(str(p) for p in exc.problems)
        return
    assert isinstance(config, Config)
    assert not math.isnan(config.judge.sample_rate)


# -- rejected oversized events leave nothing behind ------------------------------------------------

@st.composite
def oversized_events(draw: st.DrawFn) -> bytes:
    """One event over limits.max_event_bytes (512 KiB): a huge string, a huge array or very many fields."""
    shape = draw(st.sampled_from(["string", "array", "fields"]))
    size = draw(st.integers(min_value=600_000, max_value=2_500_000))
    event: dict[str, Any] = {"type": "trace", "trace_id": f"over-{draw(st.integers(0, 10**9))}", "query": "q", "answer": "a"}
    if shape == "string":
        event[draw(st.sampled_from(["answer", "query"]))] = draw(st.sampled_from("xyz语")) * size
    elif shape == "array":
        width = draw(st.integers(min_value=10, max_value=2000))
        event["chunks"] = [{"text": "c" * width, "id": str(i)} for i in range(size // (width + 20))]
    else:
        event["attributes"] = {f"k{i}": i for i in range(size // 12)}
    return json.dumps(event).encode()


@pytest.fixture(scope="module")
def oversized_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    instance = Running(tmp_path_factory.mktemp("fuzz-oversized"))
    yield instance
    instance.stop()


@settings(**FUZZ, max_examples=150)
@given(oversized_events())
def oversized_cases(running: Running, body: bytes) -> None:
    status, answer = post(running.url + "/v1/events", body, {"Content-Type": "application/json"})
    assert (status, json.loads(answer)["errors"][0]["reason"]) == (400, "too_large")
    running.sample_rss()


def test_rejected_oversized_events_of_every_shape_keep_no_memory(oversized_target: Running) -> None:
    oversized_target.fuzz(oversized_cases)
    rss = oversized_target.rss
    warm = rss[20]  # after warm-up: the allocator's arenas at their steady size
    assert max(rss[20:]) - warm < 30e6, [round(r / 1e6) for r in rss[::10]]
    assert oversized_target.metrics().get_value("ragpulse_events_invalid_total", source="http", reason="too_large") == 150
