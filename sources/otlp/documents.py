"""What a trace's retrieval spans returned: their documents as chunks, in every convention ragpulse maps, each
tagged with the retrieval that returned it when there were several, with ids recovered from a retriever's output
when its document attributes lack them."""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any, cast

import msgspec

from ragpulse.collector.events import Chunk
from ragpulse.sources.otlp.keys import DOCUMENT_FAMILIES
from ragpulse.sources.otlp.messages import json_or_text as _json_or_text
from ragpulse.sources.otlp.role_rules import DB_QUERY_RESULT, OI_KIND
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import float_value as _float
from ragpulse.sources.otlp.values import text_value as _str

_START = attrgetter("start_unix_nano")  # a sort key in C, made once
# Indexes of at most 9 digits: a longer one is no real list position (and int() of 4,300 digits raises).
_DOC_PREFIXES = tuple(family + "." for family in DOCUMENT_FAMILIES)  # a cheap test before the pattern
_DOC_KEY = re.compile(rf"^(?P<prefix>{'|'.join(map(re.escape, DOCUMENT_FAMILIES))})\.(?P<i>\d{{1,9}})\.document\.(?P<field>\w+)$")


def _reports_documents(span: Span) -> bool:
    """Whether a retrieval span says what it retrieved (zero documents included), or only that it ran:
    without content capture a retriever records no documents, which is not an empty retrieval."""
    attrs = span.attributes
    return (
        has_documents(span)  # OpenInference document keys, or gen_ai.retrieval.documents
        or (bool(span.events) and any(e.name == DB_QUERY_RESULT for e in span.events))  # most spans have none
        or "traceloop.entity.output" in attrs
        or (attrs.get(OI_KIND) in ("RETRIEVER", "RERANKER") and "output.value" in attrs)
    )


def chunks_of(retrievers: list[Span], tools: dict[str, list[Chunk]]) -> tuple[list[Chunk] | None, int | None]:
    """The retrieved chunks, each tagged with the retrieval that returned it (in the order they ran), and the
    number of retrievals; (None, None) when no retrieval span reports its documents (retrieval not reported).
    `tools`: the chunks of the tool calls among `retrievers`, by span id (sources/otlp/tool_results.py).
    A reranker's output replaces what it reranked; a chunk retrieved twice is kept once, from its first."""
    retrievers = [s for s in retrievers if s.span_id in tools or _reports_documents(s)]
    if not retrievers:
        return None, None
    rerankers = [s for s in retrievers if s.attributes.get(OI_KIND) == "RERANKER"]
    for span in reversed(rerankers):
        documents = _documents(span, "reranker.output_documents")
        if documents:
            return documents, 1
    retrievals = [documents for span in sorted(retrievers, key=_START)
                  if (documents := tools.get(span.span_id) or _retrieved(span)) is not None]
    # A framework's outer and inner retriever spans of one search report the same documents: one retrieval.
    distinct: list[list[Chunk]] = []
    for documents in retrievals:
        if not distinct or documents != distinct[-1]:
            distinct.append(documents)
    if len(distinct) == 1:  # one retrieval, nearly always of documents with distinct ids: kept as they came
        ids = [chunk.id for chunk in distinct[0]]
        if None not in ids and len(set(ids)) == len(ids):
            return list(distinct[0]), 1
    chunks: list[Chunk] = []
    seen: set[tuple[str | None, str]] = set()
    several = len(distinct) > 1
    for number, documents in enumerate(distinct):
        for chunk in documents:
            key = (chunk.id, chunk.text if chunk.id is None else "")
            if key not in seen:
                seen.add(key)
                chunks.append(msgspec.structs.replace(chunk, retrieval=number) if several else chunk)
    return chunks, max(1, len(distinct))


def _retrieved(span: Span) -> list[Chunk] | None:
    documents = (
        _documents(span, "retrieval.documents") or _genai_documents(span) or _db_result_documents(span)
        or _traceloop_documents(span)
    )
    if documents and None in [chunk.id for chunk in documents]:  # ids are str or None: `in` finds only None
        documents = _ids_from_output(span, documents)
    return documents if documents or _reports_documents(span) else None


