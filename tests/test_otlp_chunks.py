"""The decoder's chunks of a span's plain documents (native/src/otlp/bindings.rs) against the Python reading of the
same documents' fields (sources/otlp/documents.py): the same chunks, field for field and type for type."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from helpers.otlp_payload import any_value
from ragpulse._native import KeyFilter
from ragpulse.collector.events import Chunk
from ragpulse.sources.otlp.documents import _documents, chunks_of
from ragpulse.sources.otlp.keys import DOCUMENT_FAMILIES, EXACT_KEYS, KEY_PREFIXES, PEER_KEYS, key_filter
from ragpulse.sources.otlp.role_rules import ROLE_RULES
from ragpulse.sources.otlp.spans import decode_protobuf

pytestmark = pytest.mark.unit

# The mapping's filter but for the chunk type: each family's documents come as their fields, for the Python reading.
FIELDS = KeyFilter(EXACT_KEYS | PEER_KEYS, list(KEY_PREFIXES), list(DOCUMENT_FAMILIES), ROLE_RULES)
EMPTY = AnyValue()  # a value that is none of the kinds: None to the Python reading
I64 = st.integers(-(2**63), 2**63 - 1)
TEXTS = st.text(max_size=80) | st.sampled_from(["", "d1", "x" * 70, "ünïcode 🙂", "0.5", " 1e3 ", "nan", "inf"])
IDS = TEXTS | I64 | st.floats() | st.booleans() | st.just(EMPTY)
CONTENTS = TEXTS | I64 | st.floats() | st.booleans() | st.just(EMPTY)
SCORES = st.floats() | I64 | st.sampled_from([2**53 + 1, -(2**63), 2**63 - 1]) | TEXTS | st.booleans() | st.just(EMPTY)
METADATA = (
    st.just(EMPTY) | TEXTS | I64
    | st.fixed_dictionaries({}, optional={"source": st.none() | st.text(max_size=8) | I64,
                                          "file_name": st.none() | st.text(max_size=8) | st.booleans()})
    .map(json.dumps)
)
FIELD_VALUES = {"id": IDS, "content": CONTENTS, "score": SCORES, "metadata": METADATA, "title": TEXTS}
# A document: any of its fields, absent or one of its values (a few chances of all three plain and nothing else).
DOCUMENTS = st.fixed_dictionaries({}, optional=FIELD_VALUES).filter(bool) | st.fixed_dictionaries(
    {"id": st.text(max_size=8), "content": st.text(max_size=80), "score": st.floats(allow_nan=False)})


def _plain(document: dict[str, object]) -> bool:
    """What the decoder makes a chunk of: a text or absent content, a text or integer id, a number score."""
    kinds = {"content": (str,), "id": (str, int), "score": (float, int), "metadata": ()}
    return all(value is EMPTY or (type(value) in kinds[field]) for field, value in document.items() if field in kinds)


def _span(families: dict[str, list[dict[str, object]]]) -> bytes:
    attributes = [KeyValue(key="openinference.span.kind", value=AnyValue(string_value="RERANKER"))]
    for family, documents in families.items():
        attributes += [KeyValue(key=f"{family}.{index}.document.{field}", value=any_value(value))
                       for index, document in enumerate(documents) for field, value in document.items()]
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[
        Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, attributes=attributes)])])]).SerializeToString()


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(DOCUMENT_FAMILIES), st.lists(DOCUMENTS, min_size=1, max_size=5), min_size=1))
def test_the_decoders_chunks_are_the_python_readings(families: dict[str, list[dict[str, object]]]) -> None:
    body = _span(families)
    [made] = decode_protobuf(body, key_filter()).spans
    [read] = decode_protobuf(body, FIELDS).spans
    assert made.documents is not None and read.documents is not None
    for family, documents in families.items():
        plain = all(map(_plain, documents))
        assert [type(document) is Chunk for document in made.documents[family]] == [plain] * len(documents)
        assert all(type(document) is dict for document in read.documents[family])
        # repr: a float score not an int, NaN as NaN
        assert repr(_documents(made, family)) == repr(_documents(read, family))
    assert repr(chunks_of([made], {})) == repr(chunks_of([read], {}))


def test_plain_documents_are_made_as_they_come_and_a_family_with_metadata_is_read_in_python() -> None:
    body = _span({"retrieval.documents": [{"id": 7, "content": "seven", "score": 2**53 + 1, "title": "t"},
                                          {"id": "d2", "score": 0.25, "content": EMPTY}],
                  "reranker.output_documents": [{"id": "d2", "metadata": '{"source": "a.md"}'}]})
    [span] = decode_protobuf(body, key_filter()).spans
    assert span.documents == {"retrieval.documents": [Chunk(text="seven", id="7", score=9007199254740992.0),
                                                      Chunk(id="d2", score=0.25)],
                              "reranker.output_documents": [{"id": "d2", "metadata": '{"source": "a.md"}'}]}
    assert _documents(span, "reranker.output_documents") == [Chunk(id="d2", source="a.md")]
