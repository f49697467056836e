"""ragpulse._native, the compiled core (native/, a PyO3 crate built by the normal install), against its oracles.

Work in progress (issue: the native hot path): the build set-up and the Snowball stemmer so far; the Python
stemmer (PyStemmer) is the oracle here until the text analysis moves into the crate."""

from __future__ import annotations

import re
from pathlib import Path

import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse import _native

ROOT = Path(__file__).resolve().parent.parent
ORACLE = Stemmer.Stemmer("english").stemWords


def test_the_stems_are_pystemmers_on_every_word_of_the_docs_and_test_tables() -> None:
    text = " ".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *sorted((ROOT / "tests" / "data").rglob("*.yaml"))])
    words = sorted(set(re.findall(r"[a-z][a-z0-9+]*(?:['’][a-z]+)?", text.lower())))
    assert len(words) > 2_000
    assert _native.stem_words(words) == ORACLE(words)


@settings(max_examples=500, derandomize=True, database=None, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=24), max_size=20))
def test_the_stems_are_pystemmers_on_any_text(words: list[str]) -> None:
    assert _native.stem_words(words) == ORACLE(words)
