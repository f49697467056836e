"""The span attribute keys the mapping reads (mapping.py, documents.py, messages.py, tools.py) and the assembler's,
declared once.

The decoder (native/src/otlp.rs) keeps only these: an instrumentor's other attributes (embedding vectors, mime
types) are read and checked on the wire but never become Python objects. A family is kept whole, with what no
rule reads in it (llm.invocation_parameters, tool schemas). A rule
that reads a new key adds it here; tests/test_otlp_keys.py fails when a key the mapping names is not kept.
Resource and event attributes are kept whole (one resource per request; events are few).
"""

from __future__ import annotations

from ragpulse._native import KeyFilter

EXACT_KEYS = frozenset({
    "openinference.span.kind", "input.value", "output.value",  # OpenInference, besides llm.*
    "session.id", "user.id", "metadata", "tag.tags", "metadata.sessionId", "metadata.userId",
    "ragpulse.probe",  # probes/marker.py
})
# Whole families: token counts and messages by index, retrieved documents by index, every convention's own
# namespace (and whether a span has any gen_ai., llm. or ai. key at all: mapping.py's unmapped_genai).
KEY_PREFIXES = ("gen_ai.", "llm.", "ai.", "traceloop.", "retrieval.documents.", "reranker.output_documents.")
# The assembler's (assembler.py): a span that names the other side of its call, as OpenTelemetry's conventions
# name it on the calling side (the remote service; the URL called), is a call out, whose other side may come later.
PEER_KEYS = frozenset({"peer.service", "url.full", "http.url"})


def key_filter(route_attribute: str | None = None) -> KeyFilter:
    """The mapping's keys, and the configured otlp.route_attribute."""
    return KeyFilter(EXACT_KEYS | PEER_KEYS | ({route_attribute} if route_attribute else set()), list(KEY_PREFIXES))


MAPPED_KEYS = key_filter()
