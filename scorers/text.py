"""Text analysis for the local judge and the turn classifier: clauses, terms, quantities, polarity.

- clauses: sentences, split again where a clause starts (English `, but` / `, and` / `;`, Chinese
  `，` `；`), since one unsupported clause must not hide behind a supported one;
- terms: English content words stemmed by Snowball (the Snowball project's algorithm, in the crate:
  returned/returns/return meet); Chinese has no spaces, so character bigrams of each run once
  function characters (的了吗…) and negators are taken out, a run of one character as itself;
- quantities: a number with its unit as (dimension, value in the dimension's base unit), so that
  14 days = two weeks = 两周, 1 year = 12 months = 一年, half an hour = 30 minutes, 24小时 = 一天;
  money by currency, percentages, times of day (9 am, 晚上9点), rates (per month, 每月), ranges
  (3 to 5 business days: both ends), bare counts, years (2023年 is 2023 as "in 2023" is, not 2,023 years), multiples
  (双倍, 三倍); "once" only in a frequency ("once per order"), not as a conjunction;
- polarity: the parity of negators (not, never, n't, cannot, no; 不 没 未 非 无 别 勿, Cantonese 唔 冇), without a
  leading yes/no and without words that only hold a negator (无理由: no-reason returns, 未来, 特别, 经久不衰, 唔该);
- Chinese is read in Simplified characters (scorers/cjk_simplified.py: 們 as 们, 無 as 无), so that a Traditional
  answer and a Simplified context share their terms;
- names: capitalised words that do not start a sentence, and Latin words inside Chinese text.

Every function is pure; callers cache by text (chunks recur across traces). The word tables and the
patterns are here; clause() and question_terms() run in the compiled core (native/src/clause.rs), which
reads them translated (scorers/crate_regex.py). sentences() and clauses() stay on Python's `re`: their
lookbehinds are faster there. tests/test_native_text.py holds the crate to a snapshot of the analysis taken when
it was shown equal to the Python it replaced (tests/helpers/text_snapshot.py).
"""

from __future__ import annotations

import re

import msgspec

from ragpulse._native import ChunkAnalysis, StemMemo, TextAnalyser, stem_words
from ragpulse._native import clauses as clauses  # a text's clauses, sentence after sentence (see -- clauses --)
from ragpulse._native import sentences as sentences
from ragpulse._native import cjk_covered as _cjk_covered
from ragpulse.scorers.cjk_places import CJK_PLACES
from ragpulse.scorers.cjk_simplified import SIMPLIFIED
from ragpulse.scorers.crate_regex import to_crate

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

