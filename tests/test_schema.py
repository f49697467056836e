"""The published JSON Schema files match the event model, and agree with the decoder."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from helpers.events import trace

from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.events import json_schema
from ragpulse.config import LimitsConfig

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

SCHEMAS = Path(__file__).resolve().parent.parent / "collector" / "schemas"


@pytest.mark.parametrize("event_type", ["trace", "feedback"])
def test_committed_schema_files_are_current(event_type: str) -> None:
    committed = json.loads((SCHEMAS / f"{event_type}.v1.json").read_text(encoding="utf-8"))
    assert committed == json_schema(event_type), f"regenerate: ragpulse schema {event_type} > collector/schemas/{event_type}.v1.json"


@pytest.mark.parametrize(
    ("event_type", "event", "valid"),
    [
        ("trace", trace("a", chunks=[{"id": "c", "text": "t", "score": 0.5}], usage={"prompt_tokens": 3}), True),
        ("trace", trace("a", timestamp="2026-11-29T10:00:00Z", latency_ms=5), True),
        ("trace", {**trace("a"), "query": None}, False),
        ("trace", trace("", answer="x"), False),
        ("trace", trace("a", chunks=[{"text": 3}]), False),
        ("trace", trace("a", usage={"prompt_tokens": -1}), False),
        ("feedback", {"type": "feedback", "kind": "thumbs", "trace_id": "a", "value": "up"}, True),
        ("feedback", {"type": "feedback", "kind": "smile", "trace_id": "a"}, False),
        ("feedback", {"type": "feedback", "kind": "copy", "value": [1], "trace_id": "a"}, False),
    ],
)
def test_schema_and_decoder_agree_on_types(event_type: str, event: dict[str, object], valid: bool) -> None:
    validator = jsonschema.Draft202012Validator(json_schema(event_type))
    assert validator.is_valid(event) is valid
    decoded = EventDecoder(LimitsConfig(), "test").decode_body(json.dumps(event).encode())
    assert (len(decoded.envelopes) == 1) is valid
