"""The compiled core's text analysis (native/src/lexical.rs, clause.rs): what it gives is held by a snapshot taken
when it was shown equal to the Python it replaced (tests/helpers/text_snapshot.py says how it was shown and how to
rewrite it after a deliberate change); on random Unicode it never fails and gives the same analysis twice; a
malformed pattern or table is refused by name."""

from __future__ import annotations

import json
import random
import sys
import unicodedata

import pytest
from helpers.text_snapshot import SEED, SNAPSHOT, analysis, digest, samples
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import TextAnalyser, stem_words
from ragpulse.scorers import lexical, text


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_the_analysis_is_what_it_was_when_parity_was_shown() -> None:
    stored = json.loads(SNAPSHOT.read_text())
    texts = samples()
    assert (stored["seed"], stored["texts"], len(stored["digests"])) == (SEED, len(texts), len(texts))
    changed = [sample for sample, expected in zip(texts, stored["digests"]) if digest(sample) != expected]
    assert not changed, (f"{len(changed)} of {len(texts)} texts analysed otherwise; the first:\n"
                         + "\n".join(f"{sample!r}: {analysis(sample)}" for sample in changed[:5])
                         + "\nafter a deliberate change: PYTHONPATH=tests python -m helpers.text_snapshot --write")


def test_known_analyses() -> None:
    parsed = text.clause("You can't return opened headphones after 14 days, but exchanges cost $4.99.")
    assert (parsed.terms, parsed.sequence) == ({"return", "open", "headphon", "exchang", "cost"},
                                               ("return", "open", "headphon", "exchang", "cost"))
    assert parsed.quantities == {("duration", 20160.0), ("usd", 4.99)}  # 14 days in minutes
    assert parsed.negated and parsed.governed == {"return", "open", "headphon"}  # "but" ends the negation's scope
    chinese = text.clause("三十天内可以退货")
    assert (chinese.terms, chinese.chars, chinese.quantities) == ({"内", "退货"}, {"退", "货", "内"}, {("duration", 43200.0)})
    assert text.question_terms("How long do I have to return delivered headphones?") == {"deliv", "long", "return", "headphon"}
    # 退货 and 货运 cover 退货运 (3); 费 and the one-character part 内 are only among the characters (a half each)
    assert text.cjk_covered(("退货运费", "内"), frozenset({"退货", "货运"}), frozenset({"费", "内"})) == 4.0
    assert text.cjk_covered(("退货运费",), frozenset({"退货"}), frozenset()) == 2.0
    with pytest.raises(ValueError, match="a CJK part is a str"):
        text.cjk_covered((1,), frozenset(), frozenset())  # type: ignore[arg-type]
    units = lexical.units("Returns within thirty days, 1,500 kg")
    assert (units.words, units.numbers, units.values) == (
        {"within", "return", "days"}, {("30", "day"), ("1.500", "kg")}, {"30", "1.500"})



def test_question_shared_counts_what_the_sets_share() -> None:
    """question_shared stems a word only when a question term starts with its letter: the count the sets give, on
    every sample with the question terms of itself and of the next sample."""
    texts = samples()
    for answer, other in zip(texts, texts[1:] + texts[:1]):
        question = text.question_terms(answer[:400]) | text.question_terms(other)
        assert text.question_shared(question, answer) == len(question & text.question_terms(answer)), answer
    assert text.question_shared(frozenset({"return", "退"}), "Returns: 退货 and returning") == 2
    assert text.question_shared(frozenset(), "Returns") == 0



def test_a_str_of_any_width_is_read_as_its_text_and_a_lone_surrogate_refused() -> None:
    """A short str is encoded from its code points (native/src/bridge.rs), a longer one by Python's encoder: the same
    text at each width (Latin-1, BMP, astral), and a lone surrogate raises as the encoder does, short or long."""
    for word in ("café", "退货", "𠀀退"):
        assert text.question_terms(word) == text.question_terms(word * 40)
        assert text.question_shared(text.question_terms(word), word * 40) == len(text.question_terms(word))
    for sample in ("a\ud800", "a\ud800" * 40, "退\udfff"):
        with pytest.raises(UnicodeEncodeError):
            text.clause(sample)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from("abcdeilnorstuyz'’0"), min_size=1, max_size=12), max_size=20))
