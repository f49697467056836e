"""What is made from recurring texts, kept by text: a chunk's lexical units (scorers/lexical.py), the local judge's
analysis of a chunk (judging/chunk_analysis.py). A knowledge base's chunks and a support bot's questions recur.
The lexical scorer's caches are `CompiledTextCache`s, their table in the crate (native/src/made.rs: the compiled
stage finds a text there without calling Python); TextCache, here, is their definition and the judge's cache.

Least recently used out first, capped in entries and in bytes (each value's size as its owner counts it), each
eviction counted. A cache of texts that may never recur (questions) keeps a text only when it comes a second time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from ragpulse._native import TextTable

T = TypeVar("T")


class Counts(Protocol):
    def inc(self) -> None: ...


class SeenOnce:
    """Which texts came before, approximately (TinyLFU's doorkeeper): two bits a text in a fixed table of 16 bits an
    entry, cleared after `max_entries` texts marked, so a text counts as a repeat while fewer than that came between
    its two sightings. A new text wrongly taken for a repeat (about 0.5% of them at the default size) is only cached."""

    def __init__(self, max_entries: int) -> None:
        self._bits = 1 << max(10, (16 * max_entries - 1).bit_length())
        self._table = bytearray(self._bits // 8)
        self._marks, self._max_marks = 0, max_entries

    @property
    def bytes(self) -> int:
        return len(self._table)

    def repeat(self, text: str) -> bool:
        """Whether `text` was marked before; marks it."""
        key, table, mask = hash(text), self._table, self._bits - 1
        first, second = key & mask, (key >> 32) & mask
        if table[first >> 3] >> (first & 7) & 1 and table[second >> 3] >> (second & 7) & 1:
            return True
        if self._marks == self._max_marks:
            self._table, self._marks = bytearray(len(table)), 0
            table = self._table
        table[first >> 3] |= 1 << (first & 7)
        table[second >> 3] |= 1 << (second & 7)
        self._marks += 1
        return False


class TextCache(Generic[T]):
    """`make(text)` once a text while it stays; `size(text, value)` its bytes, asked when it comes and when it goes
    (the value is immutable: the same both times). `on_repeat`: a text is kept only when it comes again (after at
    most `max_entries` others): a stream of texts that never recur, one distinct question an answer, costs no
    insertions and evictions and holds no memory beyond the doorkeeper's fixed table."""

    def __init__(self, make: Callable[[str], T], size: Callable[[str, T], int], *, max_entries: int, max_bytes: int,
                 evicted: Counts, on_repeat: bool = False) -> None:
        self._items: OrderedDict[str, T] = OrderedDict()
        self._make, self._size = make, size
        self._max_entries, self._max_bytes = max_entries, max_bytes
        self._evicted = evicted
        self._bytes = 0
        self._seen = SeenOnce(max_entries) if on_repeat else None

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> OrderedDict[str, T]:
        """The table, least recently used first: the lexical scorer's compiled stage reads its hits there (and moves
        them to the end, as get does)."""
        return self._items

    @property
    def bytes(self) -> int:
        """What the values held count, by their sizes."""
        return self._bytes

    def get(self, text: str) -> T:
        items = self._items
        cached = items.get(text)
        if cached is not None:
            items.move_to_end(text)
            return cached
        if self._seen is not None and not self._seen.repeat(text):
            return self._make(text)
        cached = items[text] = self._make(text)
        self._bytes += self._size(text, cached)
        while len(items) > self._max_entries or self._bytes > self._max_bytes:
            oldest, value = items.popitem(last=False)
            self._bytes -= self._size(oldest, value)
            self._evicted.inc()
        return cached


class CompiledTextCache(TextTable):
    """TextCache with its table in the crate (native/src/made.rs), for the lexical scorer's compiled stage: the same
    rules (tests/test_native_text_table.py), its evictions counted in a FastCounter. `items` lists the texts held,
    least recently used first; `_items` and `_bytes` are TextCache's names for what it holds."""

    @property
    def _items(self) -> list[str]:
        return self.items

    @property
    def _bytes(self) -> int:
        return self.bytes
