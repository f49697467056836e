"""The lexical scorer's caches with their table in the crate (CompiledTextCache, native/src/made.rs) against TextCache
(scorers/text_cache.py), their definition: on generated sequences of texts, with and without the doorkeeper, under
caps in entries and in bytes, the same values returned, the same texts made, the same texts held in the same order,
the same bytes and the same evictions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse.collector.telemetry.fast_metrics import FastCounter
from ragpulse.scorers.text_cache import CompiledTextCache, TextCache

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

# Few distinct texts, so they recur; ASCII, Chinese and mixed, of sizes far apart (the byte cap bites on the long).
_TEXTS = st.sampled_from(("refunds", "退货期限是多久？", "a", "", "shipping " * 40, "保修" * 300, "Ünïcode ok", "x" * 999))
_SEQUENCES = st.lists(_TEXTS | st.text(max_size=12), max_size=60)


def _pair(entries: int, max_bytes: int, on_repeat: bool) -> tuple[list[str], list[str], FastCounter, FastCounter,
                                                                  TextCache[str], CompiledTextCache]:
    made: tuple[list[str], list[str]] = ([], [])
    evicted = (FastCounter(), FastCounter())

    def maker(into: list[str]):  # noqa: ANN202 - a closure over the list it appends to
        def make(text: str) -> str:
            into.append(text)
            return text.upper()
        return make

    def size(text: str, value: str) -> int:
        return 50 + len(text.encode()) + len(value)

    python = TextCache(maker(made[0]), size, max_entries=entries, max_bytes=max_bytes, evicted=evicted[0],
                       on_repeat=on_repeat)
    compiled = CompiledTextCache(maker(made[1]), size, max_entries=entries, max_bytes=max_bytes, evicted=evicted[1],
                                 on_repeat=on_repeat)
    return made[0], made[1], evicted[0], evicted[1], python, compiled


@settings(max_examples=1500, deadline=None)
@given(_SEQUENCES, st.integers(0, 6), st.integers(0, 6_000), st.booleans())
def test_the_compiled_table_holds_and_evicts_as_the_python_cache(texts: list[str], entries: int, max_bytes: int,
                                                                 on_repeat: bool) -> None:
    made_py, made_native, evicted_py, evicted_native, python, compiled = _pair(entries, max_bytes, on_repeat)
    for text in texts:
        assert compiled.get(text) == python.get(text)
        assert (compiled.items, compiled.bytes, len(compiled)) == (list(python.items), python.bytes, len(python))
    assert made_native == made_py
    assert evicted_native.value == evicted_py.value


def test_the_doorkeeper_clears_after_its_entries_and_a_text_of_a_lone_surrogate_is_made_not_held() -> None:
    made_py, made_native, _, _, python, compiled = _pair(3, 1 << 20, True)
    for text in ("a", "b", "c", "d", "a", "a"):  # the table cleared after three marks, at "d": "a" new again after it
        assert compiled.get(text) == python.get(text)
    assert compiled.items == list(python.items) == ["a"] and made_native == made_py == ["a", "b", "c", "d", "a", "a"]
    assert compiled.get("\ud800") == "\ud800" and compiled.items == ["a"] and compiled._items == ["a"]  # noqa: SLF001
    assert compiled._bytes == compiled.bytes == 50 + 1 + 1  # noqa: SLF001
