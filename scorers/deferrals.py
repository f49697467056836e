"""Deferrals whose subject is the matter asked about: the speaker leaves it to someone else ("Whether your tablet
qualifies, our returns team will need to confirm", "For your case, I'd want a colleague to check", "The delivery charge
is something I'd have to leave to our team", "I'd rather let our support team look into it") or says it is a gap in
what they have ("Holiday opening hours are a gap in what I've got"), or puts the matter to someone ("Anything beyond
that is best asked of our support team", "Questions about your refund should go to billing", "Our returns team handles
that", 发票相关事宜由财务同事负责, 积分规则的解释权在会员运营团队, 退货时限这块建议您直接咨询售后同事, 差价的事情 please
contact our support team). Such a clause claims nothing about the world: scorers/refusal.py reads it as a refusal; and
what is said of the hand-over beside it (who takes it and how: "They'll be able to give you a time frame", 他们会根据您的
订单给出准确答复, 稍后会有专人联系您) is no claim when nothing else is said. A team's service stays a claim ("our returns team will confirm it within 2
days" defers nothing: no "need to", no matter put first), and so does a condition ("Whether it qualifies depends on the
14-day window": no one it is left to).
"""

from __future__ import annotations

import re

from ragpulse.scorers.handoffs import ZH_KEYS, hands_off
from ragpulse.scorers.refusal_zh import TOPIC
from ragpulse.scorers.text import clause, clauses

_WHO = (r"(?:team|desk|department|colleagues?|specialists?|agents?|staff|advisors?|advisers?|representatives?|people|"
        r"folks|person|someone|human|centre|center|support|store|helpdesk|helpline|hotline|service|office|technicians?|"
        r"engineers?|experts?|appraisers?|managers?)")
# someone, or a department named bare ("please contact account support", "should go to billing")
_SOMEONE = (rf"(?:(?:a|an|our|the|your|one\s+of\s+our)\s+(?:[\w'’-]+\s+){{0,2}}?{_WHO}|someone|somebody|a\s+human|"
            r"(?:account|customer|tech(?:nical)?|billing|member(?:ship)?|order)\s+(?:support|service|care)|billing)")