STOPWORDS = frozenset(
    "a an the and or but is are was were be been being do does did can could would should will shall may might must "
    "i me my we our ours us you your yours it its this that these those there here what when where which who whom why "
    "how of in on at to for from with by about as if then than so any some all please thanks thank hi hello just "
    "also still get got gets have has had having many say says into onto over under after before them they their "
    "theirs he she his her him very same other each such only own more most few yes sure okay ok too well one within "
    "half both either like".split()
)
# Clauses made only of these are conversation, not claims ("Let me know if you need anything else").
_CHATTER = frozenset(stem_words(
    "let know need help hope happy glad anything else further assist question questions contact reach feel free "
    "welcome great day ask note "
    # interjections: "Exactly, but …" and "Definitely." are no claims (a capitalised one read as a name not in the context)
    "exactly definitely absolutely indeed totally agreed agree certainly wow cool awesome nice lucky amazing yeah yep "
    "yup nope haha lol".split()
))
# Characters that carry no content: particles, pronouns, question words, copulas; negators are
# tracked by polarity instead (so 不支持 and 支持 share their terms and differ in polarity).
CJK_FUNCTION = frozenset("的了吗呢吧啊呀嘛么我你您他她它们这那哪里是在有和与及或就都也还要想能可以会请问怎什么样多少几个为把被给对从到")
# 唔 and 冇 are Cantonese's 不 and 没 (台湾暂时唔寄, 冇得退); Traditional 無 and 沒 are read as 无 and 没.
_CJK_NEGATORS = "不没未非无别勿唔冇"
_CJK_NEGATOR_WORDS = "无法|没有|不|没|未|非|无|别|勿|唔|冇"
# Common words whose 不 没 未 非 无 别 is no negator (未来 the future, 无疑 doubtless, 经久不衰 enduring, 特别 especially,
# 非洲 Africa): 173 of the 554 clauses read as negated in 2,000 paragraphs of Chinese news (UHGEval's) were negated by
# one of them alone. Each is taken out of a clause before its polarity is read, longest first (毫无疑问 before 无疑);
# words that do negate a thing (无糖, 无限, 非法, 未必) are not here.
_NOT_NEGATIONS = tuple(sorted(set(
    "无理由 无论 不仅 不但 非常 不同 无线 毫无疑问 无疑 无理数 无数 无比 无穷 无偿 无缝 无私 无误 无忧 无人机 无锡 独一无二 "
    "无与伦比 无可厚非 不管 不论 不光 不只 不单 不止 不久 不断 不少 不错 不过 不时 不禁 不免 不妨 不料 不乏 不愧 不朽 "
    "不亚于 不得不 不由得 不约而同 不可思议 不计其数 不锈钢 不粘锅 不客气 不好意思 对不起 了不起 差不多 迫不及待 经久不衰 "
    "层出不穷 源源不断 络绎不绝 未来 除非 莫非 无非 非洲 南非 北非 东非 西非 中非 亚非 非盟 是非 特别 分别 区别 类别 "
    "级别 组别 性别 个别 告别 识别 鉴别 辨别 差别 派别 离别 道别 判别 送别 别人 别的 别墅 别处 没收 淹没 沉没 埋没 出没 "
    "没关系 "
    # Cantonese, in Simplified characters as the clause is read: 唔该 please/thanks, 唔紧要 never mind, 唔单止 not only
    "唔该 唔该晒 唔好意思 唔错 唔单止 唔止 唔理 唔通 唔怪得 唔使客气 唔紧要".split()), key=lambda word: (-len(word), word)))
# "without" negates the word after it alone (_EN_FREE_COMPOUND).
_EN_NEGATORS = frozenset("not no never cannot none nor neither nothing nobody".split())
# "No, ..." and "No you can't" answer a question; "No immediate injuries were reported" negates.
_LEADING_ANSWER = re.compile(
    r"^\s*(?:(?:yes|yeah|yep|nope|sure|correct|indeed|unfortunately)\b|no\b(?=\s*[,.!:;—-]|\s+(?:you|we|i|it|they|that|"
    r"this|there|he|she)\b))[\s,.!:;—-]*", re.IGNORECASE)
# Idioms whose "no"/"not" negates nothing: "no more than ten days" is "within 10 days", "were it not for the law" leans
# on the law.
_EN_NOT_NEGATIONS = re.compile(r"\bnot only\b|\bno doubt\b|\bno matter\b|\bnot just\b|\bnot to mention\b"
                               r"|\bno (?:more|less|fewer|later|sooner|earlier|longer|greater|bigger|smaller) than\b"
                               r"|\bwere it not for\b|\bif not for\b")
# "interest-free" and "without interest" say "no interest": read as that negation of that word alone, so that "with no
# interest" says the same and "with interest" the opposite.
_EN_FREE_COMPOUND = re.compile(r"\b([a-z][a-z0-9]*)-free\b|\bwithout (?:an? |the |any )?([a-z][a-z0-9]*)")
_CJK_LEADING_ANSWER = re.compile(r"^\s*(?:是的|对|不|不是|不能|不可以|可以|能|会|不会|系|唔系|唔可以|唔得|唔会)[，,。！!：:]")

# -- clauses -----------------------------------------------------------------------------------

