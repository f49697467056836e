"""Deferrals whose subject is the matter asked about: the speaker leaves it to someone else ("Whether your tablet
qualifies, our returns team will need to confirm", "For your case, I'd want a colleague to check", "The delivery charge
is something I'd have to leave to our team", "I'd rather let our support team look into it") or says it is a gap in
what they have ("Holiday opening hours are a gap in what I've got"). Such a clause claims nothing about the world:
scorers/refusal.py reads it as a refusal. A team's service stays a claim ("our returns team will confirm it within 2
days" defers nothing: no "need to", no matter put first), and so does a condition ("Whether it qualifies depends on the
14-day window": no one it is left to).
"""

from __future__ import annotations

import re

from ragpulse.scorers.handoffs import ZH_KEYS, hands_off
from ragpulse.scorers.refusal_zh import TOPIC
from ragpulse.scorers.text import clause, clauses

_WHO = (r"(?:team|desk|department|colleagues?|specialists?|agents?|staff|advisors?|advisers?|representatives?|people|"
        r"folks|person|someone|human|centre|center|support|store|helpdesk|helpline|hotline|service|office)")
_SOMEONE = rf"(?:(?:a|an|our|the|your|one\s+of\s+our)\s+(?:[\w'’-]+\s+){{0,2}}?{_WHO}|someone|somebody|a\s+human)"
# The speaker's own deferral, a refusal wherever it stands: "I'd want a colleague to check", "I'll need a colleague to
# process it", "I'd have to leave that to our team", "I'll need to pass it to our team", "I'd rather let our support
# team look into your account", "I'd have to check with the team"
_SPEAKER_DEFERS = (
    rf"\bi(?:['’]d|\s+would|['’]ll|\s+will)\s+(?:want|like|prefer|need|rather\s+have|have\s+to\s+get)\s+{_SOMEONE}\s+to\s+"
    r"(?:check|confirm|verify|look|review|decide|assess|process|handle|go\s+over)\b",
    r"\bi(?:['’]d|\s+would|['’]ll|\s+will)\s+(?:have\s+to\s+|need\s+to\s+)?(?:leave|pass)\s+(?:[\w'’-]+\s+){0,8}?"
    r"(?:to|for|on\s+to|over\s+to)\s+(?:our|the|a|an|your)\s+(?:[\w'’-]+\s+){0,2}?" + _WHO + r"\b",
    rf"\bi(?:['’]d|\s+would)\s+rather\s+(?:let|have)\s+{_SOMEONE}\b",
    r"\bi(?:['’]d|\s+would|['’]ll|\s+will)\s+(?:have|need)\s+to\s+(?:double[-\s]?check|check|confirm|verify)\s+(?:that\s+|this\s+|it\s+)?"
    rf"with\s+{_SOMEONE}\b",
    # a hand-over in a few words: "Let me pass you to a specialist for that", "Best to ring the Berlin store directly"
    rf"\blet\s+me\s+(?:pass|transfer|put|hand|connect|forward)\s+you\s+(?:over\s+|through\s+)?(?:to|with)\s+{_SOMEONE}\b",
    rf"^\W*(?:it['’]?s\s+|you['’]?d\s+)?(?:best|better)\s+(?:off\s+)?(?:to\s+)?(?:ring|call|phone|contact|ask|email|"
    rf"check\s+with|speak\s+(?:to|with)|talk\s+to)\s+{_SOMEONE}\b",
    # a gap in what the speaker has ("are a gap in what I've got", "a blind spot in my notes")
    r"\b(?:is|are)\s+(?:a|an)\s+(?:\w+\s+)?(?:gap|hole|blind\s+spot)\s+in\s+(?:what\s+(?:i|we)\b|my\b|our\s+(?:notes|info|"
    r"information|records|guides?|references?)\b)",
)
# Another's act, a deferral only after the matter put first: "Whether it qualifies, our returns team will need to
# confirm", "… is something our loyalty team would need to confirm", "Whether another option applies, I'd suggest
# speaking with our support team", "For the balance on your card, kindly contact our helpdesk"
_OTHERS_DEFER = (
    rf"{_SOMEONE}\s+(?:will|would|['’]ll|['’]d|may|might)\s+(?:need|have)\s+to\s+(?:confirm|check|verify|decide|look|review|"
    r"assess|advise)\b",
    rf"(?:i(?:['’]d|\s+would)\s+(?:suggest|recommend)\s+|(?:please|kindly)\s+)(?:speaking|talking|checking|getting\s+in\s+touch|"
    rf"contact(?:ing)?|reach(?:ing)?\s+out|speak|talk|check|get\s+in\s+touch)\b(?:\s+(?:to|with))?\s+{_SOMEONE}\b",
)
# The matter put first: an embedded question or a condition before a comma, "For your case," / "For the status of
# …,", or the topic as the subject of "is something"
_FRONTED = (r"^\W*(?:(?:whether|if|how|what|which|when)\b[^;\n]{1,140}?,|(?:for|as\s+for|regarding|about)\s+(?:your|the)\b"
            r"[^,;\n]{1,80},|[^;\n]{1,140}?\b(?:is|are)\s+(?:something|one|a\s+(?:question|thing|matter))(?:\s+that)?)\s*")
