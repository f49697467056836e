"""Text analysis for the local judge and the turn classifier: clauses, terms, quantities, polarity.

- clauses: sentences, split again where a clause starts (English `, but` / `, and` / `;`, Chinese
  `，` `；`), since one unsupported clause must not hide behind a supported one;
- terms: English content words stemmed by Snowball (PyStemmer, the Snowball project's C build:
  returned/returns/return meet); Chinese has no spaces, so character bigrams of each run once
  function characters (的了吗…) and negators are taken out, a run of one character as itself;
- quantities: a number with its unit as (dimension, value in the dimension's base unit), so that
  14 days = two weeks = 两周, 1 year = 12 months = 一年, half an hour = 30 minutes, 24小时 = 一天;
  money by currency, percentages, times of day (9 am, 晚上9点), rates (per month, 每月), ranges
  (3 to 5 business days: both ends), bare counts;
- polarity: the parity of negators (not, never, n't, cannot, no; 不 没 未 非 无 别 勿), without a
  leading yes/no and without fixed phrases that only look negative (无理由: no-reason returns);
- names: capitalised words that do not start a sentence, and Latin words inside Chinese text.

Every function is pure; callers cache by text (chunks recur across traces).
"""

from __future__ import annotations

import re

import msgspec
import Stemmer

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_stem_words = Stemmer.Stemmer("english").stemWords

STOPWORDS = frozenset(
    "a an the and or but is are was were be been being do does did can could would should will shall may might must "
    "i me my we our ours us you your yours it its this that these those there here what when where which who whom why "
    "how of in on at to for from with by about as if then than so any some all please thanks thank hi hello just "
    "also still get got gets have has had having many say says into onto over under after before them they their "
    "theirs he she his her him very same other each such only own more most few yes sure okay ok too well one within "
    "half both either like".split()
)
# Clauses made only of these are conversation, not claims ("Let me know if you need anything else").
_CHATTER = frozenset(_stem_words(
    "let know need help hope happy glad anything else further assist question questions contact reach feel free "
    "welcome great day ask note".split()
))
# Characters that carry no content: particles, pronouns, question words, copulas; negators are
# tracked by polarity instead (so 不支持 and 支持 share their terms and differ in polarity).
CJK_FUNCTION = frozenset("的了吗呢吧啊呀嘛么我你您他她它们这那哪里是在有和与及或就都也还要想能可以会请问怎什么样多少几个为把被给对从到")
_CJK_NEGATORS = "不没未非无别勿"
_CJK_NEGATOR_WORDS = "无法|没有|不|没|未|非|无|别|勿"
_NOT_NEGATIONS = ("无理由", "无论", "不仅", "不但", "非常", "不同", "无线", "毫无疑问")
# "without" is no negator here: "installments without interest" paraphrases "interest-free ones".
_EN_NEGATORS = frozenset("not no never cannot none nor neither nothing nobody".split())
# "No, ..." and "No you can't" answer a question; "No immediate injuries were reported" negates.
_LEADING_ANSWER = re.compile(
    r"^\s*(?:(?:yes|yeah|yep|nope|sure|correct|indeed|unfortunately)\b|no\b(?=\s*[,.!:;—-]|\s+(?:you|we|i|it|they|that|"
    r"this|there|he|she)\b))[\s,.!:;—-]*", re.IGNORECASE)
_EN_NOT_NEGATIONS = re.compile(r"\bnot only\b|\bno doubt\b|\bno matter\b|\bnot just\b")
_CJK_LEADING_ANSWER = re.compile(r"^\s*(?:是的|对|不|不是|不能|不可以|可以|能|会|不会)[，,。！!：:]")

# -- clauses -----------------------------------------------------------------------------------

