"""A clause with a refusal's shape only (scorers/refusal.py reads the rest): the speaker ("I", 我) with a negated
predicate, or the sources with a negation, which the patterns do not know ("I can't promise a delivery day", "the guides
leave it open", 我对这个没底). Claims could look alike, so the judge confirms them: such a clause refuses unless the context
supports it (judging/local_judge.py). What the speaker says it knows is a claim ("I only know that …")."""

from __future__ import annotations

import re

from ragpulse.scorers import refusal_zh as zh
from ragpulse.scorers.declines import letter_runs
from ragpulse.scorers.refusal_gate import ANCHORS, CJK
from ragpulse.scorers.refusal_gate import may_refuse as _may_refuse
from ragpulse.scorers.refusal_words import HEDGE, SOURCE_NOUN
from ragpulse.scorers.text import real_negators

# What the speaker does know starts a claim too ("I don't know, all I know is that …").
EN_KNOWN = (r"(?:(?:all|what)\s+i\s+(?:\w+\s+)?know\b|i\s+(?:(?:just|only|do|also|still|certainly|definitely)\s+)*"
            r"know\b|as\s+far\s+as\s+i\s+(?:know|can\s+tell)\b|from\s+what\s+i\s+(?:know|read|remember|recall)\b|"
            r"i\s*(?:have\s+|['’]ve\s+)?(?:read|heard)\s+that\b|i\s+(?:remember|recall)\s+that\b|"
            r"what\s+i\s+(?:can|do)\s+(?:tell\s+you|say|confirm)\b|i\s+can\s+(?:tell\s+you|say|confirm)\s+that\b|"
            # "I'm sorry to say that phones with a broken display can't be accepted": the news, a claim
            r"i\s*(?:['’]m|am)\s+(?:sorry|afraid)\s+to\s+(?:say|tell\s+you|report|inform\s+you)\b|"
            r"i\s+regret\s+to\s+(?:say|tell\s+you|inform\s+you)\b)")
# A clause that says what the speaker knows claims what follows ("I just know that it wasn't built by the Romans"),
# unless it is none ("I know nothing about it").
_EN_KNOWN_LEAD = re.compile(rf"^(?:{HEDGE}[\s,;:!.—–-]*)*{EN_KNOWN}(?!\s+(?:nothing|little|very\s+little|next\s+to))"
                            r"(?:\s+(?:is|was))?(?:\s+(?:that|of))?", re.IGNORECASE)
_CUE = (r"n['’]t\b|\b(?:not|no|nothing|none|never|cannot|neither|nor|without|lacks?|beyond|outside|unsure|uncertain|unclear|"
        r"unaware|unable|unfamiliar|silent|mum|quiet|vague|insufficient|missing|open)\b")
_EN_MAYBE_WHO = re.compile(rf"\b(?:i|me|my|myself)\b|\b{SOURCE_NOUN}\b", re.IGNORECASE)
_EN_MAYBE_CUE = re.compile(_CUE, re.IGNORECASE)
# "I didn't know that …" and "I had no idea …" say that what follows is so; "I don't think …" is an opinion; "we"
# speaks for the shop: "We don't ship to Hawaii" is a claim
_EN_NOT_MAYBE = re.compile(r"\b(?:we|us)\b|\bi\s*(?:did\s*n['’]t|did\s+not|never)\s+(?:know|reali[sz]e|thought)\b|"
                           r"\bi\s+had\s+no\s+idea\b|\bi\s*(?:do\s*n['’]t|do\s+not)\s+(?:think|believe|like|want|need|"
                           r"mind|recommend|suggest|agree|expect|care)\b|"
                           r"\bi\s*(?:ca\s*n['’]t|cannot|can\s+not)\s+(?:even\s+)?(?:wait|believe|imagine|stand)\b", re.IGNORECASE)
_ZH_MAYBE = re.compile(rf"我(?![们国省市县区校军党])[^，。；！？]*?[不没无未难缺](?!建议|认为|觉得|推荐|是)|{zh.SOURCE}[^，。；！？]*?[不没无未缺]")


# A clause of the speaker's with a negation declines only when it speaks of answering, knowing or the sources: "I'm not
# a fan of them" and "I never watched it" are the speaker's story, claims (the gates: scorers/refusal_gate.py)
_ABOUT_ANSWERING = (ANCHORS - {"i", "we", "me", "us", "my", "myself", "mine", "there", "here"}
                    | {"light", "available", "quote", "advise", "advice", "know", "knew", "aware", "find", "found", "cover",
                       "covers", "notes", "told", "area", "expertise", "lack", "lacks"})
_INABILITY = re.compile(r"\b(?:can['’]?t|cannot|can\s+not|couldn['’]?t|could\s+not|unable)\b", re.IGNORECASE)


def maybe(text: str) -> bool:
    """A clause with a refusal's shape only (the speaker or the sources with a negation): the judge decides. What
    the speaker says it knows is a claim ("I only know that it wasn't built by the Romans")."""
    if not _may_refuse(text):
        return False
    if CJK.search(text):
        text = zh.KNOWN_LEAD.sub("", text, count=1)
        return _ZH_MAYBE.search(real_negators(text)) is not None  # 我的看法不同: no negation
    text = _EN_KNOWN_LEAD.sub("", text, count=1)
    return (_EN_MAYBE_WHO.search(text) is not None and _EN_MAYBE_CUE.search(text) is not None
            and _EN_NOT_MAYBE.search(text) is None and (not _ABOUT_ANSWERING.isdisjoint(letter_runs(text.lower())) or _INABILITY.search(text) is not None))
