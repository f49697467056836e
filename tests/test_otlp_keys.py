"""The span attributes the decoding keeps (sources/otlp/keys.py) against the keys the mapping's modules name:
a rule reading a key the filter drops would see nothing, silently. tests/test_instrumentations.py maps real
instrumented apps' traces with and without the filter, to the same events."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from ragpulse.sources.otlp.keys import MAPPED_KEYS, PEER_KEYS, key_filter

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

MAPPING_MODULES = ["mapping", "documents", "messages", "tool_calls", "tool_results", "failures", "roles", "role_rules"]
SOURCES = Path(__file__).resolve().parents[1] / "sources" / "otlp"
# Dotted names in those modules that are not span attribute keys: events and their attributes (kept whole),
# resource attributes (kept whole), instrumentation scopes and span names.
NOT_SPAN_KEYS = {
    "db.query.result", "db.query.result.document", "db.query.result.id", "db.query.result.score",  # an event
    "gen_ai.choice", "gen_ai.user.message",  # events
    "exception.type", "exception.message",  # the exception event's attributes
    "service.name", "service.version",  # resource
    "openinference.", "opentelemetry.instrumentation.", "opentelemetry.instrumentation.openai_v2",
    "opentelemetry.util.genai",  # scopes
    "ragpulse.otlp",  # a logger
}


def named_keys() -> set[str]:
    names = set()
    for module in MAPPING_MODULES:
        for node in ast.walk(ast.parse((SOURCES / f"{module}.py").read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[A-Za-z_]\w*(\.\w*)+", node.value):
                names.add(node.value)
    return names


def test_every_key_the_mapping_names_is_kept() -> None:
    names = named_keys()
    assert len(names) > 60 and NOT_SPAN_KEYS <= names  # the scan found the modules' keys, and the exceptions exist
    # A name is a key or a family's stem ("retrieval.documents": retrieval.documents.0.document.content, ...).
    dropped = sorted(name for name in names - NOT_SPAN_KEYS if not (MAPPED_KEYS.keeps(name) or MAPPED_KEYS.keeps(name + ".")))
    assert dropped == []
    assert MAPPED_KEYS.keeps("metadata") and MAPPED_KEYS.keeps("llm.input_messages.0.message.content")
    # and the assembler's: a span naming the other side of its call (sources/otlp/assembler.py)
    assert PEER_KEYS == {"peer.service", "url.full", "http.url"} and all(map(MAPPED_KEYS.keeps, PEER_KEYS))


def test_what_no_rule_reads_is_dropped_and_the_route_attribute_kept() -> None:
    for key in ["embedding.embeddings.0.embedding.vector", "input.mime_type", "http.method", "deployment.environment",
                "openinference.instrumentation", "db.query.result.document"]:
        assert not MAPPED_KEYS.keeps(key), key
    assert key_filter("deployment.environment").keeps("deployment.environment")


def test_the_route_attribute_survives_the_json_and_kafka_decodings() -> None:
    """The HTTP protobuf path is tested end to end (tests/test_otlp_receiver.py); OTLP/JSON and the Kafka codec
    take the same filter."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
    from google.protobuf import json_format
    from prometheus_client import CollectorRegistry, Counter

    from ragpulse.config import KafkaTopic
    from ragpulse.sources.kafka import otlp_proto_codec
    from ragpulse.sources.otlp.spans import decode_json

    attributes = [KeyValue(key=key, value=AnyValue(string_value=key)) for key in ("rag.route", "input.value", "x.y")]
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[
        Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, attributes=attributes)])])])
    keys = key_filter("rag.route")
    data = json_format.MessageToDict(request)
    data["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(traceId="01" * 16, spanId="02" * 8)  # OTLP/JSON: hex
    body = json.dumps(data)
    assert decode_json(body.encode(), keys).spans[0].attributes == {"rag.route": "rag.route", "input.value": "input.value"}
    codec = otlp_proto_codec(Counter("rejected", "r", ["reason"], registry=CollectorRegistry()), keys)
    spans = codec(request.SerializeToString(), KafkaTopic(name="t", encoding="otlp_proto"))[1]
    assert spans[0].attributes == {"rag.route": "rag.route", "input.value": "input.value"}


DOCUMENT_KEYS = [f"{family}.{index}.document.{field}" for family in ("retrieval.documents", "reranker.output_documents")
                 for index in ("0", "1", "10", "007", "\u0663") for field in ("id", "content", "score", "x_1", "\u00fcber", "id\n")]


# A `.document.` past the index's first dot, and a near miss of it: no document key.
NEAR_KEYS = ["retrieval.documents.0.doc", "retrieval.documents.1.x.document.id", "retrieval.documents.1.documents.id"]


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(DOCUMENT_KEYS + NEAR_KEYS + ["input.value"]),
                          st.one_of(st.text(max_size=3), st.integers(-2, 2), st.floats(allow_nan=False), st.none())),
                max_size=8),
       st.sampled_from([None, "retrieval.documents.0.document.id"]))
def test_documents_gathered_by_the_decoder_read_as_the_flat_keys(pairs: list[tuple[str, object]], route: str | None) -> None:
    """The decoder gathers a span's document keys (Span.documents) when every one is spelt the usual way; the chunks
    read from it are those the flat keys give (a key given twice, other spellings, the route attribute among them)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    from helpers.otlp_payload import any_value
    from ragpulse._native import KeyFilter
    from ragpulse.sources.otlp.documents import chunks_of, has_documents
    from ragpulse.sources.otlp.keys import EXACT_KEYS, KEY_PREFIXES, PEER_KEYS
    from ragpulse.sources.otlp.spans import decode_protobuf

    attributes = [KeyValue(key="openinference.span.kind", value=AnyValue(string_value="RETRIEVER")),
                  *(KeyValue(key=key, value=any_value(value) if value is not None else AnyValue()) for key, value in pairs)]
    body = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[
        Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, attributes=attributes)])])]).SerializeToString()
    [gathered] = decode_protobuf(body, key_filter(route)).spans
    [flat] = decode_protobuf(body, KeyFilter(EXACT_KEYS | PEER_KEYS | ({route} if route else set()), list(KEY_PREFIXES))).spans
    assert flat.documents is None and has_documents(gathered) == has_documents(flat)
    assert chunks_of([gathered], {}) == chunks_of([flat], {})
    if gathered.documents is not None:
        assert {**gathered.attributes, **{k: v for k, v in flat.attributes.items() if k.startswith(("retrieval.", "reranker."))}} == flat.attributes
