"""OTLP ExportTraceServiceRequest (protobuf or OTLP/JSON) -> Span records."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import msgspec
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from ragpulse.errors import EventError, RejectReason

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


@dataclass(slots=True)
class SpanEvent:
    name: str
    time_unix_nano: int
    attributes: dict[str, Any]


@dataclass(slots=True)
class Span:
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_span_id: str | None
    name: str
    start_unix_nano: int
    end_unix_nano: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    size: int = 0  # bytes of the span in protobuf: what the assembler's byte budget counts
    scope: str = ""  # the instrumentation scope's name, e.g. "openinference.instrumentation.llama_index"
    kind: int = 0  # OTLP SpanKind: 3 CLIENT and 4 PRODUCER call out, maybe to a service whose spans come later

    @property
    def duration_seconds(self) -> float:
        return max(0, self.end_unix_nano - self.start_unix_nano) / 1e9


@dataclass(slots=True)
class DecodedSpans:
    spans: list[Span]
    rejected: int
    problems: list[str]


def decode_protobuf(body: bytes) -> DecodedSpans:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise EventError(RejectReason.MALFORMED_JSON, f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
    return spans_of(request)


def decode_json(body: bytes) -> DecodedSpans:
    """OTLP/JSON: trace and span ids are hex strings, which protobuf's JSON mapping would read as base64."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise EventError(RejectReason.MALFORMED_JSON, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise EventError(RejectReason.TOO_DEEP, "JSON nested too deeply to decode (several hundred levels)") from None
    if not isinstance(data, dict):
        raise EventError(RejectReason.NOT_AN_OBJECT, "an OTLP/JSON body is an object with resourceSpans")
    problems: list[str] = []
    for resource_spans in _list(data.get("resourceSpans")):
        for scope_spans in _list(_dict(resource_spans).get("scopeSpans")):
            for span in _list(_dict(scope_spans).get("spans")):
                for name in _ID_FIELDS:
                    if isinstance(span, dict) and isinstance(span.get(name), str):
                        span[name] = _hex_to_base64(span[name], name, problems)
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise EventError(RejectReason.WRONG_TYPE, f"not an OTLP/JSON ExportTraceServiceRequest: {exc}") from None
    decoded = spans_of(request)
    decoded.problems[:0] = problems
    return decoded


def spans_of(request: ExportTraceServiceRequest) -> DecodedSpans:
    spans: list[Span] = []
    rejected = 0
    problems: list[str] = []
    for resource_spans in request.resource_spans:
        try:
            resource = _attributes(resource_spans.resource.attributes)
        except RecursionError:
            count = sum(len(scope.spans) for scope in resource_spans.scope_spans)
            rejected += count
            problems.append(f"{count} spans: resource attribute values nested too deeply")
            continue
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or not any(span.trace_id):
                    rejected += 1
                    problems.append(f"span {span.name!r}: trace_id must be 16 non-zero bytes")
                    continue
                if len(span.span_id) != 8 or not any(span.span_id):
                    rejected += 1
                    problems.append(f"span {span.name!r}: span_id must be 8 non-zero bytes")
                    continue
                parent = span.parent_span_id.hex() if len(span.parent_span_id) == 8 and any(span.parent_span_id) else None
                try:
                    attributes = _attributes(span.attributes)
                    events = [SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes)) for e in span.events]
                except RecursionError:  # values nested past the stack; protobuf allows 100 levels, JSON more
                    rejected += 1
                    problems.append(f"span {span.name!r}: attribute values nested too deeply")
                    continue
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=parent,
                        name=span.name,
                        start_unix_nano=span.start_time_unix_nano,
                        end_unix_nano=span.end_time_unix_nano,
                        attributes=attributes,
                        resource=resource,
                        events=events,
                        size=span.ByteSize(),
                        scope=scope,
                        kind=span.kind,
                    )
                )
    return DecodedSpans(spans, rejected, problems)


def _attributes(pairs: Any) -> dict[str, Any]:
    # Scalars inline: a function call per attribute was a fifth of decoding a span.
    attributes = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        if kind == "array_value" or kind == "kvlist_value":
            attributes[pair.key] = _value(value)
        else:
            attributes[pair.key] = getattr(value, kind) if kind is not None else None
    return attributes


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    if kind is None:
        return None
    return getattr(value, kind)


def _hex_to_base64(text: str, name: str, problems: list[str]) -> str:
    try:
        return base64.b64encode(bytes.fromhex(text)).decode()
    except ValueError:
        # Some exporters send base64 already; anything else fails the id checks later.
        try:
            base64.b64decode(text, validate=True)
            return text
        except (binascii.Error, ValueError):
            problems.append(f"{name} {text!r} is neither hex nor base64")
            return ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}

