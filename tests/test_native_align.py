"""The local judge's chunks in the compiled core (native/src/chunk.rs, native/src/align.rs) against the Python they
replaced, kept here as the oracles. The alignment: a dict index of each chunk's clauses by key, a count of the keys
each clause shares with the claim, Dice 2n / (claim size + clause size), the best clause the first of equals and
every clause within the margin of it. Keys are terms and quantities as Python's dict tells them apart: -0.0 is
0.0, a NaN equals nothing, a count of 3 is not the money 3. A chunk held in the crate gives each clause back as
scorers/text.py's clause() read it, and answers what the chunks say (a term anywhere, what of a claim they support,
a term said only negated) as the union of the clauses' sets did."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import ChunkContext, topics_shared
from ragpulse.judging.chunk_analysis import analyse, footprint
from ragpulse.scorers import text

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
    """The crate's alignment over chunks of clauses with these keys: each clause a text of its terms and quantities
    (the terms drawn from words clause() keeps as they are, the quantities from ones it reads)."""
    context = ChunkContext([analyse("。".join(_said(c) for c in chunk)) for chunk in chunks])
    alignment = context.evidence(*claim, frozenset(), (), margin)[2]
    return None if alignment is None else alignment[:3]


WORDS = {"return": "return", "refund": "refund", "day": "day", "退货": "退货", "z": "z"}
SAID = {("duration", 1440.0): "1 day", ("count", 3.0): "3", ("usd", 3.0): "$3", ("count", 0.0): "0"}


def _said(clause: Keys) -> str:
    return " ".join([*(WORDS[t] for t in sorted(clause[0])), *(SAID[q] for q in sorted(clause[1]))]) or "z"


def _parsed(clause: Keys) -> Keys:
    parsed = text.clause(_said(clause))
    return parsed.terms, parsed.quantities


TERMS = st.frozensets(st.sampled_from(sorted(WORDS)), max_size=4)
QUANTITIES = st.frozensets(st.sampled_from(sorted(SAID)), max_size=2)
CLAUSES = st.tuples(TERMS, QUANTITIES)
ANY_TERMS = st.frozensets(st.sampled_from(["return", "refund", "14", "day", "退货", "z", "", "ſ", "s"]), max_size=5)
# A NaN is drawn anew each time: the judge's claim and chunk clauses never share a float object.
VALUES = st.one_of(st.sampled_from([0.0, -0.0, 3.0, 14.0, 1e300, float("inf"), 0.5]), st.builds(float, st.just("nan")))
ANY_QUANTITIES = st.frozensets(st.tuples(st.sampled_from(["count", "money", "duration"]), VALUES), max_size=3)


@settings(max_examples=300, deadline=None)
@given(claim=st.tuples(ANY_TERMS, ANY_QUANTITIES), chunks=st.lists(st.lists(CLAUSES, min_size=1, max_size=6), max_size=4),
       margin=st.sampled_from([0.0, 0.1, 0.25, 1.0]))
def test_the_alignment_equals_the_python_it_replaced(claim: Keys, chunks: list[list[Keys]], margin: float) -> None:
    parsed = [[_parsed(c) for c in chunk] for chunk in chunks]
    assert native(claim, chunks, margin) == oracle(claim, parsed, margin)  # Dice exactly: the same two integers divided


EN = ["Refunds", "are", "not", "issued", "within", "14 days", "Berlin", "store", "never", "closes", "and", "but",
      "free", "shipping", "$5", "two weeks", "once", "the", "EU", "warranty", "covers", "it", "No", "one"]
ZH = ["退货", "不", "支持", "上门", "取件", "7天", "无理由", "未来", "北京", "门店", "运费", "30元", "两周", "，", "。", "Apple", "的"]
SENTENCES = st.lists(st.lists(st.sampled_from(EN + ZH), min_size=1, max_size=9).map(" ".join), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(SENTENCES.map(". ".join), min_size=1, max_size=3), claim=SENTENCES.map(". ".join))
def test_a_chunk_held_in_the_crate_answers_as_the_clauses_sets_did(chunks: list[str], claim: str) -> None:
    context = ChunkContext([analyse(chunk) for chunk in chunks])
    clauses = [text.clause(part) for chunk in chunks for sentence in text.sentences(chunk) for part in text.clauses(sentence)]
    assert [text.Clause(*context.clause(n)) for n in range(len(context))] == clauses
    sizes = [len(text.clauses(s)) for chunk in chunks for s in text.sentences(chunk)]
    assert context.sentences() == sizes
    terms = frozenset().union(*(c.terms for c in clauses))
    whole = text.Clause("", terms, frozenset(), (), frozenset().union(*(c.chars for c in clauses)), (),
                        frozenset().union(*(c.quantities for c in clauses)), frozenset(), False)
    spelled = frozenset().union(*(c.spelled for c in clauses))
    said = text.clause(claim)
    for asked in (said.quantities, said.quantities | whole.quantities, said.quantities | spelled):
        assert (context.held(asked), context.held(asked, True)) == (asked & whole.quantities, asked & spelled)
    negated = frozenset().union(*(c.governed or c.terms for c in clauses if c.negated))
    only_negated = negated - frozenset().union(*(c.terms for c in clauses if not c.negated))
    supported, by_best, alignment = context.evidence(said.terms, said.quantities, said.words, said.cjk_parts, 0.1)
    assert supported == text.supported_units(said, whole)
    if alignment is None:
        assert by_best == 0.0
    else:
        best = clauses[alignment[1]]
        assert by_best == text.supported_units(said, best)
        assert alignment[3:] == (best.text, len(said.terms - best.terms), len(best.terms - said.terms))
        asked_terms = said.terms | negated
        assert sorted(context.only_negated(asked_terms, alignment[1])) == sorted((asked_terms - best.terms) & only_negated)
    assert [context.negated(n) for n in range(len(context))] == [c.negated for c in clauses]
    question = text.question_terms(claim) | text.question_terms(chunks[0][:20])
    assert topics_shared([analyse(chunk) for chunk in chunks], question) == [
        len(question & text.question_terms(chunk)) for chunk in chunks]
    for term in said.terms | said.names | negated | {"", "ſ"}:
        assert context.has_term(term) == (term in terms)
        assert context.has_name(term) == any(term in c.names for c in clauses)
        assert context.holding(term) == [n for n, c in enumerate(clauses) if term in c.terms]
        assert context.has_term_starting(term[:2]) == any(t.startswith(term[:2]) for t in terms)


def test_known_alignments() -> None:
    a, b, c = frozenset({"return"}), frozenset({"return", "refund"}), frozenset({"return", "refund", "z"})
    none: frozenset[tuple[str, float]] = frozenset()
    chunks = [[(b, none), (c, none)], [(a, none), (b, none)]]
    assert native((b, none), chunks, 0.1) == (1.0, 0, [0, 3])  # the first of two equal clauses is the best
    assert native((b, none), chunks, 0.25) == (1.0, 0, [0, 1, 3])  # 0.8 is within 0.25 of 1.0, 2/3 is not
    assert native((frozenset({"absent"}), none), chunks, 0.1) is None
    nan = frozenset({("count", float("nan"))})
    assert native((a, nan), [[(a, none)]], 0.1) == (2 / 3, 0, [0])  # a NaN counts in the size and matches nothing
    zero = frozenset({("count", 0.0)})
    assert native((none, frozenset({("count", -0.0)})), [[(a, zero)]], 0.1) == (2 / 3, 0, [0])


def test_a_chunk_counts_what_it_holds_and_refuses_a_clause_it_does_not_have() -> None:
    chunk = analyse("Refunds take two weeks. 退货需要7天，运费由买家承担。")
    assert len(chunk) == 3
    empty = analyse("")
    assert len(empty) == 0
    assert sys.getsizeof(chunk) > sys.getsizeof(empty) > 0  # the judge's cache counts it in its byte cap
    assert footprint(chunk, "x") == 256 + sys.getsizeof("x") + sys.getsizeof(chunk)
    with pytest.raises(IndexError, match="no clause at this position"):
        ChunkContext([chunk]).clause(3)