# A sentence ends at . ! ? followed by a space or the end (not inside 12.99), or at CJK punctuation; a clause starts at
# ", but", "，", "—" or a second verb phrase ("valid for 3 years and cannot be exchanged": its own polarity). Cut in the
# crate (native/src/split.rs, which has the patterns): sentences() and clauses(), imported above. In Python the two
# splits were a fifth of a warm FaithBench judgment.


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
_ONES = "one two three four five six seven eight nine".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
# One to ninety-nine in words, as a number in digits is compared: "thirteen members" are 13 members, "twenty-one
# titles" 21 titles (the teens, seventy, eighty and the hyphenated ones were missing: 13 read as not in the context).
_NUMBER_WORDS = {
    **{word: float(value) for value, word in enumerate(_ONES + "ten eleven twelve thirteen fourteen fifteen sixteen "
                                                                "seventeen eighteen nineteen".split(), start=1)},
    **{tens: float(value) for value, tens in zip(range(20, 100, 10), _TENS)},
    **{f"{tens}-{unit}": float(ten_value + value) for ten_value, tens in zip(range(20, 100, 10), _TENS)
       for value, unit in enumerate(_ONES, start=1)},
    "hundred": 100.0, "half a": 0.5, "half an": 0.5,
}
_SCALES = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = "|".join(_SCALES)
# A number in digits or words, times a scale word: "1.5 million", "two hundred", "a trillion".
# A tens word is never the start of its hyphenated number: "eighty-five percent" is no range from 80 to 5.
_WHOLE_TENS = rf"(?!-(?:{'|'.join(_ONES)})\b)"
_EN_NUM = (rf"(?:(?:{_NUM}|(?:{'|'.join(_TENS)})-(?:{'|'.join(_ONES)})|"
           + "|".join(re.escape(word) + (_WHOLE_TENS if word in _TENS else "")
                      for word in sorted(_NUMBER_WORDS, key=len, reverse=True) if "-" not in word)
           + rf")(?:\s+(?:{_SCALE})\b)?|\ban?\s+(?:{_SCALE})\b)")