def test_a_stem_starts_with_its_words_first_letter(words: list[str]) -> None:
    """What question_shared's skipping of words rests on."""
    words = [word for word in words if word[0] not in "'’"]  # a question word starts with a letter or digit
    assert [stem[:1] for stem in stem_words(words)] == [word[:1] for word in words]


def _assigned(char: str) -> bool:
    return unicodedata.category(char) not in ("Cn", "Cs")


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8").filter(_assigned), max_size=120))
def test_random_unicode_is_analysed_without_failing_and_alike_twice(sample: str) -> None:
    assert analysis(sample) == analysis(sample)
    assert text.clause(sample).text == sample


_NUMBER_PIECES = ["1", "12", "2019", "3.5", "1,000", ",", ".", " ", "  ", "-", "–", "~", "to", "too", "year", "years",
                  "old", "-year-old", "million", "hundred", "days", "%", "pm", "x", "a", "per", "$", "5th", "\u3000", "天",
                  "٣", "business days", "once", "two", "thousand", "people", "t", "billions"]


def _fields(sample: str, analyser: TextAnalyser) -> list[object]:
    return [sorted(map(repr, field)) if isinstance(field, frozenset) else field for field in analyser.clause(sample)]


def test_a_number_that_opens_no_range_nor_age_is_read_by_the_value_alternative_alone() -> None:
    """Where native/src/clause.rs runs en_value instead of en_quantity (opens_no_range), the whole pattern reads the
    same quantities."""
    whole = TextAnalyser({**text._CRATE_PATTERNS, "en_value": text._CRATE_PATTERNS["en_quantity"]}, text._TABLES)
    rnd = random.Random(44)
    for _ in range(20_000):
        sample = "".join(rnd.choice(_NUMBER_PIECES) for _ in range(rnd.randint(1, 8)))
        assert _fields(sample, text.analyser()) == _fields(sample, whole), sample


def test_a_malformed_table_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="pattern en_quantity"):
        TextAnalyser({**text._CRATE_PATTERNS, "en_quantity": "(unclosed"}, {})
    with pytest.raises(ValueError, match="table stopwords missing"):
        TextAnalyser(text._CRATE_PATTERNS, {})


def test_the_crate_reads_texts_without_leaving_a_utf8_copy_on_them() -> None:
    """CPython keeps the UTF-8 that a read as &str makes on a non-ASCII str for its life: a held Chinese chunk
    weighed 874 bytes before the lexical scorer read it and 2,075 after (the byte caps count neither)."""
    texts = ["退货需要三十天，运费由买家承担。" * 20, "It’s “30 days” 😀 and 7 天" * 10, "Returns within 30 days. " * 10]
    sizes = [sys.getsizeof(t) for t in texts]
    for sample in texts:
        units = lexical.units(sample)
        lexical._ANALYSER.score(sample, units, [units])
        text.question_terms(sample)
        parsed = text.clause(sample)
        lower = sample.lower()
        held = [sys.getsizeof(s) for s in (lower, *parsed.cjk_parts, *parsed.terms)]
        text._ANALYSER.words(lower)
        text.cjk_covered(parsed.cjk_parts, parsed.terms, parsed.chars)
        text.chunk_analysis([[sample]], sample)  # a cached chunk analysis holds its text's terms
        assert [sys.getsizeof(s) for s in (lower, *parsed.cjk_parts, *parsed.terms)] == held
    assert [sys.getsizeof(t) for t in texts] == sizes
    with pytest.raises(UnicodeEncodeError):
        lexical.units("lone \ud800 surrogate")  # as a read as &str refused it
