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

from ragpulse._native import ChunkAnalysis
from ragpulse.scorers.text import chunk_analysis, clauses, sentences

MAX_CHARS = 4_000  # of an answer, a question or a chunk: longer texts are judged on their start
# What the cache adds a text: its ordered dict's slot and link, the (analysis, bytes) tuple and the int.
_ENTRY_BYTES = 256

__all__ = ["MAX_CHARS", "ChunkAnalysis", "analyse", "footprint"]


def analyse(text: str) -> ChunkAnalysis:
    held = text[:MAX_CHARS]
    return chunk_analysis([clauses(sentence) for sentence in sentences(held)], held)


def footprint(analysis: ChunkAnalysis, text: str) -> int:
    """The bytes a cache entry of this analysis holds: the entry, its key (the text) and the analysis with every
    allocation it holds (its __sizeof__, as malloc sizes them)."""
    return _ENTRY_BYTES + sys.getsizeof(text) + sys.getsizeof(analysis)
