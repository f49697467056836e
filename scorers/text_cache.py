"""What is made from recurring texts, kept by text: a chunk's lexical units (scorers/lexical.py), the local judge's
analysis of a chunk (judging/chunk_analysis.py). A knowledge base's chunks and a support bot's questions recur.

Least recently used out first, capped in entries and in bytes (each value's size as its owner counts it), each
eviction counted.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


class Counts(Protocol):
    def inc(self) -> None: ...


class TextCache(Generic[T]):
    """`make(text)` once a text while it stays; `size(text, value)` its bytes, asked when it comes and when it goes
    (the value is immutable: the same both times)."""

    def __init__(self, make: Callable[[str], T], size: Callable[[str, T], int], *, max_entries: int, max_bytes: int,
                 evicted: Counts) -> None:
        self._items: OrderedDict[str, T] = OrderedDict()
        self._make, self._size = make, size
        self._max_entries, self._max_bytes = max_entries, max_bytes
        self._evicted = evicted
        self._bytes = 0

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
        cached = items[text] = self._make(text)
        self._bytes += self._size(text, cached)
        while len(items) > self._max_entries or self._bytes > self._max_bytes:
            oldest, value = items.popitem(last=False)
            self._bytes -= self._size(oldest, value)
            self._evicted.inc()
        return cached
