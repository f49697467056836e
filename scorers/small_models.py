"""What a small open model's logged answer does around its words (scorers/refusal.py's read): its chat template's
tokens, a sentence said again, a reply cut off, the question said back, and its own instructions named as the reason
it does not answer.

- A chat template's special tokens (</s>, <|im_end|>, <|eot_id|>, <|endoftext|>, <end_of_turn>…) are the model's
  chrome, no words of a claim: a clause of them alone is none, where the answer may refuse (only_tokens; a claim that
  ends on one is read as it was: answers of a public benchmark end on "</s>").
- A sentence or clause said again right after itself is said once, and a trailing fragment that repeats the start of
  an earlier one (the reply cut at its token limit: "Checkout will show it. Checkout will") is no claim (said_again:
  where the answer may refuse). A real claim said twice is still a claim, once.
- The question said back in its own form, without its question mark ("Do you take PayPal.", "Is there a warranty on
  headphones"): a question, no claim beside a refusal (asks_back).
- The speaker's own rules or instructions named as the reason it does not answer ("According to my rules I must stick
  to the text", "Per my guidelines I stay silent on …", "my instructions: do not make up answers", "As per instruction
  I only use the documents", "cost questions are for an agent" under its rules; 按照要求我只根据资料回复, 依照指示我不作
  回应, 我的instructions只允许用给定资料) decline (ruled): the clause tells of the speaker's instructions, not of the
  world. The rules named without a restriction of the speaker's ("According to the rules, opened items can be returned
  within 15 days") stay a claim.
- The speaker abstaining in a learner's words ("I stay out of that", "I leave it open", "I better not to guess"):
  a decline (ruled too, gated on its verbs).
"""

from __future__ import annotations

import re

from ragpulse._native import Substrings
from ragpulse.scorers.refusal_words import NOT, SAY, SOURCE, SOURCE_NOUN

# A chat template's special tokens: <|im_end|>, <|eot_id|>, <|endoftext|>, </s>, <s>, <eos>, <end_of_turn>, [/INST]
_TOKEN = re.compile(r"<\|[a-z_]{2,24}\|>|</?s>|<eos>|</?(?:start|end)_of_turn>|\[/?INST\]")


def only_tokens(text: str) -> bool:
    """Whether a clause is a chat template's tokens alone ("</s>" after "Have a nice day!"): no claim."""
    return ("<" in text or "[" in text) and not _TOKEN.sub("", text).strip(" \t\n.!?")


_STOPS = (".", "!", "?", "。", "！", "？", '"', "”")
_MIN_WORDS = 3  # words of an English unit said again ("Yes." or a name said twice is left as it is)
_MIN_HAN = 4  # characters of a Chinese one
_HAN = re.compile("[\u3400-\u9fff]")


def said_again(part: str, said: list[str], answer: str, end: int) -> bool:
    """Whether a clause (ending at `end` in `answer`) is said again right after the one before it (in Chinese, or
    ends it: 我这边不能给出处理方法，不能给出处理方法), or is the answer's last words, without a stop, repeating the start
    of an earlier clause (a reply cut off: "Checkout will show it. Checkout will"). `said`: the clauses before it."""
    if not said:
        return False
    # the cheap tests first (a clause's words counted for every clause cost 2.7 µs over a summary)
    if (said[-1] == part or not part.isascii() and said[-1].endswith(part)) and _long_enough(part):
        return True
    return (not answer.rstrip().endswith(_STOPS) and not answer[end:].strip() and _cut_long_enough(part)
            and any(len(earlier) > len(part) and earlier.startswith(part) for earlier in said))


def _cut_long_enough(unit: str) -> bool:
    """A fragment cut off of two words or more ("Checkout will"; "Questi" may be a text cut where it was read), in
    Chinese of two characters (不能给)."""
    return len(_HAN.findall(unit)) >= 2 if not unit.isascii() else len(unit.split()) >= 2


def _long_enough(unit: str) -> bool:
    return len(_HAN.findall(unit)) >= _MIN_HAN if not unit.isascii() else len(unit.split()) >= _MIN_WORDS


# The question said back in its own form: an auxiliary before its subject, or a question word before an auxiliary
_ASKS_BACK = re.compile(
    r"^\W*(?:(?:do|does|did|is|are|can|could|will|would|should|may)\s+(?:i|you|we|there|they|it|my|your|the|this|that)\b"
    r"|(?:how(?:\s+(?:long|much|many|soon|often))?|what|when|where|why)\s+(?:do|does|did|is|are|can|could|will|would|should)\s+"
    r"(?:i|you|we|there|they|it|my|your|the|this|that)\b)"
    r"[^,;:]*$", re.IGNORECASE)


# What may open such a question: \W* takes no letter, so a clause that opens with an ASCII letter or digit other than
# these, or with a Chinese character, is none (the pattern's match, on every clause, cost more than this test)
_ASK_OPENINGS = frozenset("dDiIaAcCwWsSmMhH")


