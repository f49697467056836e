"""A chunk as the local judge reads it (judging/local_judge.py), and what holding that analysis costs.

Analyses are cached by text and a knowledge base has many chunks, so an analysis keeps one copy of each string:
its terms, characters and stems are the interpreter's interned strings (a Chinese chunk's bigrams and characters
recur in its clauses, its own sets and other chunks: every clause had fresh copies, three of each character), and
its empty sets are one set. The sets and their contents are the same, so every verdict is.
"""

from __future__ import annotations

import sys

import msgspec

from ragpulse._native import ClauseIndex
from ragpulse.scorers.text import Clause, clause, clauses, question_terms, sentences

MAX_CHARS = 4_000  # of an answer, a question or a chunk: longer texts are judged on their start
_EMPTY: frozenset[str] = frozenset()
_NO_QUANTITIES: frozenset[tuple[str, float]] = frozenset()
# What the cache adds a text: its ordered dict's slot and link, the (analysis, bytes) tuple and the int.
_ENTRY_BYTES = 256
# A string's slot in the interpreter's table of interned strings (hash, key and value, its index, the table's
# slack), counted with every analysis that holds the string.
_INTERNED_SLOT_BYTES = 64


class ChunkAnalysis(msgspec.Struct, frozen=True, gc=False):
    sentences: tuple[tuple[Clause, ...], ...]  # each sentence as its clauses
    clauses: tuple[Clause, ...]  # the same, flat
    index: ClauseIndex  # a term or a quantity -> the clauses (flat) that have it, in the crate (the alignment's)
    terms: frozenset[str]  # of all its clauses
    chars: frozenset[str]
    quantities: frozenset[tuple[str, float]]
    names: frozenset[str]
    spelled: frozenset[tuple[str, float]]
    topic: frozenset[str]  # question_terms() of the chunk, for its relevance to a question
    negated: frozenset[str]  # the terms its negated clauses negate
    affirmed: frozenset[str]  # the terms of its clauses that are not negated (its terms when none is negated)


def _shared(items: frozenset[str]) -> frozenset[str]:
    return frozenset(map(sys.intern, items)) if items else _EMPTY


def _compact(parsed: Clause) -> Clause:
    """The clause with interned strings and the one empty set."""
    return Clause(parsed.text, _shared(parsed.terms), _shared(parsed.words), parsed.cjk_parts, _shared(parsed.chars),
                  tuple(map(sys.intern, parsed.sequence)), parsed.quantities or _NO_QUANTITIES, _shared(parsed.names),
                  parsed.negated, _shared(parsed.governed), parsed.spelled or _NO_QUANTITIES)


def analyse(text: str) -> ChunkAnalysis:
    grouped = tuple(tuple(_compact(clause(part)) for part in clauses(sentence)) for sentence in sentences(text[:MAX_CHARS]))
    parsed = tuple(c for sentence in grouped for c in sentence)
    terms = _EMPTY.union(*(c.terms for c in parsed)) or _EMPTY
    negated = [c for c in parsed if c.negated]
    return ChunkAnalysis(
        grouped,
        parsed,
        ClauseIndex([(c.terms, c.quantities) for c in parsed]),
        terms,
        _EMPTY.union(*(c.chars for c in parsed)) or _EMPTY,
        _NO_QUANTITIES.union(*(c.quantities for c in parsed)) or _NO_QUANTITIES,
        _EMPTY.union(*(c.names for c in parsed)) or _EMPTY,
        _NO_QUANTITIES.union(*(c.spelled for c in parsed)) or _NO_QUANTITIES,
        _shared(question_terms(text[:MAX_CHARS])),
        _EMPTY.union(*(c.governed or c.terms for c in negated)) or _EMPTY,
        _EMPTY.union(*(c.terms for c in parsed if not c.negated)) or _EMPTY if negated else terms,
    )


def _held(items: frozenset[str] | frozenset[tuple[str, float]]) -> int:
    return 0 if not items else sys.getsizeof(items)


def _quantities(items: frozenset[tuple[str, float]]) -> int:
    return sum(sys.getsizeof(q) + sys.getsizeof(q[0]) + sys.getsizeof(q[1]) for q in items)


def footprint(analysis: ChunkAnalysis, text: str) -> int:
    """An upper estimate of the bytes a cache entry of this analysis holds: every container, each of its strings
    once with its interned slot (a string other analyses share is counted in each), the index's heap, the text."""
    parsed = analysis.clauses
    strings = analysis.terms | analysis.chars | analysis.topic | analysis.negated | analysis.names
    strings = strings.union(*(c.governed for c in parsed if c.governed))
    total = (_ENTRY_BYTES + sys.getsizeof(text) + sys.getsizeof(analysis) + sys.getsizeof(analysis.sentences)
             + sum(map(sys.getsizeof, analysis.sentences)) + sys.getsizeof(parsed) + sys.getsizeof(analysis.index)
             + sum(map(sys.getsizeof, strings)) + _INTERNED_SLOT_BYTES * len(strings)
             + _held(analysis.terms) + _held(analysis.chars) + _held(analysis.names) + _held(analysis.topic)
             + _held(analysis.negated) + (_held(analysis.affirmed) if analysis.affirmed is not analysis.terms else 0)
             + _held(analysis.quantities) + _held(analysis.spelled))
    for c in parsed:
        total += (sys.getsizeof(c) + sys.getsizeof(c.text) + sys.getsizeof(c.cjk_parts) + sum(map(sys.getsizeof, c.cjk_parts))
                  + sys.getsizeof(c.sequence) + _held(c.terms) + _held(c.words) + _held(c.chars) + _held(c.names)
                  + _held(c.governed) + _held(c.quantities) + _held(c.spelled) + _quantities(c.quantities)
                  + _quantities(c.spelled))
    return total