def _ids_from_output(span: Span, chunks: list[Chunk]) -> list[Chunk]:
    """Ids a retriever's output carries when its document attributes do not (OpenInference on LangChain writes
    `retrieval.documents.N.document.content` without ids, its `output.value` has `{"documents": [{"id": ...}]}`):
    matched by position, and only where the texts agree."""
    output = _json_or_text(span.attributes.get("output.value"))
    if isinstance(output, dict):
        output = next((output[k] for k in ("documents", "nodes", "source_nodes") if isinstance(output.get(k), list)), None)
    if not isinstance(output, list) or len(output) != len(chunks):
        return chunks
    matched = []
    for chunk, item in zip(chunks, output, strict=True):
        node = item.get("node") if isinstance(item, dict) and isinstance(item.get("node"), dict) else item
        if chunk.id is None and isinstance(node, dict):
            text = node.get("page_content") or node.get("text") or node.get("content")
            identity = node.get("id") or node.get("id_") or node.get("node_id")
            if identity is not None and (text is None or chunk.text is None or str(text).strip() == chunk.text.strip()):
                chunk = msgspec.structs.replace(chunk, id=_str(identity))
        matched.append(chunk)
    return matched


def _document_fields(span: Span, family: str) -> list[dict[str, Any]] | list[Chunk]:
    """A family's documents, each its fields by name, in index order: as the decoder gathered them (or the chunks it
    made of them), else from the flat keys (a span made otherwise, or a key spelt another way, e.g. index 007)."""
    if span.documents is not None:
        return span.documents.get(family, [])
    fields: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _DOC_KEY.match(key)
        if match and match["prefix"] == family:
            fields.setdefault(int(match["i"]), {})[match["field"]] = value
    return [doc for _, doc in sorted(fields.items())]


def _documents(span: Span, family: str) -> list[Chunk]:
    documents = _document_fields(span, family)
    if documents and type(documents[0]) is Chunk:
        # The decoder made them, the family's documents all plain (native/src/otlp/bindings.rs), as the loop below
        # would: the span's own, read by its trace's one mapping.
        return list(documents)  # type: ignore[arg-type]
    chunks = []
    for doc in cast("list[dict[str, Any]]", documents):
        metadata = doc.get("metadata")
        source = None
        if metadata is not None:
            metadata = _json_or_text(metadata)
            if isinstance(metadata, dict):
                source = _str(metadata.get("source") or metadata.get("file_name"))
        # A text, an id and a score as they nearly always come (a str, a str, a float) taken as they are: five
        # documents a retrieval, on every trace; anything else through the conversions.
        text, identity, score = doc.get("content"), doc.get("id"), doc.get("score")
        chunks.append(Chunk(text=text if type(text) is str else _str(text),
                            id=identity if type(identity) is str else _str(identity),
                            score=score if type(score) is float else _float(score), source=source))
    return chunks


def _genai_documents(span: Span) -> list[Chunk]:
    documents = span.attributes.get("gen_ai.retrieval.documents")
    if isinstance(documents, str):
        documents = _json_or_text(documents)
    if not isinstance(documents, list):
        return []
    return [
        # Spec-shaped documents carry id and score only: their text is not reported (None), not "".
        Chunk(text=_str(d.get("content") if d.get("content") is not None else d.get("text")), id=_str(d.get("id")),
              score=_float(d.get("score")))
        for d in documents
        if isinstance(d, dict)
    ]


def _db_result_documents(span: Span) -> list[Chunk]:
    """OpenLLMetry vector-DB instrumentations: one `db.query.result` event per returned document."""
    return [
        Chunk(
            text=_str(e.attributes.get("db.query.result.document")),
            id=_str(e.attributes.get("db.query.result.id")),
            score=_float(e.attributes.get("db.query.result.score")),
        )
        for e in span.events
        if e.name == DB_QUERY_RESULT
    ]


def _traceloop_documents(span: Span) -> list[Chunk]:
    """A Traceloop retriever task's output: a JSON list of nodes, each possibly JSON itself."""
    output = _json_or_text(span.attributes.get("traceloop.entity.output"))
    if isinstance(output, dict):
        output = next((v for k, v in output.items() if k in ("nodes", "documents", "source_nodes") and isinstance(v, list)), None)
    if not isinstance(output, list):
        return []
    chunks = []
    for item in output:
        item = _json_or_text(item)
        if isinstance(item, str):
            chunks.append(Chunk(text=item))
            continue
        if not isinstance(item, dict):
            continue
        node = item.get("node") if isinstance(item.get("node"), dict) else item
        text = node.get("text") or node.get("page_content") or node.get("content")
        chunks.append(Chunk(text=_str(text), id=_str(node.get("id_") or node.get("id") or node.get("node_id")),
                            score=_float(item.get("score"))))
    return chunks


def has_documents(span: Span) -> bool:
    if span.documents:  # the decoder gathered them
        return True
    attrs = span.attributes
    if "gen_ai.retrieval.documents" in attrs:
        return True
    for key in attrs:  # a loop, not a generator: asked of every retrieval span two or three times a trace
        if key.startswith(_DOC_PREFIXES) and _DOC_KEY.match(key):
            return True
    return False
