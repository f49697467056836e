"""The oracle of tests/test_native_clause.py and test_native_text.py: the analysis functions of scorers/text.py as
they were before the compiled core took them over (at 0614c3b), verbatim, on the module's own tables and
patterns (imported from it), with PyStemmer's Snowball."""

from __future__ import annotations

import re

import Stemmer

from ragpulse.scorers.text import (  # noqa: F401 - the tables and patterns the functions below read
    _ANY_NEGATOR, _CHATTER, _CJK_FUNCTION_OR_NEGATOR, _CJK_LEADING_ANSWER, _CJK_NEGATORS, _CJK_NEXT, _CJK_QUANTITY,
    _CJK_UNITS, _CJK_WEEK, _CURRENCY_SIGN, _EN_NEGATORS, _EN_NOT_NEGATIONS, _EN_QUANTITY, _EN_UNITS, _HALF, _LATIN_IN_CJK,
    _LATIN_WORD, _LEADING_ANSWER, _LIST_ITEM, _MINUTES, _NAME, _NOT_COUNTS, _NOT_NEGATIONS, _NUMBER_WORDS,
    _POLARITY_TOKEN, _QUANTITY_START, _QUANTITY_WORDS, _QUANTITY_WORDS_FIRST, _QUESTION_STOPWORDS, _QUESTION_WORD,
    _RATE_MINUTES, _SCALES, _SCOPE, _SCOPE_ENDS, CJK, CJK_DIGITS, CJK_FUNCTION, STOPWORDS, Clause)

_stem_words = Stemmer.Stemmer("english").stemWords


_DIGIT_OR_SIGN = re.compile(r"[\d$€£¥￥]")
_NOT_LETTERS = re.compile(r"[^a-z]+")

def cjk_number(numeral: str) -> float:
    """三十五 -> 35, 十五 -> 15, 一百二十 -> 120, 七 -> 7; digits as they are."""
    if numeral[0].isdigit():
        return float(numeral.replace(",", ""))
    total = current = 0
    for char in numeral:
        if char in "百千":
            total += (current or 1) * (100 if char == "百" else 1000)
            current = 0
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        else:
            current = CJK_DIGITS[char]
    return float(total + current)


def _en_number(token: str) -> float:
    """"1,500" -> 1500, "two hundred" -> 200, "a trillion" -> 1e12, "1.5 million" -> 1.5e6."""
    *number, scale = token.split() if token.split()[-1] in _SCALES else (*token.split(), "")
    spelled = " ".join(number)
    value = 1.0 if spelled in ("", "a", "an") else _NUMBER_WORDS.get(spelled) or float(spelled.replace(",", ""))
    return value * _SCALES.get(scale, 1.0)


def _en_matches(text: str) -> list[re.Match[str]]:
    """_EN_QUANTITY's matches, as finditer finds them, tried only where a quantity can start."""
    matches: list[re.Match[str]] = []
    if _DIGIT_OR_SIGN.search(text) is None and _QUANTITY_WORDS_FIRST.isdisjoint(_NOT_LETTERS.split(text)):
        return matches  # two clauses in three: no digit, no word a quantity starts with
    end = 0
    for start in _QUANTITY_START.finditer(text):
        if start.start() < end:
            continue
        match = _EN_QUANTITY.match(text, start.start())
        if match is not None and match.end() > match.start():
            matches.append(match)
            end = match.end()
    return matches


