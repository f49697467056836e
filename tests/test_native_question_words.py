"""The crate's scan of a question's words (native/src/clause.rs, question_words) against the pattern it replaced,
run by Python's re: question_terms and question_shared read the same words, each CJK character in its Simplified
form (scorers/cjk_simplified.py: U+F900 豈 is read as 岂)."""

from __future__ import annotations

import random
import re

from ragpulse._native import stem_words
from ragpulse.scorers import text
from ragpulse.scorers.cjk_simplified import SIMPLIFIED
from ragpulse.scorers.text import CJK, CJK_FUNCTION, question_shared, question_terms

_QUESTION_WORD = re.compile(rf"[a-z0-9]+(?:['’][a-z]+)*|[{CJK}]+")
# Pieces whose Python lower() and Rust to_lowercase() agree: letters, digits, apostrophes, CJK and what ends a word
_PIECES = ["a", "Z", "s", "e", "9", "0", "'", "’", "''", "'s", "’t", " ", "-", ".", "_", "é", "É", "退货", "的", "保修",
           "期", "\u3400", "\u4dbf", "\u9fff", "\uf900", "\ufaff", "\u33ff", "\n", "returns", "don't", "it’s", "I'm",
           "headphones", "rock'n'roll", "x'1", "ab'", "’c"]


def _reference(question: str) -> frozenset[str]:
    terms: set[str] = set()
    for token in _QUESTION_WORD.findall(question.lower()):
        if token[0] > "\u33ff":
            terms.update(c for c in (SIMPLIFIED.get(c, c) for c in token) if c not in CJK_FUNCTION)
        elif token not in text._QUESTION_STOPWORDS:
            terms.add(stem_words([token])[0])
    return frozenset(terms)


def test_question_terms_read_the_words_the_pattern_finds() -> None:
    rnd = random.Random(44)
    for _ in range(20_000):
        question = "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 12)))
        expected = _reference(question)
        assert question_terms(question) == expected, question
        assert question_shared(expected | {"zzz"}, question) == len(expected), question
    assert question_terms("rock'n'roll it’s x'1 ab' 退货的保修") == {"rock'n'rol", "it’", "x", "1", "ab", "退", "货", "保", "修"}
