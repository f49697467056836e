"""The compiled core's fields read and written at their slots (native/src/fields.rs), through NDJSON lines
(native/src/lines.rs): an object of exactly the type a field was found on is read at the slot; any other (a
subclass) goes through getattr and setattr with the same result; a type whose field is no settable slot is refused."""

from __future__ import annotations

import msgspec
import pytest

from ragpulse import _native
from ragpulse.collector.decode import _ITEM_ERRORS, EventDecoder
from ragpulse.collector.events import Chunk, Envelope, TraceEvent
from ragpulse.config import LimitsConfig

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

_LIMITS = (512 * 1024, 100, 100, 10, 10, 100)
_LINE = (b'{"type": "trace", "trace_id": "t1", "query": "q", "answer": "a", "timestamp": 1796569917304, '
         b'"intent": "returns", "chunks": [{"text": "x"}, {"text": "y", "updated_at": 1796569917000}]}')


class SubChunk(Chunk, kw_only=True):
    """A chunk of another type: its fields are not at the slots TraceLines found on Chunk."""


def _lines(decode: object) -> list[Envelope]:
    lines = _native.TraceLines(TraceEvent, Chunk, Envelope, "http", _ITEM_ERRORS, _LIMITS)
    envelopes: list[Envelope] = []
    others: list[object] = []
    lines.decode(decode, _LINE, 1796569999.5, envelopes, lambda *item: others.append(item),
                 lambda *item: others.append(item))
    assert others == []
    return envelopes


def _fields(envelope: Envelope) -> tuple[object, ...]:
    event = envelope.event
    assert isinstance(event, TraceEvent)
    return (event.timestamp, event.route, [(c.text, c.rank, c.updated_at) for c in event.chunks or ()],
            envelope.identity, envelope.size, envelope.received_at)


def test_chunks_of_another_type_get_the_same_defaults_through_getattr() -> None:
    decode = msgspec.json.Decoder(TraceEvent).decode

    def as_subchunks(line: memoryview) -> TraceEvent:
        event = decode(line)
        event.chunks = [SubChunk(**msgspec.structs.asdict(chunk)) for chunk in event.chunks or ()]
        return event

    plain, = _lines(decode)
    other, = _lines(as_subchunks)
    assert [type(chunk) for chunk in other.event.chunks or ()] == [SubChunk, SubChunk]  # type: ignore[union-attr]
    assert _fields(other) == _fields(plain) == (
        1796569917.304, "returns", [("x", 0, None), ("y", 1, 1796569917.0)], hash("t\x00t1"), len(_LINE),
        1796569999.5)


def test_the_decoder_reads_a_line_as_before() -> None:
    envelope, = EventDecoder(LimitsConfig(), "http").decode_body(_LINE, ndjson=True).envelopes
    assert _fields(envelope)[:3] == (1796569917.304, "returns", [("x", 0, None), ("y", 1, 1796569917.0)])


class Frozen(msgspec.Struct, frozen=True):
    text: str | None = None
    rank: int | None = None
    updated_at: float | None = None


class Computed:
    @property
    def text(self) -> str:
        return ""


@pytest.mark.parametrize("chunk_type", [Frozen, Computed])
def test_a_type_whose_fields_are_no_settable_slots_is_refused(chunk_type: type) -> None:
    with pytest.raises(TypeError, match="text is no settable object slot"):
        _native.TraceLines(TraceEvent, chunk_type, Envelope, "http", _ITEM_ERRORS, _LIMITS)


def test_an_event_of_other_chunk_types_is_kept_the_same() -> None:
    from ragpulse.collector.telemetry.fast_metrics import FastCounter
    from ragpulse.feedback.kept import KeptEvents, unpack

    event, = (envelope.event for envelope in _lines(msgspec.json.Decoder(TraceEvent).decode))
    assert isinstance(event, TraceEvent)
    event.attributes = {"channel": "web"}
    other = msgspec.structs.replace(event, chunks=[SubChunk(**msgspec.structs.asdict(c)) for c in event.chunks or ()])
    kept, size = KeptEvents(FastCounter()).pack(event)
    assert KeptEvents(FastCounter()).pack(other) == (kept, size)
    assert kept[1] == ("x", "y") and size == len(msgspec.msgpack.encode(msgspec.structs.replace(event, attributes={})))
    assert unpack(kept) == msgspec.structs.replace(event, attributes={})
    assert (event.attributes, [c.text for c in other.chunks or ()]) == ({"channel": "web"}, ["x", "y"])  # put back