def asks_back(text: str) -> bool:
    """Whether an English clause is a question in its form, its question mark left out ("Do you take PayPal.")."""
    opening = text[:1]
    if opening not in _ASK_OPENINGS and (opening.isascii() and (opening.isalnum() or opening == "_")
                                         or "\u4e00" <= opening <= "\u9fff"):
        return False
    return _ASKS_BACK.match(text) is not None


# A matter named, then left: before an ellipsis ("Gift card validity... I must leave that to the team"), or a list
# item's title alone on its line ("1. Trade-in conditions" above the item's text)
_ITEM_MARK = re.compile(r"[^\S\n]*(?:\d{1,2}[.)]|[-*•])[^\S\n]*")
_TITLE_END = re.compile(r"[^\S\n]*[:：]?[^\S\n]*\n[^\S\n]*\S")
_DIGIT = re.compile(r"\d")


def names_a_matter(answer: str, start: int, end: int) -> bool:
    """Whether the answer's text from `start` to `end` stands where a matter is named and left: before an ellipsis, or
    as a list item's title on its own line with a line after it (scorers/refusal.py checks it names only a matter). A
    number in it says something: never."""
    if answer.startswith(("...", "…", "，，"), end):
        return not _DIGIT.search(answer, start, end)
    if _TITLE_END.match(answer, end) is None:  # the line's end, a line after it
        return False
    return _ITEM_MARK.fullmatch(answer, answer.rfind("\n", 0, start) + 1, start) is not None and not _DIGIT.search(
        answer, start, end)


# The object put first, the sources named before it: "The context is about price drops, competitor matching it does
# not mention" (tried apart, after its words: in refusal.py's _SUBJECT_LED it was tried at every position of a clause)
_OBJECT_FIRST = re.compile(rf"\b{SOURCE_NOUN}\b[^.;:!?]{{0,100}}?,[^,.;:!?]{{1,40}}?\b(?:it|they)\s+(?:does|do)\s*{NOT}\s+"
                           rf"{SAY}\W*$", re.IGNORECASE)


_SAYING = frozenset("mention cover say include specify state address discuss list describe explain show detail tell "
                    "contain give provide".split())  # the clause's last word (object_first's gate)


def object_first(text: str) -> re.Match[str] | None:
    """The sources' silence on an object put first (a learner's word order); None when the clause has none."""
    words = text.rstrip(" .!?\"'”").rsplit(None, 1)
    return _OBJECT_FIRST.search(text) if words and words[-1].lower() in _SAYING else None


# -- the speaker's own rules or instructions --------------------------------------------------------------------
_EN_RULES = (r"(?:(?:according\s+to|(?:as\s+)?per|under|following|by|based\s+on)\s+(?:my|the\s+system)\s+(?:rules?|"
             r"instructions?|guidelines?|directions?|prompt)|(?:as\s+)?per\s+instructions?|as\s+(?:i\s+(?:was|am)\s+|i['’]m\s+)?"
             r"instructed|my\s+(?:rules?|instructions?|guidelines?)(?:\s+(?:says?|tells?\s+me|states?|is|are))?(?:\s+that)?|"
             r"the\s+system\s+prompt\s+(?:says?|tells?\s+me))")
# What the rules restrict: the speaker to its sources, or from an act; an order of the rules'; a matter kept for others
_EN_RESTRICTED = (
    rf"(?:i|we)\s+(?:only\s+|just\s+|must\s+|have\s+to\s+|need\s+to\s+|should\s+|can\s+|may\s+)*(?:only\s+)?(?:use|stick\s+to|"
    rf"rely\s+on|go\s+by|answer\s+from|draw\s+on|work\s+from|stay\s+within|keep\s+to|answer\s+only\s+from)\s+"
    rf"(?:(?:the|my|what|is\s+in)\s+)*(?:{SOURCE}|texts?|given\s+\w+|provided\s+\w+)\b"
    r"|(?:i|we)\s+(?:\w+\s+){0,2}?(?:do\s*n['’]?t|do\s+not|dont|can\s*n['’]?t|cannot|can\s+not|must\s*n['’]?t|must\s+not|"
    r"should\s*n['’]?t|should\s+not|wo\s*n['’]?t|will\s+not|am\s+not|['’]m\s+not|may\s+not|never|not)\b|"
    r"(?:i|we)\s+(?:must\s+|have\s+to\s+|should\s+)?(?:stay|keep|remain)\s+(?:silent|quiet|out)\b|"
    r"(?:do\s*n['’]?t|do\s+not|never|not\s+to)\s+(?:\w+\s+){0,2}?(?:make\s+up|guess|speculate|invent|answer|say|discuss|"
    r"give|quote|comment)\b|(?:only\s+)?answer\s+only\b|only\s+(?:answer|use|rely)\b"
    r"|[^.;!?]{1,60}?\b(?:is|are|go(?:es)?|belongs?)\s+(?:only\s+)?(?:for|to)\s+(?:an?\s+|the\s+|our\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:agents?|team|staff|humans?|colleagues?|specialists?|desk|department|representatives?|person)\b")