_EN_UNIT = "|".join(sorted(map(re.escape, _EN_UNITS), key=len, reverse=True))
_EN_VALUE = rf"(?<![\w.])(?P<value>{_EN_NUM})(?:-|\s*)(?P<unit>{_EN_UNIT})?(?![a-z\d{CJK}])"  # 12个月 is Chinese's
_EN_QUANTITY = re.compile(
    rf"(?P<sign>[$€£¥￥])\s?(?P<money>{_NUM}(?:\s*(?:{_SCALE})\b)?)"
    rf"|\b(?P<age>\d{{1,3}})(?:-|\s)years?(?:-|\s)old\b"  # an age is the number the source gives it ("Keating, 21")
    rf"|\b(?P<low>{_EN_NUM})\s*(?:to|-|–|~)\s*(?P<high>{_EN_NUM})(?:-|\s*)(?P<range_unit>{_EN_UNIT})(?![a-z])(?!(?:-|\s)old\b)"  # "18-49-year-old": ages
    rf"|\b(?:per|every|each)\s+(?P<rate>minute|hour|day|week|month|year)\b"
    rf"|{_EN_VALUE}"
    # "once" counts in a frequency ("once per order", "only once", "allowed once"), not as "once the parcel arrives"
    # or "he once played": read as 1 it made an unsupported number of a conjunction
    r"|\b(?P<times>twice|(?:(?<=only\s)|(?<=just\s)|(?<=most\s)|(?<=least\s)|(?<=than\s)|(?<=exactly\s))once"
    r"|once(?=\s+(?:per|every|each)\b|\s+an?\s+(?:minute|hour|day|week|month|year|quarter|lifetime|customer|order|account)\b)"
    r"|(?<=\w\s)once(?=\s*(?:[.,;:!?)]|$)))\b"
)
# Where a quantity can start: the full pattern is tried only there (the crate scans for these: native/src/clause/scan.rs).
# Never at a digit after a word character (every alternative that starts with a digit needs \b or no word character
# before it): a number's other digits, or one after 年, cost the pattern a try each.
_FIRST_WORDS = {re.split(r"[\s-]", name)[0] for name in _NUMBER_WORDS}  # "twenty-one" starts at "twenty"
_START_WORDS = frozenset(_FIRST_WORDS | {"per", "every", "each", "once", "twice"})
_QUANTITY_START = re.compile(r"(?<!\w)\d|[$€£¥￥]|\b(?:" + "|".join(sorted(_START_WORDS)) + rf"|an?\s+(?:{_SCALE}))\b")
# "Half a" is no count ("half a dozen"); "one" is read as spelled numbers are, evidence and no claim ("one of the
# best"): the context's "number one hit" is what an answer's "number 1 hit" says (it was contradicted by 1956).
_NOT_COUNTS = frozenset(("half a", "half an"))
_CJK_NEXT = re.compile(rf"\s*[{CJK}]")
CJK_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CJK_UNITS: dict[str, tuple[str, float]] = {
    "分钟": ("duration", 1.0), "小时": ("duration", 60.0), "天": ("duration", 1440.0), "周": ("duration", 10080.0),
    "星期": ("duration", 10080.0), "个星期": ("duration", 10080.0), "个月": ("duration", 43830.0),
    "年": ("duration", 525960.0), "个工作日": ("business_days", 1.0), "工作日": ("business_days", 1.0),
    "元": ("cny", 1.0), "块": ("cny", 1.0), "块钱": ("cny", 1.0), "次": ("times", 1.0), "积分": ("points", 1.0),
    "分": ("points", 1.0), "%": ("percent", 1.0), "折": ("discount_tenths", 1.0), "倍": ("multiple", 1.0),
}
# 2023年 is a year, the count 2023 as "in 2023" is, not 2,023 years: a four-digit number from 1000 to 2099 before 年
# (but for 1500年历史, a history of 1,500 years)
_YEAR_BEFORE = r"(?:(?<=(?<!\d)(?:1\d|20)\d\d)|(?<=(?<!\d)(?:1\d|20)\d\d\s))"
_NOT_YEAR_BEFORE = r"(?<!(?<!\d)(?:1\d|20)\d\d)(?<!(?<!\d)(?:1\d|20)\d\d\s)"
_HISTORY = r"(?=的?历史|之久)"
_CJK_UNIT = "|".join(f"{_NOT_YEAR_BEFORE}年|年{_HISTORY}" if unit == "年" else re.escape(unit)
                     for unit in sorted(_CJK_UNITS, key=len, reverse=True))
_CJK_NUM = rf"(?:{_NUM}|[零一二两三四五六七八九十百千]+)"
_CJK_QUANTITY = re.compile(
    rf"(?P<period>上午|早上|中午|下午|晚上)?(?P<clock>{_CJK_NUM})点"
    rf"|(?P<low>{_CJK_NUM})\s*(?:到|至|-|~|－)\s*(?P<high>{_CJK_NUM})\s*(?P<range_unit>{_CJK_UNIT})"
    rf"|每(?P<rate>天|周|星期|月|年)"
    rf"|(?P<half>半)(?P<half_unit>年|小时|个月)"
    # 十分 alone is "very" (十分抱歉, 十分充足), not ten points; 九十分 and 十分钟 are numbers
    rf"|(?!(?<![零一二两三四五六七八九十百千\d])十分(?!钟))"
    rf"(?P<value>{_CJK_NUM}|双(?=倍))\s*(?:(?P<unit>{_CJK_UNIT})|{_YEAR_BEFORE}年(?!的?历史|之久))?"  # 双倍: twice
)
_RATE_MINUTES = {**_MINUTES, "天": 1440.0, "周": 10080.0, "星期": 10080.0, "月": 43830.0, "年": 525960.0}
_HALF = {"年": 262980.0, "小时": 30.0, "个月": 21915.0}


# -- terms, names, polarity --------------------------------------------------------------------