# A Chinese topic before English words (差价的事情 please contact our support team, 会员权益这块 better check with …)
_ZH_TOPIC = r"[\u3400-\u9fff][\u3400-\u9fff\w]{0,20}\s*"
# The speaker's own deferral, a refusal wherever it stands: "I'd want a colleague to check", "I'll need a colleague to
# process it", "I'd have to leave that to our team", "I'll need to pass it to our team", "I'd rather let our support
# team look into your account", "I'd have to check with the team"
_SPEAKER_DEFERS = (
    rf"\bi(?:['’]d|\s+would|['’]ll|\s+will)\s+(?:want|like|prefer|need|rather\s+have|have\s+to\s+get)\s+{_SOMEONE}\s+to\s+"
    r"(?:check|confirm|verify|look|review|decide|assess|process|handle|go\s+over)\b",
    r"\bi(?:(?:['’]d|\s+would|['’]ll|\s+will|\s+must)\s+(?:have\s+to\s+|need\s+to\s+)?|\s+(?:gotta|have\s+to|got\s+to)\s+)(?:leave|pass)\s+"
    r"(?:[\w'’-]+\s+){0,8}?"
    r"(?:to|for|on\s+to|over\s+to)\s+(?:(?:our|the|a|an|your)\s+(?:[\w'’-]+\s+){0,2}?" + _WHO + r"|(?:account|customer|tech(?:nical)?|"
    r"billing|member(?:ship)?|order)\s+(?:support|service|care))\b",
    rf"\bi(?:['’]d|\s+would)\s+rather\s+(?:let\s+|have\s+)?{_SOMEONE}\b",
    # "I'll let the delivery team answer anything about your order"
    rf"\bi(?:['’]ll|\s+will|['’]d|\s+would)\s+let\s+{_SOMEONE}\s+(?:answer|handle|confirm|check|decide|look|deal|take|"
    r"advise|explain|tell|judge|assess|sort)\b",
    r"\bi(?:['’]d|\s+would|['’]ll|\s+will)\s+(?:have|need)\s+to\s+(?:double[-\s]?check|check|confirm|verify)\s+(?:that\s+|this\s+|it\s+)?"
    rf"with\s+{_SOMEONE}\b",
    # the matter got from someone instead of the speaker: "I'd recommend getting the criteria from the team rather than from me"
    r"\bi(?:['’]d|\s+would)?\s+(?:recommend|suggest|advise)\s+(?:getting|asking\s+for|checking)\b[^.;\n]{0,60}?\bfrom\s+"
    rf"{_SOMEONE}\s+rather\s+than\s+(?:from\s+)?me\b",
    # a hand-over in a few words: "Let me pass you to a specialist for that", "Best to ring the Berlin store directly"
    rf"\b(?:let\s+me|allow\s+me\s+to|i(?:['’]ll|\s+will|['’]d|\s+would|\s+can))\s+(?:pass|transfer|put|hand|connect|forward)\s+"
    r"(?:you|your\s+(?:message|question|query|request|enquiry|inquiry|case))\s+(?:over\s+|through\s+|on\s+)?(?:to|with)\s+"
    rf"{_SOMEONE}\b",
    # who handles it, said of the matter alone: "Our returns team handles that."
    rf"^\W*{_SOMEONE}\s+(?:handles|deals\s+with|looks\s+after|takes\s+care\s+of|owns)\s+(?:that|this|those|it)(?:\s+(?:one|side|"
    r"part))?\s*(?:$|[.!?;,—–-])",
    # the asker's call, no number of its own: "For holiday hours you'd need to ring the store directly"
    rf"\byou(?:['’]d|\s+would)\s+(?:need|have)\s+to\s+(?:ring|call|phone|contact|ask|email|check\s+with|speak\s+(?:to|with)|"
    rf"talk\s+to)\s+{_SOMEONE}\b(?![^.;\n]*\d)",
    # the matter put to someone: "Anything beyond that is best asked of our support team", "Questions about your refund
    # amount itself should go to billing", "… is something the returns team will confirm once they receive it"
    rf"\b(?:is|are)\s+best\s+(?:asked\s+of|directed\s+to|left\s+to|handled\s+by|answered\s+by|addressed\s+by|raised\s+with|"
    rf"put\s+to|taken\s+up\s+with)\s+{_SOMEONE}\b",
    r"^\W*(?:anything|everything|questions?|queries|enquiries|issues?|details|specifics|matters|the\s+rest)\b[^;\n]{0,80}?\b"
    rf"(?:should|must)\s+(?:go|be\s+(?:directed|sent|raised|put|taken|asked))\s+(?:to|with|of)\s+"
    rf"{_SOMEONE}\b",
    rf"\b(?:is|are)\s+something(?:\s+that)?\s+{_SOMEONE}\s+(?:will|would|can|['’]ll|"
    r"['’]d|should)\s+(?:\w+\s+)?(?:confirm|check|verify|decide|assess|advise|review|answer|judge)\b",
    rf"^\W*(?:{_ZH_TOPIC})?(?:it['’]?s\s+|you['’]?d\s+)?(?:best|better)\s+(?:off\s+)?(?:to\s+)?(?:ring|call|phone|contact|ask|email|"
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
    rf"(?:(?:i|we)(?:['’]d|\s+would)?\s+(?:suggest|recommend)\s+|(?:please|kindly)\s+)(?:speaking|talking|checking|getting\s+in\s+touch|"
    rf"contact(?:ing)?|reach(?:ing)?\s+out|speak|talk|check|get\s+in\s+touch)\b(?:\s+(?:to|with))?\s+{_SOMEONE}\b",
)
# The matter put first: an embedded question or a condition before a comma, "For your case," / "For the status of
# …,", or the topic as the subject of "is something"
_FRONTED = (r"^\W*(?:(?:whether|if|how|what|which|when)\b[^;\n]{1,140}?,|" + _ZH_TOPIC + r"(?=[a-z])|"
            r"(?:for|as\s+for|regarding|about|concerning)\s+(?:your|the|anything|everything|questions?|specifics|details|"
            r"[\w-]+\s+(?:arrangements|matters|questions|queries|options|requests))\b"
            r"[^,;\n]{1,80},|[^;\n]{1,140}?\b(?:is|are)\s+(?:something|one|a\s+(?:question|thing|matter))(?:\s+that)?)\s*")
