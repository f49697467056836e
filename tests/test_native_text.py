"""The compiled core's text analysis (native/src/lexical.rs) against the Python it replaced, kept here as the
oracle: the lexical scorer's units, on the scorer's test tables, on text made of the characters that matter
(digits of several scripts, Chinese numerals and units, number words, Python's whitespace, hyphens, apostrophes)
and on random Unicode. Characters Python 3.11's Unicode (14.0) had not assigned are left out: their case
mapping and category may differ in the crate's newer Unicode tables, and no text carries them yet."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragpulse.scorers import lexical
from tests.text_oracle import cjk_number

# The Python units() before the crate took over, verbatim but for names (scorers/lexical.py at 6639606).
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)?)(?:-|\s*)(" + "|".join(sorted(map(re.escape, lexical._UNITS), key=len, reverse=True))
                     + r")?(?![a-z])")
_DIGIT = re.compile(r"\d")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_LATIN_WORD = re.compile(r"[a-z][a-z'’-]{2,}")
_HAS_CJK = re.compile(rf"[{_CJK}]")
_CJK_NUMBER = re.compile(r"([零一二两三四五六七八九十百]+)(个月|天|年|周|小时|日|元)")
_WORD_NUMBER = re.compile(r"\b(" + "|".join(lexical._NUMBER_WORDS) + r")\b")
_NUMBER_WORD_SET = frozenset(lexical._NUMBER_WORDS)


def oracle(text: str) -> lexical.Units:
    text = text.lower()
    tokens = _LATIN_WORD.findall(text)
    if not _NUMBER_WORD_SET.isdisjoint(tokens):
        text = _WORD_NUMBER.sub(lambda m: lexical._NUMBER_WORDS[m[1]], text)
        tokens = _LATIN_WORD.findall(text)
    words = frozenset(tokens) - lexical._STOPWORDS
    plurals = [word for word in words if word[-1] == "s" and len(word) > 4]
    if plurals:
        words = words.difference(plurals).union([word[:-1] for word in plurals])
    if _HAS_CJK.search(text) is not None:
        text = _CJK_NUMBER.sub(lambda m: f"{cjk_number(m[1]):g}" + m[2], text)
        bigrams: set[str] = set()
        for run in _CJK_RUN.findall(text):
            bigrams.update(map(str.__add__, run, run[1:]) if len(run) > 1 else (run,))
        words = words.union(bigrams)
    found = _NUMBER.findall(text) if _DIGIT.search(text) else None
    if not found:
        return lexical.Units(words, frozenset(), frozenset())
    numbers = frozenset([(value.replace(",", "."), lexical._UNITS.get(unit, "")) for value, unit in found])
    return lexical.Units(words, numbers, frozenset([value for value, _ in numbers]))


def _assigned(char: str) -> bool:
    return unicodedata.category(char) not in ("Cn", "Cs")


# Characters where the scanning decides something: what a token, a number, a unit or a boundary is.
PIECES = st.one_of(
    st.sampled_from(list("0123456789٣٤੫๗１２.,-%'’ \t\n\x1c\x1f\xa0\u3000_aAsSkKİΣσ²½")),
    st.sampled_from(list(lexical._NUMBER_WORDS) + list(lexical._UNITS) + sorted(lexical._STOPWORDS)[:20]
                    + list("零一二两三四五六七八九十百千个月天年周小时日元退货保修期") + ["years", "returns", "days-", "1,500"]),
    st.characters(codec="utf-8").filter(_assigned),
)
SHAPED = st.lists(PIECES, max_size=40).map("".join)
ANY_TEXT = st.text(st.characters(codec="utf-8").filter(_assigned), max_size=80)


def test_the_lexical_tables_read_alike() -> None:
    from tests.test_lexical import EN, ZH  # the scorer's own table of chunks

    texts = EN + ZH + ["You have thirty days from delivery to return unused items.", "It has a 1-month warranty.",
                       "保修期为两年。", "您可以在30天内退货。", "Express shipping costs $12.99 or 15%, 2,5 kg, 3 - 4 days",
                       "Seven-day returns; seven days; SEVEN DAYS", "一百二十天 两个月 十五年 零元 百天 九十九小时"]
    for text in texts:
        assert lexical.units(text) == oracle(text), text


@settings(max_examples=1500, deadline=None)
@given(SHAPED)
@example("15x 123x 5 daysx 5-x 1.5.5 2,50kg 3 -days 7\u3000days 7\x1cdays ٣٤ days")
@example("九百" * 1112 + "天")  # past a million: Python's "%g" (1.0008e+06天)
@example("İone Kone one_ one² seven-day one-two")
def test_units_equal_the_python_units_on_shaped_text(text: str) -> None:
    assert lexical.units(text) == oracle(text)


@settings(max_examples=500, deadline=None)
@given(ANY_TEXT)
def test_units_equal_the_python_units_on_random_unicode(text: str) -> None:
    assert lexical.units(text) == oracle(text)