_LATIN_WORD = re.compile(r"[a-z][a-z0-9+]*(?:['’][a-z]+)?")
_NAME = re.compile(r"(?<![.!?。！？]\s)(?<!^)\b[A-Z][A-Za-z0-9+]*(?:\s+[A-Z][A-Za-z0-9+]*)*")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\(?\d{1,2}[.)])?\s*")  # "- Full name: ..." opens a line, as a sentence does
_LATIN_IN_CJK = re.compile(r"[A-Za-z][A-Za-z0-9+]+")
_CJK_FUNCTION_OR_NEGATOR = re.compile(f"(?:[{''.join(sorted(CJK_FUNCTION))}]|{_CJK_NEGATOR_WORDS})+")
# Synonyms of the calendar that are units, not wording: 星期日 and 礼拜天 are 周日.
_CJK_WEEK = re.compile("星期|礼拜")


# A quantity's words are not terms of their own: "two weeks" is the quantity 14 days, not "week".
_QUANTITY_WORDS = frozenset(stem_words([word for word in (*_EN_UNITS, *_NUMBER_WORDS, *_SCALES, "once", "twice", "per", "every", "old")
                                         if " " not in word and "-" not in word]))


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
_ANY_NEGATOR = re.compile(rf"\b(?:{'|'.join(sorted(_EN_NEGATORS))})\b|n['’]t\b|[{_CJK_NEGATORS}]")


def cjk_covered(parts: tuple[str, ...], found: frozenset[str], chars: frozenset[str]) -> float:
    """How many characters of `parts` lie in a bigram (or a one-character part) that is in `found`,
    a character that is only somewhere in `chars` counting half (用原来的 for 通过原: a synonym
    shares a character more often than a word). A bigram across a word boundary (制造上的缺陷: 造上)
    is no evidence either way: the measure is by character, not by bigram. Counted in the crate; the judge
    asks it of the crate's chunks (ChunkContext.evidence), which tests/test_native_align.py holds to this."""
    return _cjk_covered(parts, found, chars) if parts else 0.0


def blanked(match: re.Match[str]) -> str:
    """A match replaced by as many spaces: the readings that blank words keep the answer one character for one."""
    return " " * len(match.group())


def clause(text: str) -> Clause:
    """The clause's terms, quantities, names and polarity (the steps: native/src/clause.rs, Analyser::clause)."""
    return Clause(text, *_ANALYSER.clause(text))


def analyser() -> TextAnalyser:
    """The crate's analyser that clause() reads with: the local judge's verdict rules analyse claims with it."""
    return _ANALYSER


def chunk_analysis(grouped: list[list[str]], text: str) -> ChunkAnalysis:
    """A chunk's analysis held in the crate (native/src/chunk.rs): its sentences, each as its clauses' texts, read by
    clause(), and the question terms of `text`."""
    return _ANALYSER.chunk(grouped, text)


def name_stems(word: str) -> frozenset[str]:
    """A capitalised word as a name is compared: its content stems, not a word of conversation."""
    return frozenset(_ANALYSER.words(word.lower())) - _CHATTER


def size(parsed: Clause) -> int:
    """What a claim has to be supported on: its English terms, its CJK characters, its quantities."""
    return len(parsed.words) + sum(map(len, parsed.cjk_parts)) + len(parsed.quantities)


def supported_units(parsed: Clause, other: Clause) -> float:
    """How much of size(parsed) the terms and quantities of `other` support (the judge asks the crate:
    ChunkContext.evidence, held to this by tests/test_native_align.py)."""
    return (len(parsed.words & other.terms) + cjk_covered(parsed.cjk_parts, other.terms, other.chars)
            + len(parsed.quantities & (other.quantities | other.spelled)))  # "eleven players" supports "11 players"


_NOT_NEGATION_WORDS = re.compile("|".join(_NOT_NEGATIONS))  # longest first: 毫无疑问 before 无疑


def real_negators(text: str) -> str:
    """`text` without the Chinese words whose 不 没 未 非 无 别 negates nothing (不同, 区别, 未来): for a pattern that
    reads a negation by its characters, as the clause's polarity reads it."""
    return _NOT_NEGATION_WORDS.sub(" ", text)


def is_chatter(parsed: Clause) -> bool:
    return not parsed.quantities and parsed.terms <= _CHATTER


# -- relevance terms (questions, and chunks against a question) ---------------------------------

