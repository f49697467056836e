"""OTLP ExportTraceServiceRequest (protobuf or OTLP/JSON) -> Span records."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ragpulse._native import KeyFilter, TextCache, decode_otlp_json, decode_otlp_traces
from ragpulse.collector.events import Chunk
from ragpulse.errors import EventError, RejectReason
from ragpulse.sources.otlp import surrogates
from ragpulse.sources.otlp.keys import MAPPED_KEYS

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
    events: Sequence[SpanEvent] = ()  # the decoder's: () for none (most spans), else a list
    size: int = 0  # bytes of the span in protobuf: what the assembler's byte budget counts
    scope: str = ""  # the instrumentation scope's name, e.g. "openinference.instrumentation.llama_index"
    kind: int = 0  # OTLP SpanKind: 3 CLIENT and 4 PRODUCER call out, maybe to a service whose spans come later
    # LLM | TOOL | RETRIEVAL as the decoder answered by role_rules.py's tables (-1: not answered; roles.py decides).
    # What a span is, not what it holds: two spans alike but for it are equal.
    roles: int = field(default=-1, compare=False)
    status_code: int = 0  # OTLP StatusCode: 2 ERROR marks a failed call or run (mapping.py's failed runs)
    status_message: str = ""
    # OpenInference's flat document keys (retrieval.documents.N.document.FIELD), gathered by the decoder and left out
    # of `attributes`: {family: [{field: value}, ...] in index order} (keys.py's DOCUMENT_FAMILIES; documents.py), or
    # the family's chunks when the key filter names the Chunk type and every document of it is plain (bindings.rs).
    # None: not gathered (no such keys, a span not from the decoder, or a key spelt otherwise): they are attributes.
    documents: dict[str, list[dict[str, Any]] | list[Chunk]] | None = None

    @property
    def duration_seconds(self) -> float:
        return max(0, self.end_unix_nano - self.start_unix_nano) / 1e9


@dataclass(slots=True)
class DecodedSpans:
    spans: list[Span]
    rejected_by: dict[str, int]  # spans not made, by reason: invalid_trace_id, invalid_span_id, invalid_utf8
    problems: list[str]
    general: bool = False  # OTLP/JSON read by protobuf's JSON mapping: outside the crate's subset

    @property
    def rejected(self) -> int:
        return sum(self.rejected_by.values())


def decode_protobuf(body: bytes, keys: KeyFilter = MAPPED_KEYS, texts: TextCache | None = None) -> DecodedSpans:
    """One call into the compiled core (native/src/otlp.rs) reads the request's bytes: what the protobuf runtime
    refuses (truncated data, nesting past 100 levels) it refuses too (tests/test_native.py), but invalid UTF-8, which
    that runtime refuses the whole request for, rejects only the spans holding it. Span attributes: only those `keys`
    keeps (sources/otlp/keys.py). `texts`: retrieved documents' texts recurring across requests, made once while held."""
    try:
        spans, rejected = decode_otlp_traces(body, keys, Span, SpanEvent, texts)
    except ValueError as exc:
        raise EventError(RejectReason.MALFORMED_JSON, f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
    return _decoded(spans, rejected)


def decode_json(body: bytes, keys: KeyFilter = MAPPED_KEYS, texts: TextCache | None = None) -> DecodedSpans:
    """OTLP/JSON. The crate reads what exporters send (a strict subset: native/src/otlp_json.rs says which) in a
    tenth of the time protobuf's JSON mapping takes; anything else takes the general path, which reads it or says
    why not."""
    read = decode_otlp_json(body, keys, Span, SpanEvent, texts)
    return _decoded(*read) if read is not None else decode_json_generally(body, keys)


def decode_json_generally(body: bytes, keys: KeyFilter = MAPPED_KEYS) -> DecodedSpans:
    """OTLP/JSON through protobuf's JSON mapping: trace and span ids are hex strings, which the mapping would read
    as base64. A lone surrogate rejects the spans holding it (sources/otlp/surrogates.py)."""
    try:
        data, maybe_surrogates = surrogates.load(body)
        if not isinstance(data, dict):
            raise EventError(RejectReason.NOT_AN_OBJECT, "an OTLP/JSON body is an object with resourceSpans")
        rejected = surrogates.take_out(data) if maybe_surrogates else []
    except msgspec.DecodeError as exc:
        raise EventError(RejectReason.MALFORMED_JSON, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise EventError(RejectReason.TOO_DEEP, "JSON nested too deeply to decode (several hundred levels)") from None
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
        body = request.SerializeToString()
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise EventError(RejectReason.WRONG_TYPE, f"not an OTLP/JSON ExportTraceServiceRequest: {exc}") from None
    # The same records as protobuf's, from the same reader: one decoding of spans to keep right, not two.
    try:
        spans, not_made = decode_otlp_traces(body, keys, Span, SpanEvent)
    except ValueError as exc:  # nesting past the protobuf limit (100 levels), which JSON alone does not have
        raise EventError(RejectReason.TOO_DEEP, f"OTLP/JSON values nested too deeply: {exc}") from None
    decoded = _decoded(spans, rejected + not_made)
    decoded.problems[:0] = problems
    decoded.general = True
    return decoded


def _decoded(spans: list[Span], rejected: list[tuple[str, str, str]]) -> DecodedSpans:
    by_reason: dict[str, int] = {}
    for _, reason, _ in rejected:
        by_reason[reason] = by_reason.get(reason, 0) + 1
    return DecodedSpans(spans, by_reason, [f"span {name!r}: {problem}" for name, _, problem in rejected])


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

