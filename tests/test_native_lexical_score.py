"""The lexical score of an answer (native/src/lexical.rs `score`), whose units are read as slices of its text and never
made into a set of strings, held on generated texts to its definition over the answer's units as Python reads them
(`units(answer)`'s frozensets): the same four values, exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse._native import LexicalUnits
from ragpulse.scorers.lexical import _ANALYSER, units

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

# Words, stopwords, plurals (folded past 4 letters), number words, numbers with and without units, Chinese numerals and
# bigrams, Traditional characters, apostrophes and hyphens: what each branch of the units reads.
TOKENS = ("returns", "return", "items", "item", "days", "day", "warranty", "the", "and", "thirty", "seven", "two",
          "30", "7", "2.5", "3,5", "12.99", "$4", "1-year", "1-month", "14 days", "2 weeks", "5%", "10 kg", "it's",
          "don't", "shipping’s", "re-stock", "Returns", "WARRANTY", "三十天", "七天", "两周", "退货", "運費", "运费",
          "五十元", "30天", "小时", "a", "is", "x1", "45")


def _text() -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(TOKENS), st.text(st.sampled_from("abcdeirstyz0123456789 .,-'退货天"),
                                                                  max_size=8)),
                    max_size=14).map(lambda tokens: " ".join(tokens))


def reference(answer: str, question: LexicalUnits, chunks: list[LexicalUnits]) -> tuple[object, ...]:
    """The score as it is defined over the three sides' units (the crate's before this cut, read from Python)."""
    held = units(answer)
    words, numbers = held.words, held.numbers
    chunk_words = frozenset().union(*(chunk.words for chunk in chunks))
    chunk_numbers = frozenset().union(*(chunk.numbers for chunk in chunks))
    chunk_values = frozenset().union(*(chunk.values for chunk in chunks))
    unfound_numbers = [number for number in numbers if number not in chunk_numbers]
    unfound = sum(word not in chunk_words for word in words) + len(unfound_numbers)
    unasked = (sum(word not in chunk_words for word in question.words)
               + sum(number not in chunk_numbers for number in question.numbers))

    def share_found(missing: int, total: int) -> float | None:
        return 1.0 - missing / total if total else None

    return (share_found(unfound, len(words) + len(numbers)),
            len(question.words & words) / len(question.words) if question.words else None,
            share_found(unasked, len(question.words) + len(question.numbers)),
            any(unit != "" or value not in chunk_values for value, unit in unfound_numbers))


@settings(max_examples=1500, deadline=None)
@given(_text(), _text(), st.lists(_text(), max_size=4))
def test_the_score_is_its_definition_over_the_units(answer: str, question: str, chunks: list[str]) -> None:
    question_units, chunk_units = units(question), [units(chunk) for chunk in chunks]
    assert _ANALYSER.score(answer, question_units, chunk_units) == reference(answer, question_units, chunk_units)


def test_known_scores() -> None:
    """As the crate scored them at 0d19f4d (answers' units made into strings)."""
    chunks = [units("Returns are accepted within 30 days of delivery."), units("退货须在三十天内办理。")]
    question = units("How many days do I have for returns?")
    assert _ANALYSER.score("You can return items within thirty days.", question, chunks) == (0.8, 2 / 3, 1 - 1 / 3, False)
    assert _ANALYSER.score("Returns take 2 weeks.", question, chunks) == (0.25, 1 / 3, 1 - 1 / 3, True)
    assert _ANALYSER.score("退货期限是30天。", question, chunks) == (1 - 4 / 6, 0.0, 1 - 1 / 3, False)
    assert _ANALYSER.score("", question, chunks) == (None, 0.0, 1 - 1 / 3, False)
