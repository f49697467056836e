"""The kept events' form in the compiled core (native/src/kept.rs) against the Python it replaced (feedback/kept.py's
KeptEvents.pack and its store of texts, as they were at 0d5e552, here as `Reference`): on generated events, the same
serialization, the same strings held (the first event's, while the store holds them), the same bytes, store and
evictions; and the event packed left as it was."""

from __future__ import annotations

import copy
from collections import OrderedDict

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter
from ragpulse.feedback.kept import TEXT_ENTRY_BYTES, Kept, KeptEvents, unpack

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

_TEXT_KEY = 5


def _str_header(size: int) -> int:
    return 1 if size < 32 else 2 if size < 256 else 3 if size < 65536 else 5


class Reference:
    """feedback/kept.py's KeptEvents as it was in Python."""

    def __init__(self, evicted: FastCounter, max_texts: int, max_bytes: int) -> None:
        self._encode = msgspec.msgpack.Encoder().encode
        self._texts: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._max_texts, self._max_bytes = max_texts, max_bytes
        self._evicted = evicted
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._texts)

    def pack(self, event: TraceEvent) -> tuple[Kept, int]:
        chunks, texts, size = event.chunks, (), 0
        if chunks:
            shared = [None if chunk.text is None else self._share(chunk.text) for chunk in chunks]
            texts = tuple(None if held is None else held[0] for held in shared)
            size = sum(_TEXT_KEY + _str_header(held[1]) + held[1] for held in shared if held is not None)
            event = msgspec.structs.replace(event, attributes={}, chunks=[
                chunk if chunk.text is None else msgspec.structs.replace(chunk, text=None) for chunk in chunks])
        elif event.attributes:
            event = msgspec.structs.replace(event, attributes={})
        payload = self._encode(event)
        return (payload, texts), len(payload) + size

    def _share(self, text: str) -> tuple[str, int]:
        held = self._texts.get(text)
        if held is not None:
            self._texts.move_to_end(text)
            return held
        held = (text, len(text) if text.isascii() else len(text.encode()))
        cost = held[1] + TEXT_ENTRY_BYTES
        if cost > self._max_bytes:
            return held
        self._texts[text] = held
        self.bytes += cost
        while len(self._texts) > self._max_texts or self.bytes > self._max_bytes:
            self.bytes -= self._texts.popitem(last=False)[1][1] + TEXT_ENTRY_BYTES
            self._evicted.inc()
        return held


# Few distinct texts, so that they recur; of every UTF-8 length class msgpack's header depends on.
_texts = st.sampled_from(["", "a", "退货政策", "x" * 31, "y" * 32, "z" * 255, "w" * 256, "é" * 200, "v" * 70_000])
_chunk = st.builds(Chunk, text=st.none() | _texts, id=st.none() | st.sampled_from(["c1", "c2"]),
                   rank=st.none() | st.integers(0, 5), score=st.none() | st.floats(0, 1))
_event = st.builds(
    TraceEvent, trace_id=st.sampled_from(["t1", "t2", "t3"]), query=st.text(max_size=8), answer=st.none() | _texts,
    chunks=st.none() | st.lists(_chunk, max_size=5),
    attributes=st.dictionaries(st.sampled_from(["k", "n"]), st.integers(-1000, 1000) | st.text(max_size=4), max_size=2),
    context=st.none() | st.lists(_chunk, max_size=2))


def _copies(event: TraceEvent) -> TraceEvent:
    """The event with new string objects (a decoded one's), so that which string is held is seen."""
    fresh = msgspec.msgpack.decode(msgspec.msgpack.encode(event), type=TraceEvent)
    for chunk in fresh.chunks or ():
        chunk.text = None if chunk.text is None else "".join(list(chunk.text))
    return fresh


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 6), st.sampled_from([200, 700, 2_000, 1 << 20]), st.lists(_event, max_size=25),
       st.booleans())
def test_pack_is_the_python_packs_on_generated_events(max_texts: int, max_bytes: int, events: list[TraceEvent],
                                                      shared_chunk: bool) -> None:
    registry = CollectorRegistry()
    family = CounterFamily("evicted_total", "texts let go", ["by"], registry)
    native, reference = KeptEvents(family.labels("native"), max_texts, max_bytes), Reference(
        family.labels("python"), max_texts, max_bytes)
    for event in map(_copies, events):
        if shared_chunk and event.chunks:
            event.chunks.append(event.chunks[0])  # the same chunk object twice
        before = copy.deepcopy(event)
        (payload, texts), size = native.pack(event)
        (expected_payload, expected_texts), expected_size = reference.pack(event)
        assert event == before  # its attributes and texts put back
        assert (payload, size) == (expected_payload, expected_size)
        assert len(texts) == len(expected_texts)
        assert all(a is b for a, b in zip(texts, expected_texts, strict=True))  # the very strings the Python held
        assert unpack((payload, texts)) == msgspec.structs.replace(before, attributes={})
        assert (len(native), native.bytes) == (len(reference), reference.bytes)
        assert registry.get_sample_value("evicted_total", {"by": "native"}) == registry.get_sample_value(
            "evicted_total", {"by": "python"})
