"""Refusals recognised by what they are: clauses that claim nothing about the world and say the answer cannot be
given, in English and Chinese, whatever their wording.

The fallback phrase rules (config/fallback_phrases.yaml) list phrasings; this reads a clause's structure:
- the speaker's inability or ignorance: "I" with a negated verb of knowing or answering ("I can't tell", "I'm not
  sure", "I have no idea", "isn't something I can see", "unclear to me"), "we" only with knowing ("we don't know");
- the sources' silence: "the context / documents / knowledge base / articles…" with a negated verb of saying ("don't
  mention", "has nothing about", "is silent on"), a passive of saying ("isn't specified", "not covered in my sources"),
  "there is no mention / information…", "outside what the documents cover";
- Chinese: 我 with 不知道 不清楚 说不准 查不到…, 无法/没法 with a verb of knowing (确定 判断 回答…), the sources
  (资料 文档 知识库 上下文…) with 没有 未提及 没写 不包含…, 没有相关信息, 超出…范围.
- idioms of ignorance: "beats me", "your guess is as good as mine", "I'd only be guessing", "can't say for sure";
  不好说, 答不上来, 吃不准, 心里没数 (with a speaker, or a failed saying that opens or closes the clause);
- what the speaker needs before it answers ("I'll need your order number first", 麻烦先把订单号发给小助手), a system's
  notice ("Something went wrong on my end", "Try again in a bit", 系统繁忙, 网络开小差), the bot of itself (小助手说了不算,
  做不了主, 卡壳了, 不归小助手管);
- an answer template's labels and metadata, its answer field's declining value ("**Answer:** N/A", 依据缺失), the
  assistant in the third person and the retrieval named as the gap (scorers/templates.py).
- an agent-assist copilot's output: its drafts and what it tells the customer read as claims, the agent's notes,
  metadata, guidance about the conversation and knowledge-gap notes as refusals (scorers/copilot.py).
A clause is read as a whole: what opens it (an apology, "Honestly", a topic: "As for gift wrapping", 关于学生优惠,
会员能否中途退订) belongs to the refusal; what follows it and says something about the world is a claim of its own,
whatever the connective ("I couldn't find the exact policy, but returns are free for 90 days", "I really don't know,
I just know that …", "all I know is …", 不过, 只知道, 据我所知: the second part is judged). In an answer that refuses,
its questions ("Would you like an agent?") and its referrals ("Please contact our support team") are no claims
either. A clause with the shape only loosely (the speaker or the sources with a negation: "I can't promise a delivery
day", 我对这个没底) refuses unless the context supports it (the judge decides: judging/local_judge.py); "we" speaks
for the shop ("We don't ship to Hawaii" is a claim). Measured on refusals and partial refusals written for it
(tests/data/refusals_*.jsonl, tests/test_local_judge_refusal_sets.py, docs/judging.md, Refusals).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragpulse.scorers import refusal_zh as zh
from ragpulse.scorers import casual
from ragpulse.scorers.deferrals import deferral, left_to_others, may_defer, resumed, said_of_a_hand_over
from ragpulse.scorers.own_sources import THIS_POINT, names_own_sources, of_own_sources
from ragpulse.scorers.answer_form import as_said, claim_text, in_own_words, unformed
from ragpulse.scorers.copilot import copilot, is_copilot
from ragpulse.scorers.declines import PRESUPPOSED_LEAD, cued
from ragpulse.scorers.refusal_gate import CJK, answer_may_refuse, named, needs_first
from ragpulse.scorers.refusal_gate import may_refuse as _may_refuse
from ragpulse.scorers.small_models import (answer_may_be_ruled, asks_back, names_a_matter, object_first, only_tokens,
                                           ruled, said_again)
from ragpulse.scorers.refusal_shape import EN_KNOWN, maybe
from ragpulse.scorers.refusal_words import (BE, BE_NOT, HEDGE, HELD, INFO, KNOW, LEAD, MODIFIERS, NEEDS_FIRST, NOT,
                                             NOTICE, RELATIVE_HEAD, RESERVED, SAY, SOURCE, SOURCE_NOUN)
from ragpulse.scorers.templates import is_template, names_a_role, role_declines, template
from ragpulse.scorers.text import clause, clauses, is_chatter, sentences

# -- English ------------------------------------------------------------------------------------------------------

# Idioms of ignorance, each a refusal alone ("Beats me", "Your guess is as good as mine", "I'd only be guessing",
# "Haven't the faintest idea", "Can't say for sure"); subjectless ones only where the clause starts.
_EN_IDIOM = "|".join((
    rf"{LEAD}(?:(?:that|it|this)\s+)?(?:beats|search)\s+me\b(?!\s+(?:by|to|at|in)\b)",
    r"\byour\s+guess\s+is\s+as\s+good\s+as\s+mine\b",
    r"\byou(?:['’]ve|\s+have)?\s+(?:got|stumped)\s+me(?=\s*$|\s+(?:there|on\s+th))",
    r"\bi(?:['’]d|\s+would)\s+(?:only\s+|just\s+|merely\s+|simply\s+|really\s+)?"
    r"(?:be\s+(?:guessing|speculating)|have\s+to\s+guess)\b|\bi['’]?m\s+not\s+(?:gonna|going\s+to)\s+(?:guess|speculate)\b",
    rf"(?:\bi\s*|{LEAD})(?:do\s*n['’]t\s+have|have\s*n['’]t(?:\s+got)?|['’]ve\s+not(?:\s+got)?|"
    r"have\s+not(?:\s+got)?|not)\s+(?:(?:an?|the|any)\s+(?:(?:faintest|foggiest|slightest|least)\s+)?"
    r"(?:idea|clue|notion)|the\s+(?:faintest|foggiest))\b",
    rf"{LEAD}(?:ca|can|could|wo|would|did)\s*(?:n['’]?t|not)\s+(?:really\s+|honestly\s+)?"
    r"(?:say|tell|answer|help|confirm|comment|speak|find|locate)\b(?!\s+enough)",
    r"\bi(?:['’]ll|\s+will|['’]d|\s+would|\s+must)?\s+(?:have\s+to\s+|need\s+to\s+)?pass\s+on\s+(?:it|that|this)(?:\s+one)?\s*$",
    # what the speaker would have to check first, so does not say ("Delivery times are something I'd need to double-check")
    r"\bi(?:['’]d|\s+would)\s+(?:first\s+)?need\s+to\s+(?:double[-\s]?check|check|verify|confirm)\b",
))
# Opened by the speaker or the sources: what comes before in the clause must be an opening, not a claim.
_SUBJECT_LED = re.compile("|".join((
    _EN_IDIOM,
    # "I didn't know that …" and "I had no idea …" say that what follows is so: no refusal
    # "I really don't know", "i dont know"
    r"\bi\b\s*(?:(?:just|\w+ly)\s+)?"
    r"(?:(?:do|ca|can|could|wo|would|will|['’]ll)?\s*(?:n['’]?t|not)\s+(?:really\s+|actually\s+|exactly\s+|"
    r"quite\s+)?know\b"
    rf"|(?:(?:do|did|ca|can|could|wo|would|will|['’]ll|should|must)?\s*{NOT}|dont|didnt|cant|wont|couldnt)"  # texting: "i dont have any info"
    rf"\s+(?:really\s+|actually\s+|exactly\s+|quite\s+)?(?:{KNOW}\b|have\s+(?:the|that|this|those|these|such|your)\b"
    r"|(?:have|possess|hold)\s+(?:an?\s+|any\s+|enough\s+|much\s+|specific\s+|more\s+|further\s+|exact\s+|"
    rf"reliable\s+)?(?:[\w-]+\s+){{0,2}}?{HELD}))",
    r"\bi\s*(?:['’]m|am|was)\s*(?:really\s+|honestly\s+|just\s+|therefore\s+|also\s+)?(?:(?:not|n['’]t)\s+(?:really\s+|quite\s+|"
    r"entirely\s+|totally\s+|actually\s+)?(?:sure|certain|confident|familiar|aware|able|in\s+a\s+position|"
    r"the\s+right\s+(?:source|person|place)|(?:authori[sz]ed|permitted|allowed)\s+to\s+(?:share|disclose|give|provide|discuss|"
    r"answer|advise|comment|confirm|release|explain|walk\s+(?:you\s+)?through|go\s+(?:over|through)|describe))|"
    r"unsure|uncertain|unaware|unable|unfamiliar|drawing\s+a\s+blank|at\s+a\s+loss|stumped|in\s+the\s+dark|clueless)\b",
    r"\bi\s+wish\s+i\s+(?:could\s+(?:help|answer|tell|say|assist|be\s+more\s+helpful)|knew|had\s+(?:the\s+|an\s+|more\s+)?"
    r"(?:answer|information|details))\b",
    rf"{LEAD}(?:(?:it|that|this)(?:['’]s|\s+is)\s+)?(?:(?:really|very|pretty|quite)\s+)?(?:hard|difficult|impossible|"
    r"tough|tricky)\s+to\s+(?:say|tell|know|answer)\b(?!\s+(?:no|yes|goodbye)\b)",
    rf"\bi\s*(?:have|['’]ve)\s*(?:n['’]t\s+got\s+(?:any\s+)?(?:[\w-]+\s+){{0,2}}?{HELD}|no\s+(?:idea|clue|way|(?:[\w-]+\s+){{0,2}}?{HELD})|"
    r"nothing\s+(?:on|about|regarding|for)\b)",
    rf"\bi\s+lack\s+(?:the\s+|any\s+|enough\s+|sufficient\s+)?(?:{HELD}|context)",
    r"\bi(?:['’]d|\s+would)\s+rather\s+not\s+(?:guess|say|speculate|quote|state|cite|promise|give\s+(?:you\s+)?(?:\w+\s+){0,2}?(?:estimate|figure|date|terms))",
    # what the speaker will not vouch for: "I'm not going to list requirements that I can't stand behind"
    r"\b(?:i\s*(?:['’]m|am)\s+not\s+going\s+to|i\s*(?:wo|will)\s*(?:n['’]t|not))\s+(?:list|quote|state|give|cite|promise)\b[^.;:!?]{1,60}?"
    r"\b(?:that|which)?\s*i\s*(?:ca|can|could)\s*(?:n['’]t|not)\s+(?:stand\s+behind|vouch\s+for|back\s+up|verify|confirm)\b",
    rf"\bwe\s*(?:do|did|ca|can|could)?\s*{NOT}\s+(?:know|have\s+(?:any\s+|enough\s+|the\s+|specific\s+)?{INFO})",
    rf"{LEAD}(?:not\s+(?:sure|certain)|no\s+(?:idea|clue)|unsure|uncertain|unknown|dunno)\b",
    rf"\b{SOURCE_NOUN}\b[^.;:!?]{{0,60}}?\b(?:do(?:es)?|did|ca|can|could|wo|will|would)?\s*{NOT}\s+(?:\w+\s+){{0,2}}?{SAY}",
    rf"\b{SOURCE_NOUN}\b[^.;:!?]{{0,60}}?\b(?:has|have|had|contains?|includes?|gives?|provides?|offers?|holds?|says?|"
    rf"mentions?)\s+(?:no|nothing|none)\b",
    rf"\b{SOURCE_NOUN}\b[^.;:!?]{{0,60}}?\b(?:silent|empty|unclear|vague|insufficient|inconclusive|lacks?|"
    r"leaves?\s+(?:it\s+|that\s+)?open)\b",
    rf"\bno\s+(?:\w+\s+)?{INFO}\b[^.;:!?]{{0,30}}?\b(?:appears?|is\s+given|exists?)\s+(?:in|within)\s+{SOURCE}\b",
    rf"\bnone\s+of\s+{SOURCE}\b[^.;:!?]{{0,40}}?\b{SAY}",
    rf"\b(?:there(?:['’]s|\s+is|\s+was)\s+)?nothing\s+(?:in|within|from)\s[^.;:!?]{{0,40}}?\b{SOURCE}\b",
    r"\bnothing\s+i\s+(?:found|have|see|can\s+see|could\s+find)\b",
    r"\bnothing\s+(?:came\s+(?:back|up)|turned\s+up|showed\s+up|matched)\b|\bcame\s+back\s+empty\b|\breturned\s+nothing\b|"
    r"[\"']answer[\"']\s*:\s*(?:null|none|\"\")|^\W*(?:answer|resolution|result|outcome)\s*[:：]\s*(?:null|none|n/a)\W*$|"
    r"\bfound\s+(?:nothing|no\s+(?:\w+\s+)?(?:details|information|info|results?))\b",  # a search that found nothing
    # the sources are about something else: "the material I retrieved … is about different subjects", "nothing in it
    # explains how …"
    rf"\b{SOURCE_NOUN}\b[^.;:!?]{{0,40}}?\b(?:is|are|was|were)\s+(?:all\s+)?(?:about|on|for)\s+(?:different|other|unrelated)\s+"
    r"(?:subjects|topics|things|matters|products|questions)\b|\bnothing\s+in\s+(?:it|them|there)\s+(?:explains|covers|mentions|says|"
    r"addresses|describes|tells)\b",
    # a topic or an act the speaker may not take ("we are unable to address billing queries", "I can't process refunds here")
    r"\b(?:i|we)\b[^.;:!?]{0,30}?\b(?:unable|not\s+(?:able|permitted|allowed|authori[sz]ed|in\s+a\s+position)|can['’]?t|cannot|"
    r"could\s*n['’]?t)\s+(?:to\s+)?(?:address|handle|process|discuss|deal\s+with|take|answer|respond\s+to|assist\s+with|"
    r"help\s+with|provide|give|issue|arrange|approve|cancel|change|modify|make)\s+(?:(?:\w+[\s-]+){0,3}?(?:quer(?:y|ies)|enquir(?:y|ies)|"
    r"inquir(?:y|ies)|questions?|requests?|matters|issues|topics?|information|details)\b|[^.;:!?]{0,40}?\b(?:here|in\s+this\s+chat|"
    r"via\s+this\s+(?:chat|assistant|channel)|on\s+my\s+end|over\s+the\s+phone|by\s+(?:phone|text)|on\s+this\s+call)\b)",
    r"\bthere(?:['’]s|\s+is|\s+was)\s+nothing\s+(?:here\b|(?:about|on|regarding)\s)",
    rf"\bthere\s*(?:is|are|was|were|['’]s|does|do|did)?\s*(?:n['’]t|not|no)\b[^.;:!?]{{0,40}}?(?:\b{SOURCE}\b|\b{INFO}\b)",
    rf"\bthere(?:['’]s|\s+is)\s+(?:insufficient|not\s+enough|too\s+little|limited)\s+(?:{INFO}|context)",
    rf"\bno\s+(?:\w+\s+)?{INFO}\b[^.;:!?]{{0,50}}?\b(?:{BE}\s+)?(?:given|provided|available|found|listed|included|mentioned|"
    r"specified|stated)\b",
    rf"\b(?:that|this|such|the\s+requested|the\s+relevant|this\s+kind\s+of)\s+{INFO}\s+{BE_NOT}\s+(?:available|provided|"
    r"given|known)\b",
)), re.IGNORECASE)
_ANCHOR = rf"(?:here|anywhere|(?:in|by|from|within)\s+(?:what\s+)?{SOURCE}|(?:in|by|from)\s+what\s+i\b|to\s+me)"
# A predicate about a topic that comes first ("Sale items aren't mentioned", "Whether Amex works is unclear to me").
_PREDICATE = re.compile("|".join((
    rf"{BE_NOT}\s+(?:\w+\s+)?(?:mentioned|specified|stated|documented|addressed|described|discussed|explained|"
    r"indicated|detailed|answered|clarified)\b",
    rf"{BE_NOT}\s+(?:\w+\s+)?(?:given|provided|listed|included|covered|known|available|clear|verified|confirmed)\s+{_ANCHOR}",
    rf"{BE_NOT}\s+(?:\w+\s+)?covered\s+by\s+anything\s+(?:i|we)\b",
    rf"{BE}\s*{NOT}\s+(?:something|anything|a\s+topic|a\s+question)\s+(?:that\s+)?[^.;:!?]{{0,30}}?"
    rf"(?:\b{SOURCE}\b|\bi\b|\bwe\b)",
    rf"{BE}\s*{NOT}\s+(?:in|within|among|part\s+of)\s+[^.;:!?]{{0,30}}?(?:\b{SOURCE}\b|\bwhat\s+i\s+can\b)",
    rf"{BE}\s+(?:\w+\s+)?(?:missing|absent|omitted)\s+(?:from|in)\s+{SOURCE}\b",
    r"(?:n['’]t|not)\s+(?:clear|known|visible|available|accessible)\s+to\s+(?:me|us)\b",
    r"\b(?:unclear|unknown|unavailable|invisible)\s+to\s+(?:me|us)\b|\bhidden\s+from\s+(?:me|us)\b",
    r"\b(?:an?\s+(?:\w+\s+)?(?:mystery|blank)\s+(?:to|for)|beyond)\s+me\b",
    r"\bthere(?:['’]s|\s+is)\s+no\s+way\s+(?:for\s+me\s+)?(?:of\s+)?(?:to\s+)?(?:know|tell|say|estimate|determine|check)",
    rf"\b(?:outside|beyond)\s+(?:the\s+scope\s+of\s+)?(?:what\s+)?[^.;:!?]{{0,30}}?(?:\b{SOURCE}\b|\bi\s+(?:know|have|can|"
    r"am\s+(?:permitted|allowed|authori[sz]ed|able)))",
    r"\b(?:outside|beyond)\s+(?:the\s+scope\s+of\s+)?(?:my|our)\s+(?:knowledge|expertise|scope|information)\b",
    r"^(?:it|this|that)\s*(?:is|['’]s|was)\s+(?:unclear|not\s+clear|uncertain|unknown|not\s+known|not\s+possible\s+for\s+me)\b",
    r"^not\s+(?:mentioned|specified|stated|covered|addressed|listed|documented)\b",
)), re.IGNORECASE)
_OPENING = re.compile(rf"^(?:[\s,;:—–-]*{HEDGE}\b)*[\s,;:—–-]*$", re.IGNORECASE)
# What may come before "I …" or "the documents …" in a refusal: hedges and a topic ("As for gift wrapping, …").
_HEAD = re.compile(rf"^(?:[\s,;:—–-]*(?:{HEDGE}|{_EN_IDIOM}|"
                   r"(?:as\s+(?:for|to)|for|regarding|concerning|about|when\s+it\s+comes\s+to)"
                   r"\s+[^,;]{1,60},|[^,;.!?]{1,60},\s*(?:this|that)(?=\s)|[^,;]{0,20}\bi\s+check(?:ed)?\b[^,;]{0,40},\s*(?=\w)|whether\s+[^,;]{1,80}|[^,;:.!?]{1,60}:|[^,;.!?]{1,60}\bor\s+not|[^,;.!?]{1,60}\s(?:is|are)\s+(?:something|one(?:\s+of\s+(?:those|the)\s+(?:things|questions|topics))?|a\s+(?:question|topic|matter|subject))(?:\s+that)?|(?:to\s+(?:check|look\s+into|confirm|see|find\s+out)|before\s+i\s+can)\b[^,;.!?]{0,40},|i\s+(?:checked|looked|searched)[^,;]{0,40},|"
                   r"from\s+what\s+i\s+(?:can\s+)?(?:see|know|have|found)|as\s+far\s+as\s+i\s+(?:can\s+tell|know)|"
                   rf"to\s+my\s+knowledge)(?:\b|(?<=,)))*[\s,;:—–-]*(?:(?:that|this)\s+one\s+)?(?:(?:the|my|our|these|those|this|your)\s+(?:[\w-]+\s+){{0,2}})?"
                   rf"(?:{MODIFIERS}\s+)*$", re.IGNORECASE)
# After the refusal, a claim of its own: past a contrast, or a new subject after "and" or a comma ("I'm not sure,
# they have had immense popularity since 1997").
_SUBJECT = r"(?=(?:i|it|it['’]s|they|he|she|we|you|there|this|that|these|those|the|its|their|our|my)\b)"
_EN_TAIL = re.compile(r"\b(?:but|however|even\s+though|though|although|yet|(?<![a-z]\s)still|that\s+said|even\s+so|nevertheless|instead|other\s+than|"
                      rf"except(?:\s+that)?|apart\s+from|besides|only\s+that|just\s+that)\b|[:;]|(?:\band|,)\s+{_SUBJECT}|"
                      rf"(?=\b{EN_KNOWN})", re.IGNORECASE)
# Chat without punctuation: the speaker's negation opens a clause of its own ("… with no interest i dont have anything
# about amex")
_EN_NEW_SPEAKER = re.compile(r"(?<=\w\s)(?=i\s+(?:dont|don['’]t|do\s+not|cant|can['’]t|cannot|couldnt|couldn['’]t|"
                             r"have\s+no|havent|haven['’]t|am\s+not)\b)")
_EN_REFERRAL = re.compile(
    r"^(?:please\s+|pls\s+|plz\s+|kindly\s+|you\s+(?:may|might|can|could|should)\s+(?:want\s+to\s+|wish\s+to\s+)?|"
    r"i\s+(?:would\s+|['’]d\s+)?(?:recommend|suggest)\s+(?:that\s+you\s+)?|feel\s+free\s+to\s+|try\s+|"
    r"it(?:['’]s|\s+is)\s+best\s+to\s+)?(?:contact(?:ing)?|reach(?:ing)?\s+out\s+to|call(?:ing)?|email(?:ing)?|"
    r"ask(?:ing)?|check(?:ing)?\s+w(?:ith|/)?|reach(?:ing)?|speak(?:ing)?\s+(?:to|with)|talk(?:ing)?\s+to|get(?:ting)?\s+in\s+touch\s+with|"
    r"refer(?:ring)?\s+to|consult(?:ing)?|"
    r"messag(?:e|ing)|visit(?:ing)?|hmu|hit\s+up|dm|ping)\b", re.IGNORECASE)  # chat's: "hmu the service centre"

# What a summary says of its source before what the source says: "The passage describes two figures named Francis I"
# claims two figures named Francis I, nothing of a passage.
_EN_META_LEAD = re.compile(
    r"^(?:overall,?\s+)?(?:the|this)\s+(?:provided\s+|given\s+)?(?:passage|text|article|document|context|source|excerpt|"
    r"story|report)\s+(?:also\s+|then\s+|further\s+)?(?:describes|provides|discusses|mentions|highlights|covers|"
    r"focuses\s+on|presents|outlines|summari[sz]es|details|contains|includes|talks\s+about|is\s+about|notes|explains|"
    r"introduces|reports(?:\s+on)?)\s+(?:(?:basic\s+|some\s+|brief\s+)?information\s+(?:about|on)\s+|that\s+)?",
    re.IGNORECASE)
_ZH_TOPIC_EN = re.compile(r"^[\u3400-\u9fff][^A-Za-z，。；！？]{0,20}?\s*(?=[A-Za-z][A-Za-z\s'’]*$)")
_LATIN_WORDS = re.compile(r"[A-Za-z]{2,}\W+[A-Za-z]{2,}\W+[A-Za-z]{2,}")

_PARENTHESES = re.compile(r"[(（][^()（）]{1,200}[)）]")


@dataclass(frozen=True, slots=True)
class Reading:
    """An answer as the judge reads it: the texts to judge as claims, in order, with whether each may be a refusal
    (the judge decides by the context's support), the clauses that refuse, and whether the answer holds a cue of
    declining at all (scorers/declines.py's gate: without one, no clause of it is weighed as declining)."""

    claims: list[str]
    maybe: list[bool]
    refusals: list[str]
    cued: bool = False


def _refusal(text: str, defers: bool = False, first: bool = False, roles: bool = False,
             rules: bool = False) -> tuple[str, str] | None:
    """(what of the clause comes before the refusal and is a claim, what follows it after a "but" and is one);
    None when the clause refuses nothing. `defers`: the answer holds a deferral (read only then: 9 µs a summary);
    `first`: it says what the speaker needs first or is a system's notice (refusal_gate.needs_first); `roles`: it names
    the assistant or the retrieval (scorers/templates.py); `rules`: it names the speaker's own rules or abstains
    (scorers/small_models.py)."""
    if rules and (by_rules := ruled(text)) is not None:  # "According to my rules I must stick to the text"
        head = text[: by_rules[0]].strip(" ,;:—–-，")
        head = "" if not head or _HEAD.match(head) or _FRONTED.fullmatch(head) else head
        return head, _tail(text, by_rules[1], zh.TAIL if CJK.search(text) else _EN_TAIL)
    if roles and (declined := role_declines(text)) is not None:  # "The assistant cannot say", 检索结果未涉及
        return "", _tail(text, declined.end(), zh.TAIL if CJK.search(text) else _EN_TAIL)
    if defers and (deferred := deferral(text)) is not None:  # the matter left to someone else (scorers/deferrals.py)
        return "", _tail(text, deferred, _EN_TAIL)
    first = first and needs_first(text.lower())
    if not first and not _may_refuse(text):
        return None
    if CJK.search(text):
        found = zh.refusal(text)
        if found is None and (topic := _ZH_TOPIC_EN.match(text)) and (english := _refusal(text[topic.end():])):
            return "", english[1]  # a Chinese topic, declined in English (积分转赠这个 not sure)
        if found is not None or not _LATIN_WORDS.search(text):  # else English in a Chinese clause ("sorry 这个 i can't …")
            return None if found is None else (found[0], _tail(text, found[1], zh.TAIL))
    predicate = _PREDICATE.search(text) or casual.declined_matter(text)  # "points math is not my thing" (casual.py)
    if predicate is not None:  # the topic before it belongs to the refusal
        return "", _tail(text, predicate.end(), _EN_TAIL, _CONCESSIVE.match(text) is not None)
    led = _SUBJECT_LED.search(text) or (_RESERVED.search(text) if _RESERVED_KEYS.search(text) else None) or (
        _FIRST.search(text) if first else None) or casual.declined(text)  # "i'm stuck on that", "idk" (casual.py)
    if led is None and (led := object_first(text)) is None:  # "…, competitor matching it does not mention"
        return None
    head = text[: led.start()]
    if _CONCESSIVE.match(head):  # "While I'm unsure about refurbished units, all laptops come with …"
        return "", _tail(text, led.end(), _EN_TAIL, True)
    if _HEAD.match(head) or _RELATIVE_HEAD.search(head) or (_NO_OBJECT.match(text, led.end()) or resumed(text, led.end(), head)) and _FRONTED.fullmatch(head):
        return "", _tail(text, led.end(), _EN_TAIL)
    return head.strip(" ,;:—–-"), _tail(text, led.end(), _EN_TAIL)


# A refusal that ends without its object ("… I am not able to tell", "… I cannot confirm here"): what came before it is
# the object, put first, not a claim
_NO_OBJECT = re.compile(r"(?:\s+to\s+(?:tell|say|confirm|answer|know|find|share|give|help))?(?:\W*(?:here|now|right\s+now|"
                        r"at\s+the\s+moment|at\s+this\s+time|for\s+(?:sure|certain|you)|yet|either|unfortunately|sorry|out|on\s+this\s+(?:line|chat|call)|"
                        r"i['’]m\s+afraid))*\W*$", re.IGNORECASE)
# … when that is a noun phrase ("Shipping countries", "the opening hours of store"), not a clause with its subject or verb
_FRONTED = re.compile(r"\W*(?!.*\b(?:you|we|they|it|he|she|is|are|was|were|have|has|had|can|will|would|do|does|did)\b|.*['’](?:ve|re|s|ll|d)\b)"
                      r"(?:(?:sorry|apologies)(?:\s+for\s+(?:the\s+)?(?:inconvenience|trouble))?\W+)?(?:[\w-]+\W+){0,5}[\w-]+\W*",
                      re.IGNORECASE)


_RELATIVE_HEAD = re.compile(RELATIVE_HEAD, re.IGNORECASE)
# Holding back ("I'm not comfortable interpreting it"): tried apart, after the words it needs (in _SUBJECT_LED, tried at
# every position of every clause, it cost 6% of that search)
_RESERVED = re.compile(RESERVED, re.IGNORECASE)
_RESERVED_KEYS = re.compile(r"comfortable|hold\s+off|sit\s+th|steer\s+clear|\bme\s+to\b", re.IGNORECASE)
# What the speaker needs first and a system's notice, tried apart in an answer that says one (refusal_gate.needs_first)
_FIRST = re.compile(f"{NEEDS_FIRST}|{NOTICE}", re.IGNORECASE)
# A refusal conceded before the claim: "While I'm unsure about refurbished units, all laptops come with …"
_CONCESSIVE = re.compile(r"\W*(?:while|whilst|although|though|even\s+though|whereas|albeit)\b\W*", re.IGNORECASE)


def _tail(text: str, end: int, connector: re.Pattern[str], conceded: bool = False) -> str:
    """What follows a contrast after the refusal: read on its own (it may refuse too). `conceded`: the clause opened
    with "while", "although"…, so the refusal ends at its comma and what follows it is the contrast."""
    after = connector.search(text, end)
    if after is None and conceded and (comma := text.find(",", end)) >= 0:
        return text[comma + 1:].strip(" ,;:—–-，")
    return "" if after is None else text[after.end():].strip(" ,;:—–-，")


def _pieces(text: str, defers: bool = False, first: bool = False, roles: bool = False,
            rules: bool = False) -> list[tuple[str, str]]:
    """A clause as (kind, text): its claims and its refusal."""
    found = _refusal(text, defers, first, roles, rules)
    if found is None:
        return [("claim", text)]
    head, tail = found
    after = _pieces(tail, defers, first, roles, rules) if tail and not _opening_only(tail) else []
    return [("claim", head)] * bool(head) + [("refusal", text)] + after


def _opening_only(text: str) -> bool:
    """An apology or a hedge alone ("Sorry", 很抱歉): no claim."""
    return _en_opening_only(text) if not CJK.search(text) else bool(zh.OPENING.match(text))


# The last words of the hedges (HEDGE) and how the meta lead starts (_EN_META_LEAD): a clause that ends or starts
# otherwise is spared the pattern.
_HEDGE_ENDS = ("sorry", "apologies", "unfortunately", "regrettably", "sadly", "honestly", "frankly", "mm", "well", "oh",
               "ah", "alas", "afraid", "fear", "honest", "clear", "truthfully", "but", "and", "so", "however", "also",
               "ok", "okay", "question", "help", "you")
_META_STARTS = frozenset(("ove", "the", "thi"))


def _en_opening_only(text: str) -> bool:
    end = text.rstrip(" \t\n,;:—–-").lower()
    return (not end or end.endswith(_HEDGE_ENDS)) and _OPENING.match(text) is not None


def _referral(text: str) -> bool:
    """"Please contact our support team", 建议您咨询人工客服: a referral without a number of its own."""
    if CJK.search(text):  # 这一点建议您咨询物流客服: "this point", no number
        return zh.REFERRAL.match(text := THIS_POINT.sub("这", text)) is not None and not clause(text).quantities
    return _EN_REFERRAL.match(text) is not None and not clause(text).quantities


def _sentences(answer: str) -> list[tuple[str, bool]]:
    """The answer's sentences, each with whether it asks (ends in a question mark)."""
    found: list[tuple[str, bool]] = []
    for part in re.split(r"(?<=[?？])", answer):
        parts = sentences(part)
        asks = part.rstrip().endswith(("?", "？"))
        found.extend((sentence, asks and i == len(parts) - 1) for i, sentence in enumerate(parts))
    return found


def read(answer: str, refusing: Sequence[tuple[int, int]] = ()) -> Reading:
    """The answer's clauses to judge, its refusals taken out. `refusing`: spans (character offsets) of phrases
    known to refuse (a fallback rule's matches): the clauses they touch refuse whatever their language."""
    written = answer
    answer = unformed(answer)  # speech, a JSON object, Chinese separators: one character for one, `refusing`'s offsets hold
    if is_template(answer):  # labels and metadata blanked, the answer field's declining value refuses (templates.py)
        answer, declined = template(answer)
        refusing = [*refusing, *declined]
    if is_copilot(answer):  # a copilot's draft told, its guidance to the agent and gap notes refusing (copilot.py)
        answer, guided = copilot(answer)
        refusing = [*refusing, *guided]
    if "(" in answer or "（" in answer:  # "Members earn (sorry, I can't help with that) 2 points": the refusal apart
        answer = _PARENTHESES.sub(_parted, answer)
    said = zh.mandarin(answer)  # Traditional characters and Cantonese read as Mandarin, in the answer's own words
    reading = _read(said, refusing)
    # the claims as judged (without a speaker's fillers), the refusals as written (taken out of the answer's text)
    claims = reading.claims if said == answer else in_own_words(reading.claims, said, answer)
    refusals = reading.refusals if said == written else in_own_words(reading.refusals, said, written)
    return Reading(claims, reading.maybe, refusals, cued(said))  # not replace(): 1 µs an answer


def _read(answer: str, refusing: Sequence[tuple[int, int]]) -> Reading:
    may, met = answer_may_refuse(answer) if not refusing else (True, None)  # met: a word a deferral names (None: unread)
    rules = answer_may_be_ruled(answer)  # the speaker's own rules or its abstaining named (small_models.py)
    # the retrieval declining without a cue word or an anchor ("not answerable from this retrieval set", 在检索范围之外)
    if not may and not (("etriev" in answer or "检索" in answer) and role_declines(answer)) and not (
            rules and any(ruled(part) for part in clauses(answer))):
        # an answer in ASCII is spared a search for Chinese in every clause
        opening, claim = (_en_opening_only, _en_claim) if answer.isascii() else (_opening_only, _claim)
        claims = [text for c in clauses(answer) if not opening(c) and (text := claim(c))]
        return Reading(claims, [False] * len(claims), [])
    written, answer = answer, as_said(answer)  # without <think>…</think>, "um", "I'm I'm" (one for one)
    kinds: list[tuple[str, str]] = []  # (kind, text): claim, maybe, refusal, question, referral, topic
    lower = answer.lower()  # the gate's lookup taken again where the answer is as it was read
    defers = may_defer(lower, met if met is not None and answer == written else named(lower))  # (deferrals.py)
    first = needs_first(lower)  # what the speaker needs first, a system's notice: its clauses read for it only then
    roles = names_a_role(answer)  # the assistant or the retrieval named: its clauses read for them only then (templates.py)
    cursor, sourced, said = 0, False, []  # sources named (own_sources.py); the clauses read (small_models.said_again)
    for sentence, asks in _sentences(answer):
        parts, handed_at = clauses(sentence), -1
        for index, part in enumerate(parts):
            start = answer.find(part, cursor)
            cursor = start + len(part) if start >= 0 else cursor
            if start >= 0 and any(low < start + len(part) and start < high for low, high in refusing):
                kinds.append(("refusal", part))
                continue
            part = claim_text(part)  # without a JSON member's key, a label in brackets or a message's label
            if not part or _opening_only(part) or only_tokens(part) or said_again(part, said, answer, cursor):
                continue  # "</s>" alone, a sentence said again, a reply cut off (small_models.py)
            said.append(part)
            pieces = _pieces(part, defers, first, roles, rules)
            if len(pieces) > 1 or pieces[0][0] == "refusal":
                # "isn't covered by the article I pulled up"; "As instructed I only use the documents": the sources its own
                sourced = sourced or names_own_sources(part) or rules and ruled(part) is not None
                kinds.extend(((of_own_sources(text, sourced) or kind) if kind == "claim" else kind, text) for kind, text in pieces)
            elif index == handed_at:  # a topic named, then left to someone else (scorers/deferrals.py)
                kinds.append(("refusal", part))
            elif asks or asks_back(part):  # "Do you take PayPal." said back (small_models.py)
                kinds.append(("question", part))
            elif start >= 0 and names_a_matter(answer, start, cursor) and (
                    _FRONTED.fullmatch(part) if part.isascii() else zh.names_only(part)):
                kinds.append(("topic", part))  # "Gift card validity... I must leave that to …", a list item's title
            elif kind := of_own_sources(part, sourced):  # what the speaker's sources cover or leave out (own_sources.py)
                kinds.append((kind, part))
                sourced = True
            elif _referral(part):
                kinds.append(("referral", part))
            elif CJK.search(part) and zh.TOPIC.search(part) and index + 1 < len(parts) and (
                    _refusal(parts[index + 1]) or left_to_others(parts[index + 1])):
                kinds.append(("topic", part))
                handed_at = index + 1
            else:
                kinds.append(("claim", part))
    kinds = [piece for kind, text in kinds for piece in (_loose(text) if kind == "claim" else [(kind, text)])]
    refusals = [text for kind, text in kinds if kind == "refusal"]
    if answer is not written:  # the refusals as written: they are taken out of the answer's text
        refusals = in_own_words(refusals, answer, written)
    declines = any(kind in ("refusal", "maybe") for kind, _ in kinds)
    if declines and all(said_of_a_hand_over(text) or _named_only(text) for kind, text in kinds if kind == "claim"):
        # who takes the matter and how, or the matter in a few words ("Trade-in eligibility, hm"), all that is said beside
        # a refusal: no claim (scorers/deferrals.py); beside a claim of its own, read as before
        kinds = [("referral" if kind == "claim" else kind, text) for kind, text in kinds]
    # Without a refusal, questions, referrals and topics are read as before: claims.
    kept = [(_claim(text), kind == "maybe") for kind, text in kinds
            if kind in ("claim", "maybe") or not declines and kind != "refusal"]
    return Reading([text for text, _ in kept if text], [maybe for text, maybe in kept if text], refusals)


def _named_only(text: str) -> bool:
    """A matter named in a few words and a hesitation, no verb and no number ("Trade-in eligibility, hm")."""
    return (text.isascii() and (hesitant := _HESITATION.search(text)) is not None
            and _FRONTED.fullmatch(text[: hesitant.start()]) is not None and not clause(text).quantities)


_HESITATION = re.compile(r"(?<=\w),?\s*(?:h+m+|u+h+|u+m+|e+rm*|let['’]?s\s+see|let\s+me\s+see)\W*$", re.IGNORECASE)


def _parted(parenthesis: re.Match[str]) -> str:
    """A parenthesis that may refuse, between commas instead (one character for one: `refusing`'s offsets hold)."""
    text = parenthesis.group()
    return f"，{text[1:-1]}，" if _may_refuse(text[1:-1]) else text


def _loose(text: str) -> list[tuple[str, str]]:
    """A claim clause as (kind, text): "maybe" where it has a refusal's shape only, up to a contrast or a new subject;
    what follows is read on its own ("I do not have many followers, but I follow a lot of people": a claim)."""
    if not maybe(text):
        return [("claim", text)]
    after = zh.TAIL.search(text) if CJK.search(text) else (_EN_NEW_SPEAKER.search(text) or _EN_TAIL.search(text))
    tail = "" if after is None else text[after.end():].strip(" ,;:—–-，")
    if not tail or after is None or after.start() == 0:
        return [("maybe", text)]
    head = text[: after.start()].strip(" ,;:—–-，")
    rest = [piece for kind, part in _pieces(tail) for piece in (_loose(part) if kind == "claim" else [(kind, part)])]
    if (len(head) < 3 if CJK.search(head) else len(head.split()) < 2) or _opening_only(head):
        # "No, I like …", "Wow, I've never …": no claim before
        return rest
    if text[after.start()] in ":：" and rest and rest[0] == ("maybe", tail) and _FRONTED.fullmatch(head):
        # a field's or a list's label, its value declining ("Value for your tablet: Not something I'll estimate", a
        # table's row; "**Price matching:** not something I can confirm"): the refusal's topic, no claim
        return rest
    return [("maybe" if maybe(head) else "claim", head), *rest]


def _claim(text: str) -> str:
    """A claim without what it says of its source ("The passage describes …") or a leading 但 / 不过 (no content)."""
    return zh.CONTRAST_LEAD.sub("", text, count=1) if CJK.search(text) else _en_claim(text)


def _en_claim(text: str) -> str:
    if text[:2] in ("I ", "i "):
        return PRESUPPOSED_LEAD.sub("", text, count=1)
    return text if text[:3].lower() not in _META_STARTS else _EN_META_LEAD.sub("", text, count=1)


def substantive(texts: Sequence[str]) -> bool:
    """Whether any of these would be a claim to judge: a term or a number, not conversation."""
    return any((parsed := clause(text)).terms and not is_chatter(parsed) or parsed.quantities for text in texts)
