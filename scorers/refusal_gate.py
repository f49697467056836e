"""The refusal reading's gates: whether an answer may refuse at all, and whether it may defer (scorers/deferrals.py),
before any pattern is tried. Word sets, not patterns: an alternation of them tried at every position costs more than
all the patterns. Every refusal holds a cue: a negation or the like ("n't" or a word of CUES, in Chinese a character of
ZH_CUES); every English one also a word that says whose ignorance or which silence (ANCHORS: the speaker, the sources,
"there", a verb of mentioning…: each of scorers/refusal.py's patterns needs one). Every deferral names someone (or a
gap). An ASCII answer's cue words and its deferral's words are looked up in one crate call (native/src/gate.rs).
"""

from __future__ import annotations

import re

from ragpulse._native import WordGates
from ragpulse.scorers.declines import letter_runs
from ragpulse.scorers.deferrals import NAMED_PARTS, NAMED_WORDS, PHRASE_PARTS, PHRASES, leaves_a_topic, may_defer
from ragpulse.scorers.refusal_words import NEEDS_FIRST, NOTICE

CUES = frozenset(
    "not no nothing none never cannot neither nor without lack lacks beyond outside unsure uncertain unclear unaware "
    "unable unfamiliar silent mum quiet vague insufficient missing open unknown unavailable invisible empty dunno "
    "rather absent omitted blank loss stumped wish hard difficult impossible clue idea dont didnt cant hidden null "
    # the idioms' (_EN_IDIOM): "beats me", "you've got me", "I'd be guessing", "a mystery to me", "in the dark"
    "beats search got guess guessing speculating mystery faintest foggiest dark tough tricky clueless pass unrelated "
    "restricted "
    # chat's (scorers/casual.py): "i'm stuck on that", "my brain's buffering", "top secret to me", "off limits for me", "idk"
    "stuck buffering blanking lagging glitching secret limits bounds idk uncharted".split())
# "I'd need to check" has no cue word: the speaker's "would need to" is its cue ("need" alone is too common a word)
_CHECK_FIRST = re.compile(r"\bi(?:['’]d|\s+would)\s+(?:first\s+)?need\s+to\b")
_NEEDS_FIRST = re.compile(NEEDS_FIRST)
# A system's notice has no cue word either: a word of it looked up first ("wrong", "again"…), in a short answer only (a
# notice is a line or two; looking the words up in a summary took 3.7 µs)
_NOTICE_WORDS = ("wrong", "again", "another", "wandered", "missing", "vanished", "disappeared")
_NOTICE_CHARS = 240
_NOTICE = re.compile(NOTICE, re.MULTILINE)
_OTHER_SUBJECTS = frozenset(("subjects", "topics"))  # "about different subjects" ("different" alone: too common a cue)
ANCHORS = frozenset(
    "i we me us my myself hard difficult impossible sure certain idea clue unsure uncertain unknown dunno nothing "
    "there here anywhere anything something topic question outside beyond unclear clear known mine tough tricky "
    "say tell confirm comment speak tool agent assistant "
    # the sources and what they hold
    "context document documents documentation docs knowledge knowledgebase database passage passages text texts source "
    "sources material materials article articles excerpt excerpts snippet snippets faq faqs help search results "
    "reference references guide guides guidance content page pages entries information info details data specifics "
    "answer answers record records access visibility insight mention entry "
    # verbs of mentioning, as a predicate of the topic ("Sale items aren't mentioned")
    "mentioned specified stated documented addressed described discussed explained indicated detailed answered "
    "clarified covered listed "
    # chat's bare declines (scorers/casual.py): "not gonna guess on that one", "idk"
    "guess idk".split())
# one search, not a generator of `in` over them; the bot of itself (卡壳, 空白, 努力学习, 怕答错), a system's notice (繁忙,
# 开小差, 稍后再试), what it needs first (麻烦, 请提供, 先核, 才好帮)
ZH_CUES = re.compile("不|没|未|无|缺|超|难|恕|外行|卡壳|空白|繁忙|开小差|稍后再试|努力学习|怕答错|怕说错|怕讲错|麻烦|请您?提供|"
                     "摆烂|投降|认输|弃权|交白卷|"  # the speaker giving up (refusal_zh.REFUSAL)
                     "先核|才好帮|才能帮")
CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
# An answer's words as str.split() leaves them: with the punctuation that may cling to them.
_CUE_TOKENS = frozenset(f"{before}{word}{after}" for word in CUES for before in ("", "(", '"', "'", "“", "‘", "[")
                        for after in ("", ".", ",", ";", ":", "!", "?", ")", '"', "'", "”", "’", "...", "…", '."',
                                      ',"', ".”", ",”", "),", ")."))