_EN_RULED = re.compile(rf"(?:^(?:[^\W\d_]{{2,12}}\s*[:：]\s*)?|\b(?:and|so|but)\s+)\W*{_EN_RULES}\W*(?:{_EN_RESTRICTED})", re.IGNORECASE)
# "outside of what the system prompt let me discuss": the topic put outside what the speaker is let say
_EN_LET_ME = re.compile(r"\b(?:outside|beyond)\s+(?:of\s+)?what\s+[^.;:!?]{0,40}?\b(?:lets?|allows?|permits?)\s+me\s+"
                        r"(?:to\s+)?(?:discuss|answer|talk|say|cover)\b",
                        re.IGNORECASE)
# The speaker abstaining in a learner's words: "I stay out of that", "I leave it open", "I better not to guess"
_EN_ABSTAINS = re.compile(
    r"\bi\s+(?:will\s+|['’]ll\s+|must\s+|have\s+to\s+|should\s+|prefer\s+to\s+)?(?:stay|keep|remain)\s+(?:out\s+of|silent\s+on|"
    r"quiet\s+on)\s+(?:it|that|this|those|them)\b|\bi\s+(?:will\s+|['’]ll\s+)?leave\s+(?:it|that|this)(?:\s+one)?\s+"
    r"(?:open|unanswered)\b|\b(?:it['’]?s|it\s+is)\s+not\s+my\s+place\s+to\s+(?:say|judge|decide|"
    r"comment|answer|tell)\b|\bi(?:['’]d|\s+had)?\s+better\s+not\s+(?:to\s+)?(?:guess|speculate|say|answer|comment)\b",
    re.IGNORECASE)
_ZH_RULES = (r"(?:(?:按照|依照|遵照|根据|依据|按)(?:我的)?(?:要求|指示|规则|规定|设定|(?i:instructions?|rules?))|"
             r"我的(?:规则|指示|设定|(?i:instructions?|rules?|guidelines?))|(?i:according\s+to\s+my\s+rules?))")
_ZH_RESTRICTED = (r"(?:我)?(?:只(?:能|会|允许)?|仅)(?:根据|依据|用|使用|按照|基于|参考|回答)|只允许|"
                  r"(?:我)?(?:这边)?(?:不|不能|不会|无法|没法)(?:作|做|能)?(?:回应|回答|讨论|答复|透露|乱说|乱讲|说|报|确认)")
_ZH_RULED = re.compile(rf"{_ZH_RULES}[，,\s]*(?:{_ZH_RESTRICTED})")
# The gate's phrases: each pattern below needs one (a group of the refusal gate's crate call cost 5 µs an answer; a
# few substrings first, then these, 2-3)
_RULE_PHRASES = (
    "my rules", "my rule", "my instructions", "my instruction", "my guidelines", "my guideline", "my directions",
    "system prompt", "as instructed", "was instructed", "am instructed", "been instructed", "per instruction",
    "per instructions", "stay out", "stay silent", "stay quiet", "keep out", "keep quiet", "keep silent", "remain silent",
    "remain quiet", "leave it", "leave that", "leave this", "better not", "my place", "me discuss", "me answer",
    "me talk", "me say", "me cover")
_ZH_RULE_WORDS = ("要求", "指示", "规则", "规定", "设定", "instruct", "rule", "guideline")
# The English phrases' gate: a few substrings first, then the phrases; each looked for in the crate, one scan of the
# text a set (nine `in` scans of a FaithBench summary cost 4-5 µs, on every answer)
_RULE_KEYS = Substrings(("my rule", "instruct", "my guideline", "prompt", "stay ", "keep ", "leave ", "better not",
                         "my place"))
_RULE_PHRASE_SET = Substrings(_RULE_PHRASES)


def answer_may_be_ruled(answer: str) -> bool:
    """ruled()'s gate over an answer: the speaker's own rules or its abstaining named (an ASCII answer lower-cased in
    the crate, not made again as a str)."""
    if not answer.isascii():
        lower = answer.lower()
        return any(word in lower for word in _ZH_RULE_WORDS)
    return bool(_RULE_KEYS.in_lowered(answer)) and bool(_RULE_PHRASE_SET.in_lowered(answer))


def ruled(text: str) -> tuple[int, int] | None:
    """Where a clause's decline by the speaker's own rules (or its abstaining) starts and ends; None when it has
    none."""
    for pattern in (_ZH_RULED, _EN_RULED, _EN_LET_ME, _EN_ABSTAINS):
        found = pattern.search(text)
        if found is not None:
            return found.span()
    return None
