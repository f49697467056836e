"""ragpulse._native, the compiled core (native/, a PyO3 crate built by the normal install), against its oracles:
the OTLP decoding against opentelemetry-proto's (upb), on random, truncated and corrupted requests. Where upb refuses
a whole request for one string that is not valid UTF-8, the crate rejects only the spans holding it: the oracle reads
the request with upb through the same schema with every string field made bytes (the same wire format, no UTF-8
check), and rejects those spans itself."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.otlp_strategies import REQUESTS
from hypothesis import given, settings
from hypothesis import strategies as st
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from ragpulse import _native


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def _bytes_schema() -> type:
    """ExportTraceServiceRequest with every string field bytes, in a pool of its own."""
    pool = descriptor_pool.DescriptorPool()
    for module in (common_pb2, resource_pb2, trace_pb2, trace_service_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        messages = list(proto.message_type)
        while messages:
            message = messages.pop()
            messages.extend(message.nested_type)
            for field in message.field:
                if field.type == field.TYPE_STRING:
                    field.type = field.TYPE_BYTES
        pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"))


RAW_REQUEST = _bytes_schema()


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _bad(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return True
    return False


def _bad_value(value: Any) -> bool:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return _bad(value.string_value)
    if kind == "array_value":
        return any(_bad_value(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return any(_bad(kv.key) or _bad_value(kv.value) for kv in value.kvlist_value.values)
    return False


def _first(checks: list[tuple[bool, str]]) -> str | None:
    """The first field found not valid UTF-8, as the crate names it."""
    return next((what for bad, what in checks if bad), None)


def _bad_pairs(pairs: Any, owner: str) -> list[tuple[bool, str]]:
    return [(_bad(kv.key) or _bad_value(kv.value), f"{owner}attribute '{_text(kv.key)}'") for kv in pairs]


def _invalid_span(s: Any) -> str | None:
    return _first([
        (_bad(s.trace_state), "the trace state"), (_bad(s.name), "the name"), *_bad_pairs(s.attributes, ""),
        *[(_bad(e.name) or any(b for b, _ in _bad_pairs(e.attributes, "")), f"event '{_text(e.name)}'") for e in s.events],
        *[(_bad(link.trace_state) or any(b for b, _ in _bad_pairs(link.attributes, "")), "a link") for link in s.links],
        (_bad(s.status.message), "the status message")])


def _value(value: Any) -> object:
    """The oracle's conversion of a value, as the Python decoding did it before the compiled core took over."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {_text(kv.key): _value(kv.value) for kv in value.kvlist_value.values}
    if kind == "string_value":
        return _text(value.string_value)
    return None if kind is None else getattr(value, kind)


def _attributes(pairs: object) -> dict[str, object]:
    return {_text(pair.key): _value(pair.value) for pair in pairs}  # type: ignore[attr-defined]


def _record(*fields: object, status_code: int = 0, status_message: str = "") -> tuple[object, ...]:
    """A span's or an event's fields in order; a span's status last (given by keyword, when it has one)."""
    return (*fields, status_code, status_message) if len(fields) > 3 else fields


def native(body: bytes, keys: _native.KeyFilter | None = None) -> list[object]:
    """The compiled core's records, as tuples (Span's and SpanEvent's fields in order), and its rejected spans."""
    spans, rejected = _native.decode_otlp_traces(body, keys, _record, _record)
    return [spans, rejected]


def _id(value: bytes, size: int) -> bool:
    return len(value) == size and any(value)


