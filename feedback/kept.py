"""The events the feedback join keeps for late signals (feedback/join.py `keep`), their chunks' texts held once.

A kept event is what the judge reads when feedback about its answer comes late, and what golden-set candidates are
made of: the whole event but its attributes. Serialized whole, every kept event held its own copy of each chunk's
text, while a knowledge base's chunks recur across answers (the realistic OTLP benchmark: ~17,000 kept events over
2,000 chunks, about three quarters of their bytes the chunks' texts). Here the event is serialized without its chunks' texts, which are
held beside it as strings, the same string for every event a text recurs in while the shared store holds it.

The store is capped in entries and bytes (the least recently kept text goes first, counted): a text it let go stays
alive as long as a kept event holds it, and the next event with it holds a copy of its own. A kept event counts in
the trace table's bytes as its whole serialization (`pack`'s size: exactly what msgpack makes of the event with its
texts), so the table evicts as it did when it held that; the store's bytes are counted apart.
"""

from __future__ import annotations

from collections import OrderedDict

import msgspec

from ragpulse.collector.events import TraceEvent
from ragpulse.collector.telemetry.fast_metrics import FastCounter

# A kept event: its msgpack serialization without its chunks' texts, and the texts (None: the chunk had none).
Kept = tuple[bytes, tuple[str | None, ...]]
MAX_TEXTS = 10_000
MAX_TEXT_BYTES = 8 * 1024 * 1024
# What a held text costs besides its bytes (the store's slot and tuple, the string's header), for the byte budget.
TEXT_ENTRY_BYTES = 160
_TEXT_KEY = 5  # msgpack's "text" key in a chunk's map


def _str_header(size: int) -> int:
    """The bytes msgpack puts before a string of `size` bytes."""
    return 1 if size < 32 else 2 if size < 256 else 3 if size < 65536 else 5


_decode = msgspec.msgpack.Decoder(TraceEvent).decode


def unpack(kept: Kept) -> TraceEvent:
    """The event a Kept holds, whole but its attributes."""
    payload, texts = kept
    event = _decode(payload)
    for chunk, text in zip(event.chunks or (), texts):
        chunk.text = text
    return event


class KeptEvents:
    """Serializes the events the join keeps (`unpack` makes them again); shares their chunks' texts."""

    def __init__(self, evicted: FastCounter, max_texts: int = MAX_TEXTS, max_bytes: int = MAX_TEXT_BYTES) -> None:
        self._encode = msgspec.msgpack.Encoder().encode
        self._texts: OrderedDict[str, tuple[str, int]] = OrderedDict()  # a text -> (the string held, its UTF-8 bytes)
        self._max_texts, self._max_bytes = max_texts, max_bytes
        self._evicted = evicted
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._texts)

    def pack(self, event: TraceEvent) -> tuple[Kept, int]:
        """The event as it is kept (its attributes left out: they are not judged), and its bytes."""
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
            return held  # never shared: the event holds it alone
        self._texts[text] = held
        self.bytes += cost
        while len(self._texts) > self._max_texts or self.bytes > self._max_bytes:
            self.bytes -= self._texts.popitem(last=False)[1][1] + TEXT_ENTRY_BYTES
            self._evicted.inc()
        return held
