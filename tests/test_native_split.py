"""The crate's sentence and clause split (native/src/split.rs) against the Python patterns it replaced, on text made of
the characters those patterns turn on."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import clauses, sentences

pytestmark = pytest.mark.unit

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？!?；;\n]+")
_CLAUSE_START = re.compile(
    r",\s+(?=(?:but|and|while|whereas|although|though|so|unless|otherwise|with|which)\b)|，|—"
    r"|\s+(?:and|but)\s+(?=(?:can|cannot|can't|is|isn't|are|aren't|does|doesn't|do|don't|will|won't|must|may|has|have)\b)"
)


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def _clauses(text: str) -> list[str]:
    return [part.strip(" ,.") for sentence in _sentences(text) for part in _CLAUSE_START.split(sentence)
            if part.strip(" ,.")]


_PIECES = [" ", "  ", "\t", "\n", "\u3000", "\x1c", "\xa0", ".", "!", "?", ",", "，", "—", "。", "！", "？", "；", ";",
           "and", "but", "so", "soon", "can", "can't", "cannot", "is", "isn't", "which", "_", "é", "x", "9", "退货", "½"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join))
def test_the_split_is_the_python_patterns(text: str) -> None:
    assert sentences(text) == _sentences(text)
    assert clauses(text) == _clauses(text)


def test_real_sentences() -> None:
    text = "Returns are free, but shipping is not. The card is valid for 3 years and cannot be exchanged!退货免费，七天内。"
    assert sentences(text) == ["Returns are free, but shipping is not.",
                               "The card is valid for 3 years and cannot be exchanged", "退货免费，七天内"]
    assert clauses(text) == ["Returns are free", "but shipping is not", "The card is valid for 3 years",
                             "cannot be exchanged", "退货免费", "七天内"]
