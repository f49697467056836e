"""OTLP trace requests built by hand in opentelemetry-proto's messages: LlamaIndex-shaped traces (8 spans each),
batched as the SDK's BatchSpanProcessor sends them (the benchmarks' payload); and small traces with any attribute
a test adds to a span (the hostile-client regression tests, bench/soak.py)."""

from __future__ import annotations

import base64
import json
import os
import random

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from helpers.otlp_realistic import Turn, turns

SPANS_PER_TRACE = 8
SDK_BATCH_SPANS = 512  # BatchSpanProcessor's max_export_batch_size
PAYLOADS = ("bench", "realistic")


def kv(key: str, value: object) -> KeyValue:
    """An OTLP attribute of a Python value (str, int or float)."""
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


# What OpenInference's LlamaIndex instrumentor also records and no mapping rule reads: mime types, the query's
# embedding vector (1,536 floats: text-embedding-3-small's), the embedding model.
APP_ATTRIBUTES = {"input.mime_type": "text/plain", "output.mime_type": "text/plain",
                  "embedding.model_name": "text-embedding-3-small"}


def _vector(rnd: random.Random) -> KeyValue:
    floats = [AnyValue(double_value=rnd.uniform(-0.1, 0.1)) for _ in range(1536)]
    return KeyValue(key="embedding.embeddings.0.embedding.vector", value=AnyValue(array_value={"values": floats}))


def _bench_turn(rnd: random.Random) -> Turn:
    """The bench payload's one question and wrong answer (a number no chunk has: every trace flagged)."""
    docs = [(f"kb-{i}", f"Returns policy paragraph {i}: " + "unused items within 30 days of delivery. " * 10, 0.9 - i / 10)
            for i in range(5)]
    return Turn("How long do I have to return opened headphones?", docs,
                "You can return opened headphones within 14 days if all accessories are included.",
                f"s-{rnd.randrange(1000)}")