# Chinese: a topic and the team that owns it (发票相关事宜由财务同事负责, 积分规则的解释权在会员运营团队), a topic left to
# someone in its own clause (退货时限这块建议您直接咨询售后同事, 平板的保修期请您咨询售后同事); never with a number
_ZH_TEAM = (r"(?:同事|专员|客服|售后|专人|人工|(?:会员|客服|售后|财务|运营|服务|技术|物流|维修)[^，。；！？]{0,4}?"
            r"(?:团队|部门|组|中心))")
_ZH_DEFERS = re.compile(
    rf"(?:由|归)[^，。；！？]{{0,8}}?{_ZH_TEAM}(?:来|统一)?(?:负责|处理|管|跟进|答复|解释|判断|决定|审核)|"
    rf"(?:解释权|决定权|审核权)(?:在|归|属于)[^，。；！？]{{0,10}}?{_ZH_TEAM}|"
    r"(?:^|(?<=[，。；！？\n]))(?:[^，。；！？\n]{1,12}?(?:这块|这一块|这部分|这方面|方面|的话)|[^，。；！？\n]{0,8}的[^，。；！？\n]{1,8}?)"
    r"呢?(?:请|建议|麻烦|需要|得|还是)(?:您|你)?(?:直接|再)?(?:联系|咨询|致电|询问|洽询|找)[^，。；！？\n]{0,10}?"
    r"(?:客服|人工|售后|专员|同事|中心|门店|部门|团队)|"
    r"(?:请|建议)(?:您|你|贵司[^，。；！？\n]{0,6}?)?(?:直接)?(?:与|和|跟|向)[^，。；！？\n]{1,14}?(?:客服|人工|售后|专员|同事|经理|"
    r"部门|服务部|销售部|中心|团队)[^，。；！？\n]{0,4}?(?:联系|沟通|对接)")