# A question's words: `[a-z0-9]+(?:['’][a-z]+)*|[{CJK}]+` in the lower-cased text, scanned by the crate
# (native/src/clause.rs, question_words).
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
    return _ANALYSER.question_terms(text)


def question_shared(question: frozenset[str], text: str, memo: StemMemo | None = None) -> int:
    """len(question & question_terms(text)), without making the text's set (in the crate); its words' stems from
    `memo` when given (the local judge's)."""
    return _ANALYSER.question_shared(question, text, memo)


# The crate's analyser: the patterns above (translated) and the tables.
_PATTERNS = {
    "leading_answer": _LEADING_ANSWER, "en_not_negations": _EN_NOT_NEGATIONS, "cjk_leading_answer": _CJK_LEADING_ANSWER,
    "en_quantity": _EN_QUANTITY, "quantity_start": _QUANTITY_START, "name": _NAME, "list_item": _LIST_ITEM,
    "latin_in_cjk": _LATIN_IN_CJK,
    "cjk_function_or_negator": _CJK_FUNCTION_OR_NEGATOR, "cjk_quantity": _CJK_QUANTITY, "latin_word": _LATIN_WORD,
    "polarity_token": _POLARITY_TOKEN, "any_negator": _ANY_NEGATOR, "en_free_compound": _EN_FREE_COMPOUND,
    "cjk_next": _CJK_NEXT, "cjk_week": _CJK_WEEK,
}
_CRATE_PATTERNS = {name: to_crate(pattern.pattern, bool(pattern.flags & re.IGNORECASE)) for name, pattern in _PATTERNS.items()}
# Matched at a position (Python's pattern.match(text, pos)): an alternative matching any character stops the
# crate's search from running past the position; the analysis tells the two apart by the groups set.
_CRATE_PATTERNS["en_quantity"] = f"(?:{_CRATE_PATTERNS['en_quantity']})|[\\s\\S]"
# en_quantity at a digit that can open no range nor age (native/src/clause.rs says when): its value alternative alone,
# without its lookarounds, so that the crate runs it on the regex crate, not on fancy-regex's backtracking VM (2.5 µs a
# number): at a digit only _NUM can start _EN_NUM, and a scale word never follows (it would open a range); the crate
# checks the lookbehind itself, and the lookahead is the character after `whole`, consumed (or the text's end)
_EN_DIGIT_VALUE = rf"(?P<whole>(?P<value>{_NUM})(?:-|\s*)(?P<unit>{_EN_UNIT})?)(?:[^a-z\d{CJK}]|$)"
_CRATE_PATTERNS["en_value"] = f"(?:{to_crate(_EN_DIGIT_VALUE, False)})|[\\s\\S]"
_CRATE_PATTERNS["cjk_next"] = f"({_CRATE_PATTERNS['cjk_next']})|[\\s\\S]|$"
_TABLES = {
    "stopwords": set(STOPWORDS), "chatter": set(_CHATTER), "cjk_function": set(CJK_FUNCTION),
    "cjk_negators": set(_CJK_NEGATORS), "not_negations": list(_NOT_NEGATIONS), "en_negators": set(_EN_NEGATORS),
    "quantity_words": set(_QUANTITY_WORDS), "quantity_start_words": set(_START_WORDS), "en_units": _EN_UNITS,
    "currency_sign": _CURRENCY_SIGN, "number_words": _NUMBER_WORDS, "scales": _SCALES, "minutes": _MINUTES,
    "rate_minutes": _RATE_MINUTES, "half": _HALF, "cjk_units": _CJK_UNITS, "cjk_digits": {**CJK_DIGITS, "双": 2},
    "not_counts": set(_NOT_COUNTS), "scope_ends": set(_SCOPE_ENDS), "scope": _SCOPE,
    "question_stopwords": set(_QUESTION_STOPWORDS), "cjk_places": CJK_PLACES, "cjk_simplified": SIMPLIFIED,
}
_ANALYSER = TextAnalyser(_CRATE_PATTERNS, _TABLES)