# A sentence ends at . ! ? followed by a space or the end (not inside 12.99), or at CJK punctuation.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？!?；;\n]+")
_CLAUSE_START = re.compile(
    r",\s+(?=(?:but|and|while|whereas|although|though|so|unless|otherwise|with|which)\b)|，|—"
    # "valid for 3 years and cannot be exchanged": a second verb phrase has its own polarity
    r"|\s+(?:and|but)\s+(?=(?:can|cannot|can't|is|isn't|are|aren't|does|doesn't|do|don't|will|won't|must|may|has|have)\b)"
)


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def clauses(text: str) -> list[str]:
    out = []
    for sentence in sentences(text):
        out.extend(part.strip(" ,.") for part in _CLAUSE_START.split(sentence) if part.strip(" ,."))
    return out


# -- quantities --------------------------------------------------------------------------------

_MINUTES = {"minute": 1.0, "hour": 60.0, "day": 1440.0, "week": 10080.0, "month": 43830.0, "year": 525960.0}
# unit word -> (dimension, factor to the base unit)
_EN_UNITS: dict[str, tuple[str, float]] = {}
for _names, _unit in (
    ("minute minutes min mins", "minute"), ("hour hours hr hrs", "hour"), ("day days", "day"),
    ("week weeks", "week"), ("month months", "month"), ("year years", "year"),
):
    for _name in _names.split():
        _EN_UNITS[_name] = ("duration", _MINUTES[_unit])
_EN_UNITS.update({
    "business day": ("business_days", 1.0), "business days": ("business_days", 1.0),
    "working day": ("business_days", 1.0), "working days": ("business_days", 1.0),
    "%": ("percent", 1.0), "percent": ("percent", 1.0), "per cent": ("percent", 1.0),
    "dollar": ("usd", 1.0), "dollars": ("usd", 1.0), "usd": ("usd", 1.0), "euro": ("eur", 1.0), "euros": ("eur", 1.0),
    "eur": ("eur", 1.0), "pound": ("gbp", 1.0), "pounds": ("gbp", 1.0), "gb": ("gb", 1.0), "mb": ("mb", 1.0),
    "kg": ("kg", 1.0), "km": ("km", 1.0), "am": ("clock", 0.0), "pm": ("clock", 12.0),
    "point": ("points", 1.0), "points": ("points", 1.0),
})
_CURRENCY_SIGN = {"$": "usd", "€": "eur", "£": "gbp", "¥": "cny", "￥": "cny"}
_NUMBER_WORDS = {
    "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0,
    "eight": 8.0, "nine": 9.0, "ten": 10.0, "eleven": 11.0, "twelve": 12.0, "fifteen": 15.0, "twenty": 20.0,
    "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "ninety": 90.0, "hundred": 100.0,
    "half a": 0.5, "half an": 0.5,
}
_SCALES = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = "|".join(_SCALES)
# A number in digits or words, times a scale word: "1.5 million", "two hundred", "a trillion".
_EN_NUM = (rf"(?:(?:{_NUM}|" + "|".join(sorted(map(re.escape, _NUMBER_WORDS), key=len, reverse=True))
           + rf")(?:\s+(?:{_SCALE})\b)?|\ban?\s+(?:{_SCALE})\b)")
_EN_UNIT = "|".join(sorted(map(re.escape, _EN_UNITS), key=len, reverse=True))
_EN_QUANTITY = re.compile(
    rf"(?P<sign>[$€£¥￥])\s?(?P<money>{_NUM}(?:\s*(?:{_SCALE})\b)?)"
    rf"|\b(?P<age>\d{{1,3}})(?:-|\s)years?(?:-|\s)old\b"  # an age is the number the source gives it ("Keating, 21")
    rf"|\b(?P<low>{_EN_NUM})\s*(?:to|-|–|~)\s*(?P<high>{_EN_NUM})(?:-|\s*)(?P<range_unit>{_EN_UNIT})(?![a-z])"
    rf"|\b(?:per|every|each)\s+(?P<rate>minute|hour|day|week|month|year)\b"
    rf"|(?<![\w.])(?P<value>{_EN_NUM})(?:-|\s*)(?P<unit>{_EN_UNIT})?(?![a-z\d{CJK}])"  # 12个月 is Chinese's
    r"|\b(?P<times>once|twice)\b"
)
# Where a quantity can start: the full pattern is tried only there (trying it at every position costs ~15 µs a clause).
_DIGIT_OR_SIGN = re.compile(r"[\d$€£¥￥]")
_NOT_LETTERS = re.compile(r"[^a-z]+")
_QUANTITY_WORDS_FIRST = frozenset({name.split()[0] for name in _NUMBER_WORDS} | {"per", "every", "each", "once", "twice",
                                                                                *_SCALES})