def oracle(request: Any) -> list[object]:
    """The Python decoding before the compiled core took over (sources/otlp/spans.py at 77929e0), with a span rejected
    for invalid UTF-8 in it, its resource or its scope (the first such field named), `request` a RAW_REQUEST."""
    spans: list[object] = []
    rejected: list[object] = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        above = _first([*_bad_pairs(resource_spans.resource.attributes, "resource "),
                        (_bad(resource_spans.schema_url), "the resource's schema URL")])
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            in_scope = _first([(_bad(scope.name), "the scope's name"), (_bad(scope.version), "the scope's version"),
                               *_bad_pairs(scope.attributes, "scope "), (_bad(scope_spans.schema_url), "the scope's schema URL")])
            for s in scope_spans.spans:
                invalid = above or in_scope or _invalid_span(s)
                if not _id(s.trace_id, 16):
                    rejected.append((_text(s.name), "invalid_trace_id", "trace_id must be 16 non-zero bytes"))
                elif not _id(s.span_id, 8):
                    rejected.append((_text(s.name), "invalid_span_id", "span_id must be 8 non-zero bytes"))
                elif invalid:
                    rejected.append((_text(s.name), "invalid_utf8", f"{invalid} is not valid UTF-8"))
                else:
                    spans.append((s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex() if _id(s.parent_span_id, 8) else None,
                                  _text(s.name), s.start_time_unix_nano, s.end_time_unix_nano, _attributes(s.attributes), resource,
                                  [(_text(e.name), e.time_unix_nano, _attributes(e.attributes)) for e in s.events] or (),
                                  s.ByteSize(),
                                  _text(scope.name), s.kind, s.status.code, _text(s.status.message)))
    return [spans, rejected]