# One crate call an answer: str.split()'s words of an ASCII answer, dashes and slashes parting them too, met in the cue
# tokens (bit 1; 9 -> 6 µs), the deferral's words (bit 2: deferrals.NAMED_WORDS, every character beyond ASCII parting
# them as a "?" would) and its phrases (bit 4: deferrals.PHRASES, two words in a row among them; read only after a
# named one: 6 µs over a summary, in about a quarter of them)
_CUE, _NAMED, _PHRASE = 1, 2, 4
_GATES = WordGates([(sorted(_CUE_TOKENS), "".join(chr(code) for code in range(128) if chr(code).isspace()) + "-/"),
                    (sorted(NAMED_WORDS), NAMED_PARTS), (sorted(PHRASES), PHRASE_PARTS)], needs=[0, 0, _NAMED])


def words_of(text: str) -> list[str]:
    """letter_runs of a lower-cased text: the gate's, when the gate read this very text last."""
    text_read, words = _last  # read once: the local judge's thread may set it between two reads
    return words if text_read is text else letter_runs(text.lower())


def named(text: str) -> bool:
    """Whether a text names someone and holds a deferral's phrase (deferrals.may_defer's gate), lower-cased or not."""
    return _GATES.met_in(text) & (_NAMED | _PHRASE) == _NAMED | _PHRASE


def answer_may_refuse(answer: str) -> tuple[bool, bool | None]:
    """The answer's gate: a cue (a few µs, no regular expression), then a cue and an anchor word; with whether the
    answer names someone and holds a deferral's phrase (None: not looked up), for its reading to take again."""
    lowered = answer.lower()
    # handed on
    if not lowered.isascii() and (ZH_CUES.search(lowered) or CJK.search(lowered) and leaves_a_topic(answer)):
        return True, None
    met = _GATES.met_in(lowered)
    defers = met & (_NAMED | _PHRASE) == _NAMED | _PHRASE
    if "n't" not in lowered and "n’t" not in lowered:
        lower = lowered
        for dash in "-—–/":
            lower = lower.replace(dash, " ")
        cue = met & _CUE if lower.isascii() else not _CUE_TOKENS.isdisjoint(lower.split())
        cue = cue or "out of my " in lower  # "i'm out of my depth there" (scorers/casual.py)
        if not cue and not ("different" in lower and any(w in lower for w in _OTHER_SUBJECTS)) and not checks_first(
                lower, need := "need " in lower):  # one search for both readings of "need" (0.5 µs over a summary)
            # what the speaker needs first, a system's notice (no cue word); the matter left to someone else, no cue of
            # declining (scorers/deferrals.py)
            return needs_first(lower, need) or may_defer(lower, defers), defers
    return may_refuse(answer) or may_defer(lowered, defers), defers


def checks_first(lower: str, need: bool = True) -> bool:
    """Whether a lower-cased text says what the speaker would need to do first ("I'd need to double-check"); `need`:
    False when the caller found no "need " in it."""
    return need and "need to" in lower and _CHECK_FIRST.search(lower) is not None


def needs_first(lower: str, need: bool = True) -> bool:
    """Whether a lower-cased text says what the speaker needs before it answers ("I'll need your order number first"),
    or is a short system's notice ("Something went wrong", "Try again in a bit"): read once an answer, its clauses only
    in an answer that does (scorers/refusal.py). `need`: False when the caller found no "need " in it."""
    if need and "need " in lower and _NEEDS_FIRST.search(lower) is not None:
        return True
    return (len(lower) <= _NOTICE_CHARS and any(word in lower for word in _NOTICE_WORDS)
            and _NOTICE.search(lower) is not None)


# The last clause the gate read and its words: scorers/casual.py's shapes read them again (1 µs a clause)
_last: tuple[str, list[str]] = ("", [])


def may_refuse(text: str) -> bool:
    """A clause's gate: a cue, and in English an anchor."""
    global _last
    lower = text.lower()
    if not lower.isascii() and ZH_CUES.search(lower):
        return True
    words = letter_runs(lower)
    _last = (text, words)
    cue = "n't" in lower or "n’t" in lower or not CUES.isdisjoint(words) or "out of my " in lower or (
        "different" in words and not _OTHER_SUBJECTS.isdisjoint(words)) or checks_first(lower)
    return cue and not ANCHORS.isdisjoint(words)