_QUANTITY_START = re.compile(r"[\d$€£¥￥]|\b(?:" + "|".join(sorted({name.split()[0] for name in _NUMBER_WORDS} | {
    "per", "every", "each", "once", "twice"})) + rf"|an?\s+(?:{_SCALE}))\b")
_NOT_COUNTS = frozenset(("one", "half a", "half an"))
_CJK_NEXT = re.compile(rf"\s*[{CJK}]")
CJK_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CJK_UNITS: dict[str, tuple[str, float]] = {
    "分钟": ("duration", 1.0), "小时": ("duration", 60.0), "天": ("duration", 1440.0), "周": ("duration", 10080.0),
    "星期": ("duration", 10080.0), "个星期": ("duration", 10080.0), "个月": ("duration", 43830.0),
    "年": ("duration", 525960.0), "个工作日": ("business_days", 1.0), "工作日": ("business_days", 1.0),
    "元": ("cny", 1.0), "块": ("cny", 1.0), "块钱": ("cny", 1.0), "次": ("times", 1.0), "积分": ("points", 1.0),
    "分": ("points", 1.0), "%": ("percent", 1.0), "折": ("discount_tenths", 1.0),
}
_CJK_UNIT = "|".join(sorted(map(re.escape, _CJK_UNITS), key=len, reverse=True))
_CJK_NUM = rf"(?:{_NUM}|[零一二两三四五六七八九十百千]+)"
_CJK_QUANTITY = re.compile(
    rf"(?P<period>上午|早上|中午|下午|晚上)?(?P<clock>{_CJK_NUM})点"
    rf"|(?P<low>{_CJK_NUM})\s*(?:到|至|-|~|－)\s*(?P<high>{_CJK_NUM})\s*(?P<range_unit>{_CJK_UNIT})"
    rf"|每(?P<rate>天|周|星期|月|年)"
    rf"|(?P<half>半)(?P<half_unit>年|小时|个月)"
    rf"|(?P<value>{_CJK_NUM})\s*(?P<unit>{_CJK_UNIT})?"
)
_RATE_MINUTES = {**_MINUTES, "天": 1440.0, "周": 10080.0, "星期": 10080.0, "月": 43830.0, "年": 525960.0}
_HALF = {"年": 262980.0, "小时": 30.0, "个月": 21915.0}


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


# -- terms, names, polarity --------------------------------------------------------------------

_LATIN_WORD = re.compile(r"[a-z][a-z0-9+]*(?:['’][a-z]+)?")
_CJK_RUN = re.compile(rf"[{CJK}]+")
_HAS_CJK = re.compile(rf"[{CJK}]")
_NAME = re.compile(r"(?<![.!?。！？]\s)(?<!^)\b[A-Z][A-Za-z0-9+]*(?:\s+[A-Z][A-Za-z0-9+]*)*")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\(?\d{1,2}[.)])?\s*")  # "- Full name: ..." opens a line, as a sentence does
_LATIN_IN_CJK = re.compile(r"[A-Za-z][A-Za-z0-9+]+")
_CJK_FUNCTION_OR_NEGATOR = re.compile(f"(?:[{''.join(sorted(CJK_FUNCTION))}]|{_CJK_NEGATOR_WORDS})+")
# Synonyms of the calendar that are units, not wording: 星期日 and 礼拜天 are 周日.
_CJK_WEEK = re.compile("星期|礼拜")


