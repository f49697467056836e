"""The span attributes the decoding keeps (sources/otlp/keys.py) against the keys the mapping's modules name:
a rule reading a key the filter drops would see nothing, silently. tests/test_instrumentations.py maps real
instrumented apps' traces with and without the filter, to the same events."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ragpulse.sources.otlp.keys import MAPPED_KEYS, key_filter

MAPPING_MODULES = ["mapping", "documents", "messages", "tools"]
SOURCES = Path(__file__).resolve().parents[1] / "sources" / "otlp"
# Dotted names in those modules that are not span attribute keys: events and their attributes (kept whole),
# resource attributes (kept whole), instrumentation scopes and span names.
NOT_SPAN_KEYS = {
    "db.query.result", "db.query.result.document", "db.query.result.id", "db.query.result.score",  # an event
    "gen_ai.choice", "gen_ai.user.message",  # events
    "service.name", "service.version",  # resource
    "openinference.", "opentelemetry.instrumentation.", "opentelemetry.instrumentation.openai_v2",
    "opentelemetry.util.genai",  # scopes
}


def named_keys() -> set[str]:
    names = set()
    for module in MAPPING_MODULES:
        for node in ast.walk(ast.parse((SOURCES / f"{module}.py").read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[A-Za-z_]\w*(\.\w*)+", node.value):
                names.add(node.value)
    return names


def test_every_key_the_mapping_names_is_kept() -> None:
    names = named_keys()
    assert len(names) > 60 and NOT_SPAN_KEYS <= names  # the scan found the modules' keys, and the exceptions exist
    # A name is a key or a family's stem ("retrieval.documents": retrieval.documents.0.document.content, ...).
    dropped = sorted(name for name in names - NOT_SPAN_KEYS if not (MAPPED_KEYS.keeps(name) or MAPPED_KEYS.keeps(name + ".")))
    assert dropped == []
    assert MAPPED_KEYS.keeps("metadata") and MAPPED_KEYS.keeps("llm.input_messages.0.message.content")


def test_what_no_rule_reads_is_dropped_and_the_route_attribute_kept() -> None:
    for key in ["embedding.embeddings.0.embedding.vector", "input.mime_type", "http.method", "deployment.environment",
                "openinference.instrumentation", "db.query.result.document"]:
        assert not MAPPED_KEYS.keeps(key), key
    assert key_filter("deployment.environment").keeps("deployment.environment")