def same(a: object, b: object) -> bool:
    """Equal, with -0.0 apart from 0.0 (the wire keeps the sign)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and str(a) == str(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(REQUESTS)
def test_the_native_otlp_decoding_equals_opentelemetry_protos_on_any_request(request: ExportTraceServiceRequest) -> None:
    body = request.SerializeToString()
    assert same(native(body), oracle(RAW_REQUEST.FromString(body)))


NOTHING = _native.KeyFilter(set(), [])


def without_span_attributes(records: object) -> object:
    if records == "refused":
        return records
    spans, rejected = records  # type: ignore[misc]
    return [[record[:6] + ({},) + record[7:] for record in spans], rejected]


def outcome(body: bytes, keys: _native.KeyFilter | None = None) -> tuple[object, object]:
    """What each decoding makes of `body`: its records, or that it refused it. With `keys` dropping every span
    attribute, the native decoding only checks them (no values built): it must refuse what the oracle refuses."""
    try:
        request = RAW_REQUEST.FromString(body)
    except Exception:  # noqa: BLE001 - DecodeError, and RecursionError past the depth limit
        expected: object = "refused"
    else:
        expected = oracle(request)
    try:
        got = native(body, keys)
    except ValueError:
        got = "refused"
    return (expected, got) if keys is None else (without_span_attributes(expected), got)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(REQUESTS, st.data())
def test_a_truncated_or_corrupted_request_is_refused_or_read_alike(request: ExportTraceServiceRequest, data: st.DataObject) -> None:
    body = bytearray(request.SerializeToString())
    if body:
        if data.draw(st.booleans()):
            del body[data.draw(st.integers(0, len(body) - 1)):]
        else:
            for _ in range(data.draw(st.integers(1, 3))):
                body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
    for keys in (None, NOTHING):
        expected, got = outcome(bytes(body), keys)
        assert (expected == "refused") == (got == "refused") and (expected == "refused" or same(expected, got)), (expected, got)


def test_nesting_past_the_depth_limit_is_refused_as_the_protobuf_runtime_refuses_it() -> None:
    def nested(levels: int) -> bytes:
        value = AnyValue(string_value="x")
        for _ in range(levels):
            value = AnyValue(array_value={"values": [value]})
        span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, attributes=[KeyValue(key="deep", value=value)])
        return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]).SerializeToString()

    for keys in (None, NOTHING):
        assert outcome(nested(47), keys)[0] != "refused" and outcome(nested(47), keys)[1] != "refused"
        assert outcome(nested(48), keys) == ("refused", "refused")
        with pytest.raises(Exception):  # noqa: B017 - upb's DecodeError
            ExportTraceServiceRequest.FromString(nested(48))


def _cut(text: str) -> bytes:
    """`text` in UTF-8 with its first multibyte character cut after its first byte (what a writer cutting at a byte
    limit makes), the bytes after it kept: the same length on the wire."""
    at = next(i for i, char in enumerate(text) if not char.isascii())
    head, char = text[:at].encode(), text[at].encode()
    return head + char[:1] + b"x" * (len(char) - 1) + text[at + 1:].encode()


def test_invalid_utf8_rejects_only_the_spans_holding_it() -> None:
    """A multibyte character cut in a string, which upb refuses the whole request for, costs only the span holding
    it (anywhere in it, in an attribute the filter drops too), or every span under the resource or scope holding it:
    each named with what is wrong, the request's other spans made."""
    deep = AnyValue(kvlist_value={"values": [KeyValue(key="k", value=AnyValue(array_value={"values": [AnyValue(string_value="v\u00e9")]}))]})
    spans = [Span(name=f"s{i}", trace_id=bytes([i + 1]) * 16, span_id=b"\x02" * 8,
                  attributes=[KeyValue(key="input.value", value=AnyValue(string_value="caf\u00e9"))]) for i in range(3)]
    spans[1].attributes.append(KeyValue(key="dropped", value=deep))
    spans[1].events.append(Span.Event(name="ev\u00e9nement"))
    spans[1].links.append(Span.Link(trace_id=b"\x01" * 16, span_id=b"\x03" * 8, trace_state="\u00e9t\u00e9"))
    spans[1].status.message = "\u00e9chec"
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource={"attributes": [KeyValue(key="service.name", value=AnyValue(string_value="na\u00efve"))]},
        scope_spans=[ScopeSpans(scope={"name": "sc\u00f6pe"}, spans=spans)])])
    body = request.SerializeToString()
    assert len(native(body)[0]) == 3
    cases = {  # where the cut character is: the rejected spans, (name, reason, what is wrong)
        "caf\u00e9": [("s0", "invalid_utf8", "attribute 'input.value' is not valid UTF-8")],  # the first span's value
        "v\u00e9": [("s1", "invalid_utf8", "attribute 'dropped' is not valid UTF-8")],
        "ev\u00e9": [("s1", "invalid_utf8", "event 'ev\ufffdxnement' is not valid UTF-8")],
        "\u00e9t\u00e9": [("s1", "invalid_utf8", "a link is not valid UTF-8")],
        "\u00e9chec": [("s1", "invalid_utf8", "the status message is not valid UTF-8")],
        "na\u00efve": [(f"s{i}", "invalid_utf8", "resource attribute 'service.name' is not valid UTF-8") for i in range(3)],
        "sc\u00f6": [(f"s{i}", "invalid_utf8", "the scope's name is not valid UTF-8") for i in range(3)],
    }
    for text, rejected in cases.items():
        bad = body.replace(text.encode(), _cut(text), 1)
        assert len(bad) == len(body) and bad != body
        for keys in (None, NOTHING):
            expected, got = outcome(bad, keys)
            assert same(expected, got), (text, expected, got)
            assert got[1] == rejected, text  # type: ignore[index]
            assert [span[3] for span in got[0]] == [name for name in ("s0", "s1", "s2")  # type: ignore[index]
                                                    if name not in {r[0] for r in rejected}]
    bad_name = body.replace(b"s1", b"s\xc3", 1)
    assert native(bad_name)[1] == [("s\ufffd", "invalid_utf8", "the name is not valid UTF-8")]


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(REQUESTS, st.sets(st.sampled_from(["input.value", "a", "b", ""]), max_size=3), st.sampled_from([[], ["llm."], ["", "x"]]))
def test_a_key_filter_keeps_exactly_the_span_attributes_it_names(request: ExportTraceServiceRequest, exact: set[str],
                                                                  prefixes: list[str]) -> None:
    body = request.SerializeToString()
    keys = _native.KeyFilter(exact, prefixes)
    spans, rejected = native(body)
    filtered = [tuple(record[:6]) + ({k: v for k, v in record[6].items() if k in exact or k.startswith(tuple(prefixes))},)  # type: ignore[index,union-attr]
                + tuple(record[7:]) for record in spans]  # type: ignore[index]
    assert same(native(body, keys), [filtered, rejected])