# Whom each Chinese shape names, in one search of literals (the shapes, tried at every position: 5 µs a short answer)
_ZH_WHOM = re.compile("同事|专员|客服|售后|专人|人工|团队|部门|服务部|销售部|中心|门店|经理|组")
# ^ at each line's start: the answer's gate reads its sentences one a line
_DEFERRAL = re.compile(rf"(?i:{'|'.join(_SPEAKER_DEFERS)}|{_FRONTED}(?:{'|'.join(_OTHERS_DEFER)}))", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Every shape names someone (_WHO) or a gap, and holds one of PHRASES (words, or two words in a row): an answer
# without both is spared the pattern (90 µs over a summary's 541 characters), both looked up in the crate, in the
# refusal reading's one call (scorers/refusal_gate.py; the phrases as substrings in Python took 4 µs, 18 with these)
NAMED_WORDS = frozenset("team desk department colleague colleagues specialist specialists agent agents staff advisor "
                        "advisors adviser advisers representative representatives people folks person someone somebody "
                        "human centre center support store helpdesk helpline hotline service office gap hole blind technician "
                        "technicians engineer engineers expert experts appraiser appraisers billing manager managers".split())
NAMED_PARTS = "".join(chr(code) for code in range(128) if not chr(code).isalnum())
# "i'd" a word (the apostrophe parts none); "i’d" is "i d" (a character beyond ASCII parts words)
PHRASES = frozenset((
    "i'd", "i d", "i'll", "i ll", "i would", "gotta", "i will", "i can", "i must", "we'd", "we d", "we would", "gap in", "hole in",
    "blind spot", "need to", "have to", "kindly", "please", "let me", "allow me", "best", "better", "should go",
    "must go", "be directed", "be sent", "be raised", "be put", "be taken", "be asked", "is something", "are something", "we recommend", "we suggest", "i recommend",
    "i suggest", "deals with", "looks after", "takes care",
    *(f"{verb} {that}" for verb in ("handles", "owns") for that in ("that", "this", "those", "it"))))
PHRASE_PARTS = NAMED_PARTS.replace("'", "")


def may_defer(lower: str, named: bool) -> bool:
    """Whether a lower-cased answer holds a deferral anywhere (the refusal reading's gate). `named`: whether it holds a
    word of NAMED_WORDS and one of PHRASES (the crate's lookup, scorers/refusal_gate.py)."""
    if not lower.isascii() and _ZH_WHOM.search(lower) and _ZH_DEFERS.search(lower):
        return True
    return named and _DEFERRAL.search(_SENTENCE_END.sub("\n", lower)) is not None


def deferral(text: str) -> int | None:
    """Where a clause's deferral ends; None when it defers nothing. Read only in an answer that defers (may_defer)."""
    found = _DEFERRAL.search(text)
    if found is None and not text.isascii() and _ZH_WHOM.search(text) and (found := _ZH_DEFERS.search(text)) and (
            clause(text).quantities):
        return None
    return None if found is None else found.end()


# What is said of a hand-over beside it: who answers and how ("They'll be able to give you a time frame", "Account
# support can sort this out for you", 他们会根据您的订单给出准确答复, 稍后会有专人联系您, 您可以在订单详情页联系客服查询)
_AROUND = re.compile(
    r"(?i:^\W*(?:they|he|she)(?:['’]ll|\s+will|\s+can|\s+should|\s+would|['’]d)\s+(?:be\s+able\s+to\s+)?(?:\w+\s+){0,2}?"
    r"(?:give|tell|confirm|check|advise|help|look|get\s+back|assess|sort|investigate|explain|answer|let\s+you\s+know)\b|"
    # what they do with it: "they assess each device individually"
    r"^\W*they\s+(?:\w+\s+)?(?:assess|review|check|inspect|evaluate|price|judge|look\s+at|handle)\s+(?:each|every|all|your|"
    r"the|it|them)\b|"
    rf"^\W*{_SOMEONE}\s+(?:can|will|['’]ll|should|could|is\s+able\s+to)\s+(?:\w+\s+){{0,2}}?(?:sort|help|check|confirm|tell|"
    r"look|advise|answer|give|quote|know)\b|"
    # the asker's own check, at checkout: "Please verify the delivery cost at checkout before placing your order"
    r"^\W*(?:please\s+)?(?:verify|check|confirm|see)\s+(?:the\s+)?[\w\s-]{0,30}?\s+(?:at|on|in)\s+(?:the\s+)?(?:checkout|cart|"
    r"basket|order\s+page|product\s+page)\b|^[^;]{1,60}?\b(?:is|are)\s+(?:made|decided|handled|assessed|reviewed|judged)\s+(?:case\s+by\s+case\s+|"
    rf"individually\s+)?by\s+{_SOMEONE}\W*$)|"
    r"^我(?:这边)?(?:先|来)?帮(?:您|你)(?:登记|记录|反馈|提交|转接|备注|跟进)|"
    r"^(?:他们|对方|同事|专人|专员|客服)[^，。；！？]{0,2}(?:会|将|可以|能)[^，。；！？]{0,14}(?:答复|回复|说明|解答|跟进|处理|协助)|"
    r"^(?:我们|我司)?(?:将|会)安排(?:专人|同事|专员)(?:与(?:您|你|贵司))?(?:对接|联系|跟进)|"
    r"^由(?:其|他们|对方|专人|同事|专员)[^，。；！？]{0,16}(?:提供|说明|答复|解答|确认|核实|处理)|"
    r"^(?:稍后|随后|之后|后续)?(?:会有|将有)(?:专人|同事|客服|工作人员|专员)(?:与|和|跟)?(?:您|你)?(?:联系|回电|致电|跟进)|"
    r"^(?:您|你)(?:也)?可以(?:在|到|通过)[^，。；！？]{1,14}?(?:联系|咨询|询问|找)[^，。；！？]{0,6}?(?:客服|人工|他们|售后|专员|同事)")


def said_of_a_hand_over(text: str) -> bool:
    """Whether a clause says who takes the matter and how, with no number of its own: beside a refusal, no claim."""
    return (_AROUND.match(text.strip()) is not None or hands_off(text, False)) and not clause(text).quantities


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
