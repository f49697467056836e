"""scorers/crate_regex.py's translations of the local judge's Python patterns for the compiled core's engine
(fancy-regex): every pattern of scorers/text.py finds, in the crate, the matches Python's `re` finds, at the same
character offsets, on the texts of the analysis snapshot (tables, shaped and random Unicode) as they are and
lower-cased, and random patterns around \\b on text where the two engines' word characters part. A rule is written
once, for Python; this is what lets the crate read it."""

from __future__ import annotations

import re

import pytest
from helpers.text_snapshot import samples
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import regex_spans
from ragpulse.scorers import text
from ragpulse.scorers.crate_regex import to_crate

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

TEXTS = samples()
TEXTS += [sample.lower() for sample in TEXTS]


@pytest.mark.parametrize("name", sorted(text._PATTERNS))
def test_a_translated_pattern_matches_where_python_matches(name: str) -> None:
    pattern = text._PATTERNS[name]
    translated = to_crate(pattern.pattern, bool(pattern.flags & re.IGNORECASE))
    found = regex_spans(translated, TEXTS)
    expected = [[match.span() for match in pattern.finditer(sample)] for sample in TEXTS]
    differing = [(sample, got, want) for sample, got, want in zip(TEXTS, found, expected) if got != want]
    assert not differing, f"{len(differing)} texts differ; the first: {differing[0]}"


def test_python_only_classes_are_translated() -> None:
    cases = {r"\d+": "x٣٤ 12", r"\w+": "naïve_x ²½", r"\s+": "a\x1c\x1fb\u3000c", r"\bno\b": "no, nono no_",
             r"(?<!^)ok": "ok ok", r"is": "İS ıs"}
    for pattern, sample in cases.items():
        flags = re.IGNORECASE if pattern == "is" else 0
        assert regex_spans(to_crate(pattern, bool(flags)), [sample])[0] == [
            m.span() for m in re.finditer(pattern, sample, flags)], pattern
    with pytest.raises(ValueError, match="pattern"):
        regex_spans("(unclosed", ["text"])


# Where Python's \w (letters, numbers, "_") and the regex crate's Unicode \w (alphabetic, marks, Nd, Pc,
# joiners) part: numbers of no digit value (² ½ Ⅳ), marks (U+0301, U+0345, which folds to ι), connector
# punctuation (‿ ＿), the zero-width joiner, a circled letter (alphabetic, a symbol); then digits of other
# scripts, the case pairs of IGNORECASE and Python's extra separators.
_TRICKY = "²½Ⅳ\u0301\u0345‿＿\u200dⒶ٣१İıſKéÉ中\x1c\u3000"
_ALPHABET = "anoyesxiANI_ 1-.," + _TRICKY
_CONSUMING = ["a", "n", "o", "i", "_", "1", "٣", " ", "-", ".", "é", "中", "[a-z]", "[A-Z]", "[ai]", r"\d", r"\w",
              r"\s", "[.,]", "[^a]", "[a-z0-9+]", ".", "(?:no|yes)", "(?:a|-)", "(?:é|x)", "(?:_|²)", "(an?)"]
_ZERO_WIDTH = [r"\b", r"\b", r"\b", "(?=a)", r"(?!\w)", r"(?<=\s)", "(?<!n)", "^", r"(?=\bo)", r"(?<!\bn)"]
_QUANTIFIER = ["", "", "", "?", "*", "+", "{1,2}", "??"]


@st.composite
def _branch(draw: st.DrawFn) -> str:
    """A sequence of atoms, quantifiers and zero-width checks around a \\b, one atom bare so it never matches empty."""
    items = draw(st.lists(st.one_of(st.sampled_from(_ZERO_WIDTH),
                                    st.tuples(st.sampled_from(_CONSUMING), st.sampled_from(_QUANTIFIER)).map("".join)),
                          max_size=5))
    items.insert(draw(st.integers(0, len(items))), r"\b")
    bare = draw(st.integers(0, len(items)))
    items.insert(bare, draw(st.sampled_from(_CONSUMING)))
    if draw(st.booleans()):  # a group, repeated if it holds the bare atom (the crate repeats no empty group)
        start = draw(st.integers(0, len(items) - 1))
        repeat = draw(st.sampled_from(["", "+", "{2}"])) if start <= bare else ""
        items[start:] = [f"(?:{''.join(items[start:])}){repeat}"]
    return "".join(items)


@settings(max_examples=600, deadline=None)
@given(st.lists(_branch(), min_size=1, max_size=3).map("|".join), st.booleans(),
       st.lists(st.text(_ALPHABET, max_size=24), min_size=1, max_size=4))
def test_word_boundaries_match_where_python_matches(pattern: str, ignorecase: bool, samples: list[str]) -> None:
    """\\b next to words, non-words, either, quantified, grouped, in lookarounds, against Python's `re` on text
    where the two engines' word characters part."""
    flags = re.IGNORECASE if ignorecase else 0
    try:
        compiled = re.compile(pattern, flags)
    except re.error:
        return  # e.g. a lookbehind of no fixed width: Python refuses it
    translated = to_crate(compiled.pattern, ignorecase)
    assert regex_spans(translated, samples) == [[m.span() for m in compiled.finditer(s)] for s in samples], translated


def test_a_boundary_checks_only_the_side_the_pattern_leaves_open() -> None:
    word = r"(?-i:[\p{L}\p{N}_])"
    assert to_crate(r"\bno\b") == rf"n(?<!{word}n)o(?!{word})"  # the word's side is known; checked after the n
    assert to_crate(r"\b(?:a|b)") == rf"(?<!{word})(?:a|b)"
    assert to_crate(r"(?:\.|,)\b") == rf"(?:\.|,)(?={word})"
    assert to_crate(r"a\b-") == "a-" and to_crate(r"a\bb") == "a(?!)b"  # both sides known: always, never
    assert to_crate(r"\b\w?") == rf"(?:(?<={word})(?!{word})|(?<!{word})(?={word})){word}?"
    with pytest.raises(ValueError, match="not translated"):
        to_crate(r"a\Bb")  # the crate's \B is its own word characters'


def test_ascii_letters_under_ignorecase_match_letters_only() -> None:
    """The translation takes an ASCII letter's other cases under IGNORECASE (İ ı ſ K) for word characters."""
    everything = "".join(map(chr, range(0x80, 0x110000)))
    others = re.findall(r"[a-zA-Z]", everything, re.IGNORECASE)
    assert others and all(char.isalpha() for char in others)
