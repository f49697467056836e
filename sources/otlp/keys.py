"""The span attribute keys the mapping reads (mapping.py, documents.py, messages.py, tool_calls.py, tool_results.py,
failures.py) and the assembler's,
declared once.

The decoder (native/src/otlp.rs) keeps only these: an instrumentor's other attributes (embedding vectors, mime
types) are read and checked on the wire but never become Python objects. A family is kept whole, with what no
rule reads in it (llm.invocation_parameters, tool schemas). A rule
that reads a new key adds it here; tests/test_otlp_keys.py fails when a key the mapping names is not kept.
Resource and event attributes are kept whole (one resource per request; events are few).
"""

from __future__ import annotations

from ragpulse._native import KeyFilter
from ragpulse.collector.events import Chunk
from ragpulse.sources.otlp.role_rules import ROLE_RULES

EXACT_KEYS = frozenset({
    "openinference.span.kind", "input.value", "output.value",  # OpenInference, besides llm.*
    "session.id", "user.id", "metadata", "tag.tags", "metadata.sessionId", "metadata.userId",
    "ragpulse.probe",  # probes/marker.py
    "tool.name", "tool.description",  # OpenInference TOOL spans
    "tool_arguments", "tool_response",  # Pydantic AI's instrumentation version 2
    "error.type",  # a failed call (failures.py)
    "pydantic_ai.all_messages",  # Pydantic AI's run span: the question of a run whose model call failed
})
# Whole families: token counts and messages by index, retrieved documents by index, every convention's own
# namespace (and whether a span has any gen_ai., llm. or ai. key at all: mapping.py's unmapped_genai).
# OpenInference's documents by index (retrieval.documents.N.document.FIELD), a family each: the decoder gathers a span's
# into one structure (Span.documents), so the mapping never builds those keys nor matches them one by one.
DOCUMENT_FAMILIES = ("retrieval.documents", "reranker.output_documents")
KEY_PREFIXES = ("gen_ai.", "llm.", "ai.", "traceloop.", *(family + "." for family in DOCUMENT_FAMILIES))
# The assembler's (assembler.py): a span that names the other side of its call, as OpenTelemetry's conventions
# name it on the calling side (the remote service; the URL called), is a call out, whose other side may come later.
PEER_KEYS = frozenset({"peer.service", "url.full", "http.url"})


def key_filter(route_attribute: str | None = None) -> KeyFilter:
    """The mapping's keys, and the configured otlp.route_attribute; the spans made with it know their roles, and their
    plain documents come as chunks (documents.py)."""
    return KeyFilter(EXACT_KEYS | PEER_KEYS | ({route_attribute} if route_attribute else set()), list(KEY_PREFIXES),
                     list(DOCUMENT_FAMILIES), ROLE_RULES, Chunk)


MAPPED_KEYS = key_filter()