def _trace(rnd: random.Random, app_attributes: bool = False, turn: Turn | None = None) -> list[Span]:
    trace_id = rnd.randbytes(16)
    ids = [rnd.randbytes(8) for _ in range(SPANS_PER_TRACE)]
    start = 1_764_000_000_000_000_000 + rnd.randrange(10**12)
    question, docs, answer, session = turn or _bench_turn(rnd)
    # (name, parent index, attributes)
    shapes: list[tuple[str, int | None, dict[str, object]]] = [
        ("RetrieverQueryEngine.query", None, {"openinference.span.kind": "CHAIN", "input.value": question,
                                              "output.value": answer, "session.id": session}),
        ("VectorIndexRetriever.retrieve", 0, {"openinference.span.kind": "RETRIEVER", "input.value": question,
                                              **{f"retrieval.documents.{i}.document.{k}": v for i, (d, t, s) in enumerate(docs)
                                                 for k, v in (("id", d), ("content", t), ("score", s))}}),
        ("VectorIndexRetriever._retrieve", 1, {"openinference.span.kind": "RETRIEVER", "input.value": question}),
        ("Embedding.get_query_embedding", 2, {"openinference.span.kind": "EMBEDDING", "input.value": question}),
        ("CompactAndRefine.synthesize", 0, {"openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer}),
        ("TokenTextSplitter.split_text", 4, {"openinference.span.kind": "CHAIN", "input.value": "context"}),
        ("LLM.predict", 4, {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini"}),
        ("LLM.complete", 6, {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                             "llm.token_count.prompt": 900, "llm.token_count.completion": 24,
                             "llm.output_messages.0.message.content": answer}),
    ]
    spans = []
    for index, (name, parent, attributes) in enumerate(shapes):
        extra = [kv(k, v) for k, v in APP_ATTRIBUTES.items()] if app_attributes else []
        if app_attributes and name == "Embedding.get_query_embedding":
            extra.append(_vector(rnd))
        spans.append(Span(trace_id=trace_id, span_id=ids[index], parent_span_id=ids[parent] if parent is not None else b"",
                          name=name, kind=Span.SPAN_KIND_INTERNAL, start_time_unix_nano=start + index * 1000,
                          end_time_unix_nano=start + 2_000_000_000 - index * 1000,
                          attributes=[kv(k, v) for k, v in attributes.items()] + extra))
    return spans


def batches(traces: int, seed: int = 11, app_attributes: bool = False, payload: str = "bench") -> list[bytes]:
    """Serialized ExportTraceServiceRequests of up to 512 spans, children before their root as the SDK ends them;
    with `app_attributes`, also the attributes an instrumentor records that no rule reads (APP_ATTRIBUTES).
    `payload`: "bench" (one question, every answer flagged) or "realistic" (otlp_realistic.py's distinct questions)."""
    rnd = random.Random(seed)
    realistic = turns(random.Random(seed + 1)) if payload == "realistic" else None
    if payload not in PAYLOADS:
        raise ValueError(f"payload {payload!r}: one of {PAYLOADS}")
    spans = [span for _ in range(traces)
             for span in reversed(_trace(rnd, app_attributes, next(realistic) if realistic else None))]
    resource = [kv("service.name", "bench-bot"), kv("service.version", "1.0.0"), kv("host.name", os.uname().nodename)]
    out = []
    for i in range(0, len(spans), SDK_BATCH_SPANS):
        request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
            resource={"attributes": resource},
            scope_spans=[ScopeSpans(scope={"name": "openinference.instrumentation.llama_index"}, spans=spans[i : i + SDK_BATCH_SPANS])])])
        out.append(request.SerializeToString())
    return out


def as_json(body: bytes) -> bytes:
    """The same request in OTLP/JSON, as an HTTP exporter sends it (ids in hex, int64 as strings, enums by name)."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    data = json_format.MessageToDict(request)
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for field in ("traceId", "spanId", "parentSpanId"):
                    if field in span:
                        span[field] = base64.b64decode(span[field]).hex()
    return json.dumps(data).encode()


def any_value(v: object) -> AnyValue:
    """An OTLP value of a Python value (bool, int, float, else its str); an AnyValue as it is."""
    if isinstance(v, AnyValue):
        return v
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(double_value=v)
    return AnyValue(string_value=str(v))


def otlp_trace(number: int, root: dict[str, object], llm: dict[str, object] | None = None,
               retriever: dict[str, object] | None = None, second_llm: dict[str, object] | None = None) -> list[Span]:
    """A root, a retriever and an LLM span (and a second one) of trace `number`, with extra attributes on each."""
    trace_id = number.to_bytes(16, "big")

    def span(index: int, parent: int | None, name: str, attributes: dict[str, object]) -> Span:
        return Span(trace_id=trace_id, span_id=(number * 10 + index).to_bytes(8, "big"),
                    parent_span_id=(number * 10 + parent).to_bytes(8, "big") if parent is not None else b"",
                    name=name, start_time_unix_nano=1_764_000_000_000_000_000 + index,
                    end_time_unix_nano=1_764_000_001_000_000_000,
                    attributes=[KeyValue(key=k, value=any_value(v)) for k, v in attributes.items()])

    return [
        span(1, None, "query", {"openinference.span.kind": "CHAIN", "input.value": "Can I return shoes?",
                                "output.value": "Yes, within 30 days.", **root}),
        span(2, 1, "retrieve", {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.id": "d1",
                                "retrieval.documents.0.document.content": "Shoes can be returned within 30 days.",
                                **(retriever or {})}),
        span(3, 1, "llm", {"openinference.span.kind": "LLM", "llm.model_name": "m", "llm.token_count.prompt": 10,
                           "llm.token_count.completion": 5, **(llm or {})}),
        *([span(4, 1, "llm", {"openinference.span.kind": "LLM", **second_llm})] if second_llm is not None else []),
    ]


def export(*traces: list[Span]) -> bytes:
    """One request of `traces` (otlp_trace's), service hostile, serialized."""
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="hostile")))
    resource.scope_spans.add().spans.extend(span for spans in traces for span in spans)
    return request.SerializeToString()
