"""The compiled core's citation parser (native/src/citations.rs): what it gives is held by a snapshot taken when it
was shown equal to the Python it replaced (tests/helpers/citation_snapshot.py says how it was shown and how to
rewrite it after a deliberate change); on random Unicode and on huge hostile answers it never fails, costs their
length and gives the same twice; what it is given beyond a str and its ids is refused as Python would."""

from __future__ import annotations

import json

import pytest
from helpers.citation_snapshot import IDS, SEED, SNAPSHOT, Ids, digest, outputs, samples
from helpers.text_snapshot import assigned
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse import _native
from ragpulse.scorers.citations import MAX_MARKERS, count_inline, parse_citations, strip_markers

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_the_parsing_is_what_it_was_when_parity_was_shown() -> None:
    stored = json.loads(SNAPSHOT.read_text())
    answers = samples()
    assert (stored["seed"], stored["answers"], len(stored["digests"])) == (SEED, len(answers), len(answers))
    changed = [sample for sample, expected in zip(answers, stored["digests"]) if digest(*sample) != expected]
    assert not changed, (f"{len(changed)} of {len(answers)} answers parsed otherwise; the first:\n"
                         + "\n".join(f"{sample!r}: {outputs(*sample)}" for sample in changed[:5])
                         + "\nafter a deliberate change: PYTHONPATH=tests python -m helpers.citation_snapshot --write")


def test_the_crate_caps_as_the_structured_citations_do() -> None:
    assert (_native.CITATION_MAX_MARKERS, _native.CITATION_MAX_RANGE) == (MAX_MARKERS, 50)


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec="utf-8").filter(assigned), max_size=300),
       st.lists(st.sampled_from(IDS) | st.text(st.characters(codec="utf-8"), max_size=8), max_size=6))
def test_random_unicode_is_parsed_without_failing_and_alike_twice(answer: str, ids: Ids) -> None:
    first = outputs(answer, ids)
    assert outputs(answer, ids) == first
    parsed = parse_citations(answer, ids)
    if parsed is not None:
        assert parsed.resolved + parsed.dangling <= MAX_MARKERS
        assert all(0 <= index < len(ids) for sentence in parsed.sentences for index in sentence.chunks)


N = 100_000
IDS_HOSTILE: Ids = ["kb-1", "Kb-1", "ä"]


@pytest.mark.parametrize(("answer", "expected"), [
    # (length of the text left, cited sentences, uncited, resolved, dangling, over_cap)
    ("[1] a" + "." * N + "x", (N + 3, 1, 0, 1, 0, False)),  # a run of periods is passed once (Python's regex: N²)
    ("[" * N, None),
    ("(" + " " * N + "source: 1)", (0, 0, 0, 1, 0, False)),
    ("`" * N + "[1]", None),  # fences of six backticks, the last one open to the end
    ("```" + "[1]" * (N // 3), None),
    ("[1]" * (N // 3), (3 * (N // 3 - MAX_MARKERS), 0, 0, MAX_MARKERS, 0, True)),
    ("[ä] " * (N // 4), (4 * (N // 4 - MAX_MARKERS) + 1, 0, 0, MAX_MARKERS, 0, True)),
    ("【1】。" * (N // 4), (4 * (N // 4) - 3 * MAX_MARKERS, 0, 0, MAX_MARKERS, 0, True)),  # "。" * 255 is no sentence
    ("[^1]: x\n" * (N // 8) + "a [1]", (1, 1, 0, 1, 0, False)),
    ("\n" * N + "[1]", (N, 0, 0, 1, 0, False)),
    # five ranges and six of the sixth read, three of each resolved: "Paris" + ". Paris" * 5 and the 1,994 unread
    ("Paris [1-50]. " * 2_000, (5 + 7 * 5 + 2 + 14 * 1_994, 6, 0, 6 * 3, MAX_MARKERS - 18, True)),
])
def test_huge_hostile_answers_are_read_in_their_length(answer: str, expected: tuple[object, ...] | None) -> None:
    found = count_inline(answer, IDS_HOSTILE)
    assert (None if found is None else (len(found.text), *found[1:])) == expected
    assert len(strip_markers(answer, IDS_HOSTILE)) == (len(answer) if found is None else len(found.text))


def test_a_lone_surrogate_or_an_id_that_is_no_str_is_refused() -> None:
    """The sources keep lone surrogates out of events (sources/otlp/surrogates.py); the crate refuses one as every
    reading of a str as UTF-8 does. A chunk id is a str or None."""
    with pytest.raises(UnicodeEncodeError):
        count_inline("Paris [1] \ud800", ["kb-1"])
    with pytest.raises(TypeError):
        parse_citations("Paris [kb-1].", ["kb-1", 7])  # type: ignore[list-item]
    assert count_inline("Paris [kb-1].", ("kb-1", None)) == ("Paris.", 1, 0, 1, 0, False)
