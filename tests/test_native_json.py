"""OTLP/JSON in the compiled core (native/src/otlp_json.rs) against the general path it spares
(sources/otlp/spans.py decode_json_generally: protobuf's JSON mapping, then the protobuf reader): the same span
records, sizes in protobuf bytes included, and the same problems, on random requests written as exporters write
them (ids in hex; field names in camelCase or as in the proto; integers as strings or numbers) and on what a
real OpenTelemetry Collector's OTLP/HTTP exporter writes in JSON; and every oddity outside the crate's subset is
left to the general path, which reads or refuses it as before (the JS SDK's JSON exporter: tests/test_agents.py)."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from helpers.net import http
from helpers.otelcol import Collector, collector_binary
from helpers.otlp_payload import SPANS_PER_TRACE, batches
from helpers.otlp_strategies import REQUESTS
from helpers.waiting import wait_until
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ragpulse._native import decode_otlp_json
from ragpulse.errors import EventError
from ragpulse.sources.otlp.spans import MAPPED_KEYS, Span, SpanEvent, decode_json, decode_json_generally, decode_protobuf
from ragpulse.sources.otlp.surrogates import take_out

ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
INTEGER_FIELDS = ("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", "intValue", "start_time_unix_nano",
                  "end_time_unix_nano", "time_unix_nano", "int_value")


def _walk(value: Any, numbers: bool) -> Any:
    if isinstance(value, list):
        return [_walk(item, numbers) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in ID_FIELDS and isinstance(item, str):
            item = base64.b64decode(item).hex()
        elif numbers and key in INTEGER_FIELDS and isinstance(item, str):
            item = int(item)
        out[key] = _walk(item, numbers)
    return out


def as_json(request: ExportTraceServiceRequest, proto_names: bool = False, numbers: bool = False) -> bytes:
    """The request as an exporter writes OTLP/JSON: ids in hex, int64 as strings (or, `numbers`, as JSON numbers)."""
    return json.dumps(_walk(json_format.MessageToDict(request, preserving_proto_field_name=proto_names), numbers)).encode()


def outcome(read: Any, body: bytes) -> Any:
    try:
        decoded = read(body, MAPPED_KEYS)
    except EventError as error:
        return ("refused", error.reason, str(error))
    return (decoded.spans, decoded.rejected, decoded.problems)


def _values(pairs: Any) -> Any:
    for pair in pairs:
        yield pair.value
        yield from _nested(pair.value)


def _nested(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        for item in value.array_value.values:
            yield item
            yield from _nested(item)
    elif kind == "kvlist_value":
        yield from _values(value.kvlist_value.values)


def in_the_crates_subset(request: ExportTraceServiceRequest) -> bool:
    """What MessageToDict writes outside the subset: a span kind without a name, an infinite double ("Infinity"), a
    negative zero."""
    values = []
    for resource_spans in request.resource_spans:
        values += _values(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if not 0 <= span.kind <= 5:
                    return False
                values += _values(span.attributes)
                for event in span.events:
                    values += _values(event.attributes)
    return not any(v.WhichOneof("value") == "double_value"
                   and (math.isinf(v.double_value) or (v.double_value == 0 and math.copysign(1.0, v.double_value) < 0))
                   for v in values)


@pytest.mark.unit
@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(REQUESTS, st.booleans(), st.booleans())
def test_the_crate_reads_what_the_general_path_reads(request: ExportTraceServiceRequest, proto_names: bool,
                                                     numbers: bool) -> None:
    body = as_json(request, proto_names, numbers)
    assert (decode_otlp_json(body, MAPPED_KEYS, Span, SpanEvent) is not None) == in_the_crates_subset(request)
    assert outcome(decode_json, body) == outcome(decode_json_generally, body)


SPAN = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "query",
        "startTimeUnixNano": "1764000000000000000", "endTimeUnixNano": "1764000002000000000"}


def request(span: dict[str, Any] | None = None, **top: Any) -> bytes:
    body = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "s"},
                                                                             "spans": [span or SPAN]}]}], **top}
    return json.dumps(body).encode()


def value(any_value: Any) -> bytes:
    return request({**SPAN, "attributes": [{"key": "input.value", "value": any_value}]})


def nested(levels: int) -> Any:
    inner: Any = {"stringValue": "deep"}
    for _ in range(levels):
        inner = {"arrayValue": {"values": [inner]}}
    return inner


# What the crate leaves to the general path: each is read or refused there, as before.
ODDITIES = {
    "a null": request({**SPAN, "traceState": None}),
    "a field by both its names": request({**SPAN, "span_id": "b7ad6b7169203331"}),
    "a key the schema lacks": request({**SPAN, "custom": 1}),
    "an extension-like key": request({**SPAN, "[x.y]": 1}),
    "an id in base64": request({**SPAN, "spanId": base64.b64encode(bytes.fromhex("b7ad6b7169203331")).decode()}),
    "an id with spaces": request({**SPAN, "spanId": "b7 ad 6b 71 69 20 33 31"}),
    "an id of odd length": request({**SPAN, "spanId": "b7ad6b716920333"}),
    "a time as a float": request({**SPAN, "startTimeUnixNano": 1.5e18}),
    "a time with an exponent": request({**SPAN, "startTimeUnixNano": "1e18"}),
    "a time with a sign": request({**SPAN, "startTimeUnixNano": "+1764000000000000000"}),
    "a negative time": request({**SPAN, "startTimeUnixNano": "-1"}),
    "a kind by number in a string": request({**SPAN, "kind": "2"}),
    "an unknown kind name": request({**SPAN, "kind": "SPAN_KIND_SIDEWAYS"}),
    "an unknown kind number": request({**SPAN, "kind": 9}),
    "a link": request({**SPAN, "links": [{"traceId": SPAN["traceId"], "spanId": SPAN["spanId"]}]}),
    "two members of a value": value({"stringValue": "a", "intValue": "1"}),
    "an int value out of range": value({"intValue": str(2**63)}),
    "a double as a string": value({"doubleValue": "1.5"}),
    "NaN": value({"doubleValue": "NaN"}),
    "a negative zero (-0 is Python's integer 0)": value({"doubleValue": 12345}).replace(b"12345", b"-0"),
    "a negative zero double": value({"doubleValue": -0.0}),
    "an integer -0": value({"intValue": 12345}).replace(b"12345", b"-0"),
    "a URL-safe base64 value": value({"bytesValue": "-_8="}),
    "an unpadded base64 value": value({"bytesValue": "aGk"}),
    "a bool as a string": value({"boolValue": "true"}),
    "values nested past the crate's depth": value(nested(40)),
    "a list where an object belongs": request({**SPAN, "status": []}),
    "a top level that is a list": b"[]",
    "not JSON": b'{"resourceSpans": [',
    "a lone surrogate": request({**SPAN, "name": "\ud800"}),
}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(ODDITIES))
def test_an_oddity_is_left_to_the_general_path(name: str) -> None:
    body = ODDITIES[name]
    assert decode_otlp_json(body, MAPPED_KEYS, Span, SpanEvent) is None
    assert repr(outcome(decode_json, body)) == repr(outcome(decode_json_generally, body))  # NaN is not NaN; its repr is


@pytest.mark.unit
def test_a_lone_surrogate_takes_out_its_span_or_its_whole_scope_or_resource() -> None:
    """A span holding one goes alone; a scope or a resource holding one goes with every span under it, each named."""
    def span(name: str, text: str = "ok") -> dict[str, Any]:
        return {"name": name, "attributes": [{"key": "input.value", "value": {"stringValue": text}}]}

    request = {"resourceSpans": [
        {"resource": {}, "scopeSpans": [
            {"scope": {"name": "good"}, "spans": [span("a"), span("b", "\ud800"), "not a span"]},
            {"scope": {"name": "bad\udfff"}, "spans": [span("c"), span("d")]}]},
        {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "\ud801"}}]},
         "scope_spans": [{"spans": [span("e")]}]},
    ]}
    assert take_out(request) == [
        ("b", "invalid_utf8", "attribute 'input.value' holds a lone surrogate escape, which is not valid Unicode"),
        ("c", "invalid_utf8", "scope name holds a lone surrogate escape, which is not valid Unicode"),
        ("d", "invalid_utf8", "scope name holds a lone surrogate escape, which is not valid Unicode"),
        ("e", "invalid_utf8", "resource attribute 'service.name' holds a lone surrogate escape, which is not valid Unicode"),
    ]
    assert request == {"resourceSpans": [
        {"resource": {}, "scopeSpans": [{"scope": {"name": "good"}, "spans": [span("a"), "not a span"]}]}]}


@pytest.mark.unit
def test_what_the_crate_reads_is_what_the_general_path_reads() -> None:
    """Exporters' spellings the crate reads itself: integers as numbers and strings, enums by name and number,
    empty values, zeros of each type (left out of the protobuf bytes, or kept in a value, as protobuf does)."""
    bodies = [
        request({**SPAN, "kind": 2, "status": {"code": "STATUS_CODE_ERROR", "message": "boom"}, "flags": 257}),
        request({**SPAN, "kind": "SPAN_KIND_SERVER", "status": {}, "droppedAttributesCount": 0, "traceState": ""}),
        request({**SPAN, "startTimeUnixNano": 1764000000000000000, "events": [{"name": "e", "timeUnixNano": "0"}]}),
        request({**SPAN, "parentSpanId": ""}),
        request({**SPAN, "spanId": "B7AD6B7169203331"}),
        request({**SPAN, "traceId": "00000000000000000000000000000000"}),  # read, and refused as a zero id
        value({}), value({"stringValue": ""}), value({"intValue": 0}), value({"intValue": "-9223372036854775808"}),
        value({"boolValue": False}), value({"doubleValue": 0}), value({"doubleValue": -1.5e-300}),
        value({"doubleValue": 1e308}), value({"doubleValue": 0.1}), value({"bytesValue": "aGk="}),
        value({"arrayValue": {}}), value({"kvlistValue": {"values": [{"key": "k"}]}}), value(nested(30)),
    ]
    for body in bodies:
        assert decode_otlp_json(body, MAPPED_KEYS, Span, SpanEvent) is not None, body
        assert repr(outcome(decode_json, body)) == repr(outcome(decode_json_generally, body)), body


KEPT = {**SPAN, "spanId": "b7ad6b7169203332", "name": "kept"}


def two_resources(bad: dict[str, Any], resource: list[Any] | None = None, scope: str = "s") -> bytes:
    """`bad` and KEPT under one resource and scope, and KEPT again (another trace) under a resource of its own."""
    other = {**KEPT, "traceId": "1af7651916cd43dd8448eb211c80319c"}
    return json.dumps({"resourceSpans": [
        {"resource": {"attributes": resource or []}, "scopeSpans": [{"scope": {"name": scope}, "spans": [bad, KEPT]}]},
        {"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "s"}, "spans": [other]}]},
    ]}).encode()


@pytest.mark.unit
def test_a_lone_surrogate_rejects_only_the_spans_holding_it() -> None:
    """A lone surrogate escape ("\\ud800"), JSON's form of invalid UTF-8, which the crate's JSON reader and msgspec
    refuse with the whole body: the general path rejects the span holding it, or every span under the resource or
    scope holding it, named with what is wrong, and reads the others."""
    lone = "a\ud800b"
    attribute = [{"key": "input.value", "value": {"stringValue": lone}}]
    cases = {  # the body: (the spans read, the problem)
        "a name": (two_resources({**SPAN, "name": lone}), "span 'a\\ud800b': name"),
        "an attribute value": (two_resources({**SPAN, "attributes": attribute}), "span 'query': attribute 'input.value'"),
        "an attribute key": (two_resources({**SPAN, "attributes": [{"key": lone, "value": {"intValue": 1}}]}),
                             "span 'query': attribute 'a\\ud800b'"),
        "an event": (two_resources({**SPAN, "events": [{"name": "e", "attributes": attribute}]}), "span 'query': event 'e'"),
        "a resource attribute": (two_resources(SPAN, resource=attribute), "resource attribute 'input.value'"),
        "a scope's name": (two_resources(SPAN, scope=lone), "scope name"),
    }
    for case, (body, problem) in cases.items():
        assert decode_otlp_json(body, MAPPED_KEYS, Span, SpanEvent) is None, case
        decoded = decode_json(body)
        above = case in ("a resource attribute", "a scope's name")  # the span beside the bad one is rejected too
        assert [span.name for span in decoded.spans] == ["kept"] * (1 if above else 2), case
        assert decoded.rejected_by == {"invalid_utf8": 2 if above else 1}, case
        suffix = " holds a lone surrogate escape, which is not valid Unicode"
        names = ["query", "kept"] if above else []
        expected = [f"span {name!r}: {problem}{suffix}" for name in names] if above else [f"{problem}{suffix}"]
        assert decoded.problems == expected, case
    paired = request({**SPAN, "name": "\U0001F600"})  # json.dumps escapes it as a pair: the crate reads it
    assert b"\\ud83d\\ude00" in paired
    assert decode_otlp_json(paired, MAPPED_KEYS, Span, SpanEvent)[0][0].name == "\U0001F600"  # type: ignore[index]
    with pytest.raises(EventError, match="invalid JSON: Invalid UTF-8"):  # raw bytes that are not UTF-8: not JSON text
        decode_json(request({**SPAN, "name": "caf\u00e9"}).replace(b"\\u00e9", b"\xc3"))


class _Capture(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - the handler's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).bodies.append(gzip.decompress(body) if self.headers["Content-Encoding"] == "gzip" else body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def test_the_collectors_otlp_json_is_read_by_the_crate(tmp_path: Path) -> None:
    """The OpenTelemetry Collector's OTLP/HTTP exporter writing JSON (bench/otelcol's build), between apps and
    ragpulse as many run it: every request it sends is read by the crate, equal to the general path, into the spans
    the Collector received in protobuf."""
    _Capture.bodies = []
    capture = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    threading.Thread(target=capture.serve_forever, daemon=True).start()
    collector = Collector(collector_binary(), tmp_path)
    collector.start({
        "receivers": collector.receivers(),
        "exporters": {"otlp_http": {"endpoint": f"http://127.0.0.1:{capture.server_port}", "encoding": "json",
                                    "compression": "none", "retry_on_failure": {"enabled": False}}},
        "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["otlp_http"]}},
                    "telemetry": {"metrics": {"level": "none"}}},
    })
    sent = batches(100, app_attributes=True)  # the bench payload, an embedding vector in one span of eight
    try:
        for body in sent:
            assert http("POST", f"http://127.0.0.1:{collector.http_port}/v1/traces", body,
                        {"Content-Type": "application/x-protobuf"}).status == 200
        wait_until(lambda: sum(len(decode_json_generally(b).spans) for b in _Capture.bodies) == 100 * SPANS_PER_TRACE,
                   what="the Collector's JSON exports")
    finally:
        collector.stop()
        capture.shutdown()
    read = []
    for body in _Capture.bodies:
        native = decode_otlp_json(body, MAPPED_KEYS, Span, SpanEvent)
        assert native is not None
        assert repr((native[0], len(native[1]))) == repr(outcome(decode_json_generally, body)[:2])
        read += native[0]
    expected = [span for body in sent for span in decode_protobuf(body).spans]
    # The Collector writes an empty status on every span ("status": {}), which the SDK's protobuf left out: two
    # bytes more a span, in the crate's count as in the general path's (compared above).
    by_id = {span.span_id: span for span in expected}
    assert len(read) == len(by_id) == 100 * SPANS_PER_TRACE
    assert all(dataclasses.replace(span, size=span.size - 2) == by_id[span.span_id] for span in read)