def _en_quantities(text: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(dimension, base value) of each quantity in lower-cased English text, and apart the bare counts
    spelled in words ("two films"): a summary counts things its source lists ("the passage describes two
    films"), so a spelled count is evidence for a claim's count, never a claim of its own."""
    found: list[tuple[str, float]] = []
    spelled: list[tuple[str, float]] = []
    for match in _en_matches(text):
        if match["money"]:
            found.append((_CURRENCY_SIGN[match["sign"]], _en_number(match["money"])))
        elif match["age"]:
            found.append(("count", float(match["age"])))
        elif match["range_unit"]:
            dimension, factor = _EN_UNITS[match["range_unit"]]
            found += [(dimension, _en_number(match["low"]) * factor), (dimension, _en_number(match["high"]) * factor)]
        elif match["rate"]:
            found.append(("rate", _MINUTES[match["rate"]]))
        elif match["times"]:
            found.append(("times", 1.0 if match["times"] == "once" else 2.0))
        else:
            value, unit = match["value"], match["unit"]
            if unit is None:
                # A bare number, in digits or words ("two seasons" = 2 seasons); "a", "one" and "half" are
                # words more often than counts, and "7 天" is the Chinese parser's 7 days.
                if value not in _NOT_COUNTS and not _CJK_NEXT.match(text, match.end()):
                    spoken = not value[0].isdigit() and value.split()[-1] not in _SCALES
                    (spelled if spoken else found).append(("count", _en_number(value)))
                continue
            dimension, factor = _EN_UNITS[unit]
            number = _en_number(value)
            if dimension == "clock":
                found.append(("clock", number % 12 + factor))
            else:
                found.append((dimension, number * factor))
    return found, spelled


def _cjk_quantities(text: str) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    for match in _CJK_QUANTITY.finditer(text):
        if match["clock"]:
            hour = cjk_number(match["clock"])
            found.append(("clock", hour + 12 if match["period"] in ("下午", "晚上") and hour < 12 else hour))
        elif match["range_unit"]:
            dimension, factor = _CJK_UNITS[match["range_unit"]]
            found += [(dimension, cjk_number(match["low"]) * factor), (dimension, cjk_number(match["high"]) * factor)]
        elif match["rate"]:
            found.append(("rate", _RATE_MINUTES[match["rate"]]))
        elif match["half"]:
            found.append(("duration", _HALF[match["half_unit"]]))
        elif match["unit"]:
            dimension, factor = _CJK_UNITS[match["unit"]]
            found.append((dimension, cjk_number(match["value"]) * factor))
        elif match["value"][0].isdigit():  # a bare CJK numeral is usually a word (一起, 一些), not a count
            found.append(("count", cjk_number(match["value"])))
    return found


_CJK_RUN = re.compile(rf"[{CJK}]+")
_HAS_CJK = re.compile(rf"[{CJK}]")
_NOTHING_GOVERNED: frozenset[str] = frozenset()

def _is_en_negator(word: str) -> bool:
    return word in _EN_NEGATORS or word.endswith(("n't", "n’t"))


def _negation(body: str, has_cjk: bool) -> tuple[bool, frozenset[str]]:
    """Odd parity of the negators that govern content in `body` (lower case, without a leading yes or
    no), and the English words they govern, stemmed. A negator counts when one of the next few tokens
    (within its clause) is a content word or character. "you don't have it, wait 48 hours" negates
    nothing the context could contradict; "is not covered" and 不支持 do. The governed words say what
    is negated: "the mine never had active mining again" negates active mining, not the mine. Chinese
    clauses report no governed words (the whole clause is negated: 不支持 / 支持 share their terms)."""
    if _ANY_NEGATOR.search(body) is None:  # most clauses: no token walk
        return False, _NOTHING_GOVERNED
    if has_cjk:
        body = _CJK_LEADING_ANSWER.sub("", body, count=1)
        for phrase in _NOT_NEGATIONS:
            body = body.replace(phrase, "")
    body = _EN_NOT_NEGATIONS.sub(" ", body)
    tokens = _POLARITY_TOKEN.findall(body)
    count = 0
    governed: list[str] = []
    for index, token in enumerate(tokens):
        if not (_is_en_negator(token) or token in _CJK_NEGATORS):
            continue
        governs = False
        for following in tokens[index + 1 : index + 1 + _SCOPE]:
            if following in _SCOPE_ENDS:
                break
            if following[0] > "\u33ff":
                if following not in CJK_FUNCTION and following not in _CJK_NEGATORS:
                    governs = True
                    break
            elif following not in STOPWORDS and not _is_en_negator(following):
                governs = True
                governed.append(following)
        count += governs
    # Every governed word, whatever the parity: "can't hide that he doesn't want the belt" still negates wanting it.
    return count % 2 == 1, frozenset(_stem_words(governed)) - _QUANTITY_WORDS if governed and not has_cjk else _NOTHING_GOVERNED


def _words(lower: str) -> list[str]:
    words = [word for word in _LATIN_WORD.findall(lower) if word not in STOPWORDS and not _is_en_negator(word)]
    return _stem_words(words) if words else []


def name_stems(word: str) -> frozenset[str]:
    """A capitalised word as a name is compared: its content stems, not a word of conversation."""
    return frozenset(_words(word.lower())) - _CHATTER


def _cjk_parts(text: str) -> list[str]:
    return [part for run in _CJK_RUN.findall(_CJK_QUANTITY.sub(" ", text))
            for part in _CJK_FUNCTION_OR_NEGATOR.split(run) if part]


def _bigrams(part: str) -> list[str]:
    return [part] if len(part) == 1 else list(map(str.__add__, part, part[1:]))


def clause(text: str) -> Clause:
    lower = text.lower()
    has_cjk = _HAS_CJK.search(text) is not None
    if has_cjk:
        lower = _CJK_WEEK.sub("周", lower)
    stripped = _LEADING_ANSWER.sub("", lower, count=1)
    stems = _words(stripped)
    terms = set(stems)
    quantities, spelled = _en_quantities(stripped)
    raw_names = _LATIN_IN_CJK.findall(text) if has_cjk else _NAME.findall(_LIST_ITEM.sub("", text, count=1))
    # "( Note: the numbers...": a capitalised word of conversation is no name.
    names = set(_words(" ".join(raw_names).lower())) - _CHATTER if raw_names else set()
    parts: list[str] = []
    if has_cjk:
        parts = _cjk_parts(lower)
        quantities += _cjk_quantities(lower)
    terms -= _QUANTITY_WORDS
    words = frozenset(terms)
    terms.update(bigram for part in parts for bigram in _bigrams(part))
    joined = "".join(parts)
    sequence = (*(stem for stem in stems if stem in words), *joined)
    negated, governed = _negation(stripped, has_cjk)
    return Clause(text, frozenset(terms), words, tuple(parts), frozenset(joined), sequence, frozenset(quantities),
                  frozenset(names), negated, governed, frozenset(spelled))


def question_terms(text: str) -> frozenset[str]:
    """What a question is about. English: stemmed content words. Chinese: the characters that carry
    the topic (not function characters): single characters, because a paraphrase reorders them
    (保修期多长 / 保修多久). Also used for a chunk's terms when its relevance to a question is measured."""
    terms: set[str] = set()
    english: list[str] = []
    for token in _QUESTION_WORD.findall(text.lower()):
        if token[0] > "\u33ff":  # a CJK run (the other tokens are ASCII letters, digits and apostrophes)
            terms.update(char for char in token if char not in CJK_FUNCTION)
        elif token not in _QUESTION_STOPWORDS:
            english.append(token)
    if english:
        terms.update(_stem_words(english))
    return frozenset(terms)