def _varint(number: int) -> bytes:
    out = b""
    while number > 0x7F:
        out, number = out + bytes([number & 0x7F | 0x80]), number >> 7
    return out + bytes([number])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _groups(levels: int) -> bytes:
    return _varint(9 << 3 | 3) * levels + _varint(9 << 3 | 4) * levels


def _with_value(value: bytes, more: bytes = b"") -> bytes:
    """A request with one span whose attribute "k" is the AnyValue `value` (then `more` KeyValue fields)."""
    span = _field(1, b"\x01" * 16) + _field(2, b"\x02" * 8) + _field(9, _field(1, b"k") + _field(2, value) + more)
    return _field(1, _field(2, _field(2, span)))


def _without_sizes(records: object) -> object:
    """The size is the span's bytes on the wire; upb's ByteSize() re-encodes the merged message."""
    return records if records == "refused" else [[r[:9] + r[10:] for r in records[0]], records[1]]  # type: ignore[index]


STRING, ONE, TWO = _field(1, b"x"), _field(5, _field(1, b"\x18\x01")), _field(5, _field(1, b"\x18\x02"))
SPAN = _field(1, b"\x01" * 16) + _field(2, b"\x02" * 8)
WIRE_ODDITIES = {
    "a group": _with_value(_groups(1) + STRING), "a group holding a varint": _with_value(_varint(9 << 3 | 3) + b"\x08\x01" + _varint(9 << 3 | 4) + STRING),
    "groups to the depth limit": _with_value(_groups(95) + STRING), "groups past it": _with_value(_groups(96) + STRING),
    "a group ended by another": _with_value(_varint(9 << 3 | 3) + _varint(8 << 3 | 4) + STRING),
    "a group's end alone": _with_value(_varint(9 << 3 | 4) + STRING), "a group not ended": _with_value(_varint(9 << 3 | 3) + STRING),
    "the largest field number": _with_value(_varint((2**29 - 1) << 3) + b"\x01" + STRING),
    "a field number past it": _with_value(_varint(2**29 << 3) + b"\x01" + STRING),
    "an array given twice": _with_value(ONE + TWO), "a value given twice": _with_value(ONE, _field(2, TWO)),
    "a value given twice, the second empty": _with_value(ONE, _field(2, b"")),
    "a string then an array": _with_value(STRING, _field(2, TWO)),
    "a resource given twice": _field(1, _field(1, _field(1, _field(1, b"a") + _field(2, STRING)))
                                     + _field(1, _field(1, _field(1, b"b") + _field(2, STRING))) + _field(2, _field(2, SPAN))),
    "a scope given twice, the second nameless": _field(1, _field(2, _field(1, _field(1, b"s")) + _field(1, _field(2, b"v")) + _field(2, SPAN))),
    "a scope given twice": _field(1, _field(2, _field(1, _field(1, b"s")) + _field(1, _field(1, b"t")) + _field(2, SPAN))),
}


def test_wire_oddities_no_exporter_sends_are_read_as_the_protobuf_runtime_reads_them() -> None:
    """Unknown groups skipped (nesting under the depth limit), field numbers past 2^29 - 1 refused, a message
    field given twice merged: found by a review, each checked against upb with and without the filter."""
    refused = set()
    for name, body in WIRE_ODDITIES.items():
        for keys in (None, NOTHING):
            expected, got = outcome(body, keys)
            assert _without_sizes(expected) == _without_sizes(got) or same(_without_sizes(expected), _without_sizes(got)), (name, expected, got)
        refused |= {name} if got == "refused" else set()
    assert refused == {"groups past it", "a group ended by another", "a group's end alone", "a group not ended",
                       "a field number past it"}
