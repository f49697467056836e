"""The span attributes the decoding keeps (sources/otlp/keys.py) against the keys the mapping's modules name:
a rule reading a key the filter drops would see nothing, silently. tests/test_instrumentations.py maps real
instrumented apps' traces with and without the filter, to the same events."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from ragpulse.sources.otlp.keys import MAPPED_KEYS, PEER_KEYS, key_filter

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

MAPPING_MODULES = ["mapping", "documents", "messages", "tool_calls"]
SOURCES = Path(__file__).resolve().parents[1] / "sources" / "otlp"
# Dotted names in those modules that are not span attribute keys: events and their attributes (kept whole),
# resource attributes (kept whole), instrumentation scopes and span names.
NOT_SPAN_KEYS = {
    "db.query.result", "db.query.result.document", "db.query.result.id", "db.query.result.score",  # an event
    "gen_ai.choice", "gen_ai.user.message",  # events
    "service.name", "service.version",  # resource
    "openinference.", "opentelemetry.instrumentation.", "opentelemetry.instrumentation.openai_v2",
    "opentelemetry.util.genai",  # scopes
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
