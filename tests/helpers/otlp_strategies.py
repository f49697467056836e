"""Hypothesis strategies for OTLP trace requests (opentelemetry-proto's messages): any value, attribute list, span
and request the protocol allows, for the decoders' tests against their oracles (test_native.py, test_native_json.py)."""

from __future__ import annotations

from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

SCALARS = st.one_of(st.text(max_size=12).map(lambda s: AnyValue(string_value=s)), st.booleans().map(lambda b: AnyValue(bool_value=b)),
                    st.integers(-2**63, 2**63 - 1).map(lambda i: AnyValue(int_value=i)),
                    st.floats(allow_nan=False).map(lambda f: AnyValue(double_value=f)),
                    st.binary(max_size=8).map(lambda b: AnyValue(bytes_value=b)), st.just(AnyValue()))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda vs: AnyValue(array_value={"values": vs})),
    st.lists(st.tuples(st.text(max_size=6), inner), max_size=3).map(
        lambda kvs: AnyValue(kvlist_value={"values": [KeyValue(key=k, value=v) for k, v in kvs]}))), max_leaves=8)
ATTRIBUTES = st.lists(st.tuples(st.sampled_from(["input.value", "llm.model_name", "a", "b", ""]), VALUES), max_size=5).map(
    lambda kvs: [KeyValue(key=k, value=v) for k, v in kvs])
SPANS = st.builds(lambda trace, span, parent, name, kind, start, end, attributes, events: Span(
    trace_id=trace, span_id=span, parent_span_id=parent, name=name, kind=kind, start_time_unix_nano=start,
    end_time_unix_nano=end, attributes=attributes, events=[Span.Event(name=n, time_unix_nano=t, attributes=a) for n, t, a in events]),
    st.binary(min_size=0, max_size=17), st.binary(min_size=0, max_size=9), st.binary(max_size=9), st.text(max_size=10),
    st.integers(-2**31, 2**31 - 1), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), ATTRIBUTES,
    st.lists(st.tuples(st.text(max_size=6), st.integers(0, 2**64 - 1), ATTRIBUTES), max_size=2))
REQUESTS = st.lists(st.tuples(ATTRIBUTES, st.lists(st.tuples(st.text(max_size=8), st.lists(SPANS, max_size=3)), max_size=2)),
                    max_size=3).map(lambda resources: ExportTraceServiceRequest(resource_spans=[ResourceSpans(
                        resource={"attributes": attributes}, scope_spans=[ScopeSpans(scope={"name": scope}, spans=spans)
                                                                          for scope, spans in scopes])
                        for attributes, scopes in resources]))
