"""A trace's retrieved documents as chunks (sources/otlp/documents.py): a chunk retrieved twice is kept once."""

from __future__ import annotations

from typing import Any

import pytest

from ragpulse.collector.events import Chunk
from ragpulse.sources.otlp.documents import chunks_of
from ragpulse.sources.otlp.spans import Span

pytestmark = pytest.mark.unit


def retriever(number: int, documents: list[dict[str, Any]]) -> Span:
    return Span(trace_id="a" * 32, span_id=f"{number:016x}", parent_span_id=None, name="retrieve",
                start_unix_nano=number, end_unix_nano=number + 1, attributes={"openinference.span.kind": "RETRIEVER"},
                resource={}, documents={"retrieval.documents": documents})


def test_one_retrieval_keeps_its_documents_in_order_each_once() -> None:
    distinct = [{"id": "d1", "content": "one", "score": 0.9}, {"id": "d2", "content": "two", "score": 0.5}]
    assert chunks_of([retriever(1, distinct)], {}) == (
        [Chunk(text="one", id="d1", score=0.9), Chunk(text="two", id="d2", score=0.5)], 1)
    repeated = [{"id": "d1", "content": "one"}, {"id": "d2", "content": "two"}, {"id": "d1", "content": "one again"}]
    assert chunks_of([retriever(1, repeated)], {}) == ([Chunk(text="one", id="d1"), Chunk(text="two", id="d2")], 1)
    without_ids = [{"content": "same"}, {"content": "same"}, {"content": "other"}]
    assert chunks_of([retriever(1, without_ids)], {}) == ([Chunk(text="same"), Chunk(text="other")], 1)


def test_several_retrievals_tag_their_chunks_and_keep_a_repeated_one_from_its_first() -> None:
    first = retriever(1, [{"id": "d1", "content": "one"}])
    second = retriever(2, [{"id": "d1", "content": "one"}, {"id": "d3", "content": "three"}])
    assert chunks_of([second, first], {}) == (
        [Chunk(text="one", id="d1", retrieval=0), Chunk(text="three", id="d3", retrieval=1)], 2)
