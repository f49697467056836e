"""A chunk as the local judge reads it (judging/local_judge.py), and what holding that analysis costs.

Analyses are cached by text and a knowledge base has many chunks, so an analysis is held in the crate
(native/src/chunk.rs): each distinct term once, each clause its words as ids and its CJK parts as text, the clauses
that have each term as positions. A clause's sets are made again when a verdict reads it (the same as
scorers/text.py's clause() gave), and what the judge asks of all a trace's chunks (whether a term is anywhere, what
of a claim they support, the alignment) is answered there too. As Python sets and strings a ~300-character Chinese
chunk held ~130 kB (the default cache held 257 of them); in the crate it holds under 8 kB, counted by the allocation
(docs/benchmarks-log.md).
"""

from __future__ import annotations

import sys

import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse._native import ChunkAnalysis, LexicalUnits
from ragpulse.scorers.lexical import units
from ragpulse.scorers.text import chunk_analysis, clauses, sentences
from ragpulse.scorers.text_cache import TextCache

MAX_CHARS = 4_000  # of an answer, a question or a chunk: longer texts are judged on their start
# What the cache adds a text: its ordered dict's slot and link, the CachedChunk and its int.
_ENTRY_BYTES = 256

__all__ = ["MAX_CHARS", "CachedChunk", "ChunkAnalysis", "ChunkCache", "analyse", "footprint"]


def analyse(text: str) -> ChunkAnalysis:
    held = text[:MAX_CHARS]
    return chunk_analysis([clauses(sentence) for sentence in sentences(held)], held)


def footprint(analysis: ChunkAnalysis, text: str) -> int:
    """The bytes a cache entry of this analysis holds: the entry, its key (the text) and the analysis with every
    allocation it holds (its __sizeof__, as malloc sizes them)."""
    return _ENTRY_BYTES + sys.getsizeof(text) + sys.getsizeof(analysis)


class CachedChunk(msgspec.Struct, frozen=True, gc=False):
    """A chunk as the cache holds it: the judge's analysis, the fast path's lexical units (the model's lexical
    feature, judging/judge_features.py) and the bytes both hold."""

    analysis: ChunkAnalysis
    lexical: LexicalUnits
    held: int


class ChunkCache:
    """Chunks' analyses by text (scorers/text_cache.py: capped in entries and in bytes, their own count of what they
    hold), with its gauges and evictions on the registry it is handed: a knowledge base's chunks are retrieved again
    and again."""

    def __init__(self, registry: CollectorRegistry, *, max_entries: int, max_bytes: int) -> None:
        self._evicted = Counter(
            "ragpulse_local_judge_chunk_cache_evicted_total",
            "Chunk analyses the local judge dropped for its entry or byte cap (least recently used first).", registry=registry,
        )
        self._cache = cache = TextCache(_cached, lambda _, chunk: chunk.held, max_entries=max_entries,
                                        max_bytes=max_bytes, evicted=self._evicted)
        # read when scraped: nothing to keep up to date on the judge's path
        self._entries = Gauge("ragpulse_local_judge_chunk_cache_entries", "Chunk analyses the local judge holds.",
                              registry=registry)
        self._entries.set_function(lambda: len(cache))
        self._held = Gauge("ragpulse_local_judge_chunk_cache_bytes",
                           "Estimated bytes of the chunk analyses the local judge holds.", registry=registry)
        self._held.set_function(lambda: cache.bytes)

    def __call__(self, text: str) -> CachedChunk:
        return self._cache.get(text)


def _cached(text: str) -> CachedChunk:
    analysis, lexical = analyse(text), units(text[:MAX_CHARS])
    return CachedChunk(analysis, lexical, footprint(analysis, text) + sys.getsizeof(lexical))
