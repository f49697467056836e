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

from collections.abc import Callable

import msgspec

from ragpulse import _native
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import FastCounter

# A kept event: its msgpack serialization without its chunks' texts, and the texts (None: the chunk had none).
Kept = tuple[bytes, tuple[str | None, ...]]
MAX_TEXTS = 10_000
MAX_TEXT_BYTES = 8 * 1024 * 1024
# What a held text costs besides its bytes (the store's slot and tuple, the string's header), for the byte budget.
TEXT_ENTRY_BYTES = 160

_decode = msgspec.msgpack.Decoder(TraceEvent).decode


def unpack(kept: Kept) -> TraceEvent:
    """The event a Kept holds, whole but its attributes."""
    payload, texts = kept
    event = _decode(payload)
    for chunk, text in zip(event.chunks or (), texts):
        chunk.text = text
    return event


class KeptEvents:
    """Serializes the events the join keeps (`unpack` makes them again); shares their chunks' texts. The packing and
    the store run in the compiled core (native/src/kept.rs): this ran for every judgeable trace."""

    def __init__(self, evicted: FastCounter, max_texts: int = MAX_TEXTS, max_bytes: int = MAX_TEXT_BYTES) -> None:
        self._core = _native.KeptTexts(max_texts, max_bytes, TEXT_ENTRY_BYTES, evicted,
                                       msgspec.msgpack.Encoder().encode_into, TraceEvent, Chunk)
        # pack(event) -> (the event as it is kept, its attributes left out: they are not judged; its bytes)
        self.pack: Callable[[TraceEvent], tuple[Kept, int]] = self._core.pack

    def __len__(self) -> int:
        return len(self._core)

    @property
    def bytes(self) -> int:
        return self._core.bytes
