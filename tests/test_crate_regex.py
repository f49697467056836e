"""scorers/crate_regex.py's translations of the local judge's Python patterns for the compiled core's engine
(fancy-regex): every pattern of scorers/text.py finds, in the crate, the matches Python's `re` finds, at the same
character offsets, on the texts of the analysis snapshot (tables, shaped and random Unicode) as they are and
lower-cased. A rule is written once, for Python; this is what lets the crate read it."""

from __future__ import annotations

import re

import pytest
from helpers.text_snapshot import samples

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
