"""The local judge's alignment in the compiled core (native/src/align.rs, ClauseIndex and align_claim) against
the Python it replaced, kept here as the oracle: a dict index of each chunk's clauses by key, a count of the keys
each clause shares with the claim, Dice 2n / (claim size + clause size), the best clause the first of equals and
every clause within the margin of it. Keys are terms and quantities as Python's dict tells them apart: -0.0 is
0.0, a NaN equals nothing, a count of 3 is not the money 3."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import ClauseIndex, align_claim

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

Keys = tuple[frozenset[str], frozenset[tuple[str, float]]]


def oracle(claim: Keys, chunks: list[list[Keys]], margin: float) -> tuple[float, int, list[int]] | None:
    """The Python the crate replaced (judging/local_judge.py before it), on the same clauses."""
    candidates = [clause for chunk in chunks for clause in chunk]
    shared: dict[int, int] = {}
    offset = 0
    for chunk in chunks:
        index: dict[Any, list[int]] = {}
        for position, (terms, quantities) in enumerate(chunk):
            for key in (*terms, *quantities):
                index.setdefault(key, []).append(position)
        for key in (*claim[0], *claim[1]):
            for position in index.get(key, ()):
                shared[offset + position] = shared.get(offset + position, 0) + 1
        offset += len(chunk)
    claim_size = len(claim[0]) + len(claim[1])
    scored = sorted(((2 * n / (claim_size + len(candidates[p][0]) + len(candidates[p][1])), p) for p, n in shared.items()),
                    key=lambda item: (-item[0], item[1]))
    if not scored:
        return None
    best, position = scored[0]
    return best, position, sorted(p for d, p in scored if d >= best - margin)


def native(claim: Keys, chunks: list[list[Keys]], margin: float) -> tuple[float, int, list[int]] | None:
    located, offset = [], 0
    for chunk in chunks:
        located.append((offset, ClauseIndex(chunk)))
        offset += len(chunk)
    return align_claim(claim[0], claim[1], located, margin)


TERMS = st.frozensets(st.sampled_from(["return", "refund", "14", "day", "退货", "z", "", "ſ", "s"]), max_size=5)
# A NaN is drawn anew each time: the judge's claim and chunk clauses never share a float object.
VALUES = st.one_of(st.sampled_from([0.0, -0.0, 3.0, 14.0, 1e300, float("inf"), 0.5]), st.builds(float, st.just("nan")))
QUANTITIES = st.frozensets(st.tuples(st.sampled_from(["count", "money", "duration"]), VALUES), max_size=3)
CLAUSES = st.tuples(TERMS, QUANTITIES)


@settings(max_examples=1_500, deadline=None)
@given(claim=CLAUSES, chunks=st.lists(st.lists(CLAUSES, max_size=8), max_size=5),
       margin=st.sampled_from([0.0, 0.1, 0.25, 1.0]))
def test_the_alignment_equals_the_python_it_replaced(claim: Keys, chunks: list[list[Keys]], margin: float) -> None:
    assert native(claim, chunks, margin) == oracle(claim, chunks, margin)  # Dice exactly: the same two integers divided


def test_known_alignments() -> None:
    a, b, c = frozenset({"a"}), frozenset({"a", "b"}), frozenset({"a", "b", "c"})
    none: frozenset[tuple[str, float]] = frozenset()
    chunks = [[(b, none), (c, none)], [(a, none), (b, none)]]
    assert native((b, none), chunks, 0.1) == (1.0, 0, [0, 3])  # the first of two equal clauses is the best
    assert native((b, none), chunks, 0.25) == (1.0, 0, [0, 1, 3])  # 0.8 is within 0.25 of 1.0, 2/3 is not
    assert native((frozenset({"z"}), none), chunks, 0.1) is None
    def nan() -> frozenset[tuple[str, float]]:
        return frozenset({("count", float("nan"))})
    assert native((a, nan()), [[(a, nan())]], 0.1) == (0.5, 0, [0])  # a NaN counts in the size and matches nothing
    zero = frozenset({("count", -0.0)})
    assert native((none, frozenset({("count", 0.0)})), [[(a, zero)]], 0.1) == (2 / 3, 0, [0])


def test_an_index_finds_positions_and_reports_its_size() -> None:
    index = ClauseIndex([(frozenset({"refund"}), frozenset({("duration", 20160.0)})),
                         (frozenset({"refund", "day"}), frozenset())])
    assert len(index) == 2
    assert index.positions("refund") == [0, 1]
    assert index.positions(("duration", 20160.0)) == [0]
    assert index.positions(("count", 20160.0)) == []
    assert index.positions("absent") == []
    empty = ClauseIndex([])
    assert sys.getsizeof(index) > sys.getsizeof(empty) > 0  # the judge's cache counts it in its byte cap


def test_a_key_of_another_type_and_offsets_out_of_turn_are_refused_with_their_reason() -> None:
    for bad in ([(frozenset({1}), frozenset())], [(frozenset(), frozenset({("count",)}))]):
        with pytest.raises(ValueError, match=re.escape("a clause key is a term (str) or a quantity ((str, float))")):
            ClauseIndex(bad)  # type: ignore[arg-type]
    index = ClauseIndex([(frozenset({"a"}), frozenset())])
    for located, message in (([(1, index)], "offset 1 where 0 was due"), ([(0, index), (0, index)], "offset 0 where 1"),
                             ([(0, index), (5, index)], "offset 5 where 1 was due")):
        with pytest.raises(ValueError, match=message):
            align_claim(frozenset({"a"}), frozenset(), located, 0.1)