# A quantity's words are not terms of their own: "two weeks" is the quantity 14 days, not "week".
_QUANTITY_WORDS = frozenset(_stem_words([word for word in (*_EN_UNITS, *_NUMBER_WORDS, *_SCALES, "once", "twice", "per", "every", "old")
                                         if " " not in word]))


class Clause(msgspec.Struct, frozen=True, gc=False):
    text: str
    terms: frozenset[str]  # English stems and CJK bigrams
    words: frozenset[str]  # the English stems alone
    cjk_parts: tuple[str, ...]  # the CJK runs the bigrams come from, for coverage by character
    chars: frozenset[str]  # the characters of cjk_parts
    sequence: tuple[str, ...]  # the English terms and the CJK characters in their order, for substitutions
    quantities: frozenset[tuple[str, float]]
    names: frozenset[str]  # proper nouns, lower-cased and stemmed like terms
    negated: bool
    governed: frozenset[str] = frozenset()  # the English words a negator governs (empty: the whole clause)
    spelled: frozenset[tuple[str, float]] = frozenset()  # bare counts in words: evidence, not claims


_POLARITY_TOKEN = re.compile(rf"[a-z][a-z0-9+'’]*|[,;:()]|[{CJK}]")
_SCOPE_ENDS = frozenset(("and", "but", "or", "then", "if", "when", "while", ",", ";", ":", "(", ")"))
_SCOPE = 4  # tokens after a negator that it can govern
_NOTHING_GOVERNED: frozenset[str] = frozenset()
_ANY_NEGATOR = re.compile(rf"\b(?:{'|'.join(sorted(_EN_NEGATORS))})\b|n['’]t\b|[{_CJK_NEGATORS}]")


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


def cjk_covered(parts: tuple[str, ...], found: frozenset[str], chars: frozenset[str]) -> float:
    """How many characters of `parts` lie in a bigram (or a one-character part) that is in `found`,
    a character that is only somewhere in `chars` counting half (用原来的 for 通过原: a synonym
    shares a character more often than a word). A bigram across a word boundary (制造上的缺陷: 造上)
    is no evidence either way: the measure is by character, not by bigram."""
    covered = 0.0
    for part in parts:
        if len(part) == 1:
            covered += 1.0 if part in found else 0.5 if part in chars else 0.0
            continue
        hits = [pair in found for pair in map(str.__add__, part, part[1:])]
        for i, char in enumerate(part):
            if (i > 0 and hits[i - 1]) or (i < len(hits) and hits[i]):
                covered += 1.0
            elif char in chars:
                covered += 0.5
    return covered


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


def size(parsed: Clause) -> int:
    """What a claim has to be supported on: its English terms, its CJK characters, its quantities."""
    return len(parsed.words) + sum(map(len, parsed.cjk_parts)) + len(parsed.quantities)


def supported_units(parsed: Clause, other: Clause) -> float:
    """How much of size(parsed) the terms and quantities of `other` support."""
    return (len(parsed.words & other.terms) + cjk_covered(parsed.cjk_parts, other.terms, other.chars)
            + len(parsed.quantities & other.quantities))


def is_chatter(parsed: Clause) -> bool:
    return not parsed.quantities and parsed.terms <= _CHATTER


# -- relevance terms (questions, and chunks against a question) ---------------------------------

_QUESTION_WORD = re.compile(rf"[a-z0-9]+(?:['’][a-z]+)*|[{CJK}]+")
# Words that carry no topic in a question (negators included: a question's polarity is not its topic).
_QUESTION_STOPWORDS = frozenset(
    "a an the and or but is are was were be been do does did can could would should will shall may might must i me my "
    "we our you your it its this that these those there here what when where which who whom why how of in on at to "
    "for from with by about as if then than so not no any some all please thanks thank hi hello just also still get "
    "got have has had many say says i'm don't didn't doesn't isn't can't won't i've i'd there's what's".split()
)


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