# ^ at each line's start: the answer's gate reads its sentences one a line
_DEFERRAL = re.compile(rf"(?i:{'|'.join(_SPEAKER_DEFERS)}|{_FRONTED}(?:{'|'.join(_OTHERS_DEFER)}))", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Every shape names someone (_WHO) or a gap, and holds one of _PHRASES: an answer without both is spared the pattern
# (90 µs over a summary's 541 characters), its words looked up in the crate first, in the refusal reading's one call
# (scorers/refusal_gate.py: 1.6 µs; the phrases in Python: 4)
NAMED_WORDS = frozenset("team desk department colleague colleagues specialist specialists agent agents staff advisor "
                        "advisors adviser advisers representative representatives people folks person someone somebody "
                        "human centre center support store helpdesk helpline hotline service office gap hole blind".split())
NAMED_PARTS = "".join(chr(code) for code in range(128) if not chr(code).isalnum())
_PHRASES = ("i'd", "i’d", "i'll", "i’ll", "i would", "i will", "gap in", "hole in", "blind spot", "need to", "have to",
            "kindly", "please", "let me", "best", "better")


def may_defer(lower: str, named: bool) -> bool:
    """Whether a lower-cased answer holds a deferral anywhere (the refusal reading's gate). `named`: whether it holds a
    word of NAMED_WORDS (the crate's lookup, scorers/refusal_gate.py)."""
    return named and any(phrase in lower for phrase in _PHRASES) and (
        _DEFERRAL.search(_SENTENCE_END.sub("\n", lower)) is not None)


def deferral(text: str) -> int | None:
    """Where a clause's deferral ends; None when it defers nothing. Read only in an answer that defers (may_defer)."""
    found = _DEFERRAL.search(text)
    return None if found is None else found.end()


# The matter put first, then taken up again by the refusal's object: "Matching other retailers' prices, I'm not sure on
# this one"
_RESUMED = re.compile(r"\s+(?:on|about|of|with)\s+(?:this|that|it)(?:\s+one)?\b", re.IGNORECASE)


def resumed(text: str, end: int, head: str) -> bool:
    """Whether the refusal ending at `end` takes up again the matter its `head` put first, before a comma."""
    return head.rstrip().endswith(",") and _RESUMED.match(text, end) is not None


def left_to_others(text: str) -> bool:
    """Whether a Chinese clause leaves the matter named before it to someone else (关于配送范围，建议您咨询人工客服; 保固范围
    的判定，还是由维修中心来回复比较妥当): with that topic, a refusal. Never with a number of its own (建议您在30天内申请退货,
    advice with a claim, is no hand-off either)."""
    return hands_off(text, False) and not clause(text).quantities


def leaves_a_topic(answer: str) -> bool:
    """Whether a Chinese answer with no cue of declining names a topic in a clause of its own and leaves it to someone
    else in the next (免运门槛的部分，麻烦您直接洽询客服人员确认): the refusal reading's gate. Only an answer holding a word
    of a hand-off is split into its clauses."""
    if ZH_KEYS.search(answer) is None:
        return False
    parts = clauses(answer)
    return any(TOPIC.search(topic) and left_to_others(then) for topic, then in zip(parts, parts[1:]))
