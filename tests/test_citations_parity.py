"""The compiled citation parser (native/src/citations.rs) against the Python one it replaces (scorers/citations.py):
the same counts, cited sentences, scan and stripped text on a fixed-seed corpus and on hypothesis's answers."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from helpers.citation_snapshot import IDS, LONG, MARKERS, TEXT, Ids, random_char, samples
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse import _native
from ragpulse.scorers import citations

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

CORPUS = int(os.environ.get("CITATION_PARITY_CORPUS", "30000"))


def python(answer: str, ids: Ids) -> dict[str, Any]:
    scan = citations._read(answer, ids)
    count = citations.count_inline(answer, ids)
    return {"count": None if count is None else tuple(count), "parse": citations.parse_citations(answer, ids),
            "scan": (scan.text, [(p, list(m)) for p, m in scan.placed], scan.read, scan.over_cap),
            "strip": citations.strip_markers(answer, ids)}


def native(answer: str, ids: Ids) -> dict[str, Any]:
    text, placed, read, over = _native.scan_citations(answer, ids)
    parsed = _native.parse_citations(answer, ids)
    if parsed is not None:
        sentences, *rest = parsed
        parsed = citations.Citations(tuple(citations.CitedSentence(*s) for s in sentences), *rest)
    return {"count": _native.count_inline(answer, ids), "parse": parsed,
            "scan": (text, [(p, list(m)) for p, m in placed], read, over),
            "strip": text if citations.may_cite(answer) else answer}


def test_the_crate_parses_the_corpus_as_python_did() -> None:
    differ = [(answer, ids) for answer, ids in samples(CORPUS, seed=1) if python(answer, ids) != native(answer, ids)]
    assert not differ, f"{len(differ)} of {CORPUS}: {differ[:3]}"


PIECE = st.sampled_from(MARKERS + TEXT + LONG) | st.text(max_size=4) | st.builds(random_char, st.randoms())


@settings(max_examples=int(os.environ.get("CITATION_PARITY_EXAMPLES", "3000")), deadline=None)
@given(st.lists(PIECE, max_size=40).map("".join) | st.text(max_size=300),
       st.lists(st.sampled_from(IDS) | st.text(max_size=6), max_size=6))
def test_the_crate_parses_generated_answers_as_python_did(answer: str, ids: Ids) -> None:
    assert native(answer, ids) == python(answer, ids)


def test_capped_answers_alike() -> None:
    rnd = random.Random(5)
    for unit in ["[1]", "[1-50]", "Paris [1-50]. ", "[1, 2]", "(source: 1, 2) ", "[1-3][kb-1]"]:
        for count in range(250, 262):
            answer = "Cited " + unit * count + ". Then [2]."
            ids = [rnd.choice(IDS) for _ in range(rnd.randrange(60))]
            assert native(answer, ids) == python(answer, ids), (unit, count)


ALPHABET = list("[]【】［］()（）^ \t\n\u3000\x1c:：,，、;；-–—~#_.!?。！？」』”’）\"'`0123456789١²kbKBſ") + [
    "source", "sources", "SOURCE", "doc", "document", "DOC", "来源", "and", "AND", "kb-1", "KB-12", "ß", "SS", "ﬁ"]


@settings(max_examples=int(os.environ.get("CITATION_PARITY_EXAMPLES", "3000")), deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join),
       st.lists(st.sampled_from(["kb-1", "KB-12", "ss", "ß", "1", "doc", None, ""]), max_size=4))
def test_the_crate_parses_the_forms_alphabet_as_python_did(answer: str, ids: Ids) -> None:
    assert native(answer, ids) == python(answer, ids)
