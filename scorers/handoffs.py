"""Answers that hand the question on instead of answering it: "Your query has been forwarded to the relevant
department", "Store hours are something I'd rather you confirm with the store locator", 您的问题已经转给发票组. No clause
of them declines in words (scorers/refusal.py, scorers/declines.py find none), yet they claim nothing about what was
asked: the local judge reads such an answer as a refusal when every clause of it is a hand-off or is said around one
(asides.around_a_refusal: a greeting, a sign-off, a pointer, the question said back). One clause that says something
else ("… they will refund the postage") keeps every clause a claim, as before.

A hand-off: the question passed to a person, a team or a page ("has been forwarded", "I'll pass you over to", "is handled
by our orders team", "would be the right place to ask", "please get in touch with", 转交, 已记录, 将安排专员与您联系), or
the speaker keeping from an answer for the asker's sake ("I'd hate to get it wrong", "I'd rather you confirm",
"something I'd want a person to look at", "I'll stay out of it", 不替您下结论, 不好先答应), a topic owned by a team
("Gift-card terms are owned by Finance", "Payment-method questions go to the payments team", 会员价格归市场部管, 需由账户安全
团队答复), a call's transfer under way ("Bear with me while I transfer your call"), a person fetched ("Let me grab a
human", "needs a human touch", "a job for a real person", 小助手这就帮您呼叫客服), the interface's buttons pointed at ("Tap
below for …", 可以点【会员中心】查一下). Never one with a number of its own; a reference's digits ("case RC-55102", 工单
WX-77210) are none.
"""

from __future__ import annotations

import re

from ragpulse._native import WordGate
from ragpulse.scorers.chrome import numbers_said
from ragpulse.scorers.declines import letter_runs
from ragpulse.scorers.refusal_zh import HAN, mandarin
from ragpulse.scorers.text import Clause

_WHO = (r"(?:team|desk|department|dept|colleagues?|specialists?|agents?|staff|advisors?|advisers?|representatives?|reps?|"
        r"people|folks|person|someone|somebody|human|centre|center|support|store|shop|branch|carrier|courier|office|"
        r"locator|page|website|site|portal|form|app|account|helpline|hotline|service)")
_EN_SHAPES = (
    # passed on: "has been forwarded to", "I'll pass you over to", "let me hand this to", "Reply AGENT and I'll hand …"
    r"\b(?:has|have|had)\s+been\s+(?:forwarded|passed\s+on|passed|escalated|referred|routed|transferred|logged)\s+"
    r"(?:on\s+)?(?:to|with|for)\b",
    r"\b(?:i|we)(?:['’]ll|\s+will|\s+can|\s+could|\s+need\s+to|['’]ll\s+need\s+to|\s+have\s+to|['’]m\s+going\s+to|"
    r"\s+am\s+going\s+to)\s+(?:\w+\s+){0,2}?(?:pass|hand|transfer|forward|escalate|route|connect|put)\s+(?:you|this|it|"
    r"that|your)\b",
    r"\blet\s+me\s+(?:pass|hand|transfer|forward|escalate|connect|put)\s+(?:you|this|it|that|your)\b",
    # who answers it: "is handled by our orders team", "Our shipping team is the right place to confirm", "someone
    # from the team will look it up", "Our Returns team can check your order"
    # "… will be explained by our customer care executive"
    r"\b(?:is|are|will\s+be|would\s+be|can\s+be)\s+(?:handled|dealt\s+with|decided|answered|managed|owned|confirmed|explained|"
    r"clarified)\s+by\s+(?:(?:our|the|your|a)\b|"
    r"(?-i:[A-Z])[\w&-]*\W*$)",
    # best left to a person: "Trade-in requirements are best confirmed by a team member in store", "… best checked with"
    r"\b(?:is|are)\s+best\s+(?:confirmed|checked|verified|answered|discussed|asked|raised|handled|advised\s+on)\s+"
    r"(?:by|with|at|in)\s+(?:our|the|your|a|an)\b",
    rf"\b(?:is|are|would\s+be|['’]d\s+be)\s+(?:the|a|your)\s+(?:right|best|reliable|proper|correct|better)\s+(?:place|"
    rf"people|person|source|contact|{_WHO})s?\b",
    rf"\b(?:our|the|an?|your)\s+(?:[\w-]+\s+){{0,2}}?{_WHO}\s+(?:\w+\s+)?(?:can|will|would|should|could|is\s+able\s+to|"
    rf"are\s+able\s+to)\s+(?:\w+\s+){{0,3}}?(?:check|confirm|tell|look|advise|answer|guide|review|verify|get\s+back|contact|"
    rf"give\s+you|go\s+over|take\s+(?:it|this|that)\s+from\s+there|walk\s+you\s+through|explain|sort\s+(?:it|this|that)\s+out|be\s+in\s+touch|get\s+in\s+touch)\b",
    # a ticket opened for a person to answer: "Your request has been logged (ticket #448102)", "we've opened a ticket"
    r"\b(?:request|question|query|enquiry|inquiry|message|email|e-mail)\s+has\s+been\s+(?:logged|recorded|registered)\b|"
    r"\bticket\s+(?:has\s+been|was|is)\s+(?:opened|created|raised|logged)\b|\b(?:opened|created|raised|logged)\s+"
    r"(?:an?\s+)?(?:support\s+|new\s+)?ticket\b",
    r"\b(?:will|['’]ll)\s+(?:contact|call|email|get\s+back\s+to|reach\s+out\s+to|be\s+in\s+touch\s+with|follow\s+up\s+with)"
    r"\s+you\b(?!\s+(?:a|an|the|your|our|one|some)\b)",
    r"\bwould\s+get\s+it\s+in\s+front\s+of\b",
    # "A colleague will follow up by email", "they'll reply here in your DMs", "I've queued your question for a specialist"
    r"\b(?:will|['’]ll)\s+(?:follow\s+up|reply|respond|sort\s+(?:it|this|you))\b|\b(?:queued|passed|sent|forwarded|routed|"
    r"escalated|flagged)\s+(?:your|the|this)\s+(?:\w+\s+)?(?:question|query|request|case|message|chat|conversation|ticket|thread)\s+"
    r"(?:to|for|with)\b|"
    r"\bi['’]ll\s+leave\s+(?:\w+\s+){1,4}?(?:to|for)\s+(?:the|our|a|an)\b",
    r"^\W*(?:one\s+moment|please\s+hold|hold\s+on|hang\s+(?:tight|on)|bear\s+with\s+(?:me|us))\b",
    # a call's transfer under way: "… while I transfer your call", "while we connect you"
    r"\bwhile\s+(?:i|we)\s+(?:transfer|connect|put\s+through)\s+(?:you|your\s+call)\b",
    # a person fetched, or the matter theirs: "Let me grab a human for this one", "Price adjustments need a human
    # touch", "Cancelling is a job for a real person — I'm just a bot!", "Connecting you now…"
    r"\blet\s+me\s+(?:grab|get|fetch|find|call\s+in|bring\s+in)\s+(?:you\s+)?(?:a|an|one\s+of\s+our)\s+"
    r"(?:real\s+)?(?:human|person|agent|colleague|teammate)\b|\b(?:needs?|takes?|requires?)\s+a\s+(?:human|personal)\s+"
    r"touch\b|\b(?:is|are|['’]s)\s+"
    r"(?:a\s+job|one|a\s+task|a\s+matter)\s+for\s+(?:a|an)\s+(?:real\s+|actual\s+)?(?:human|person|agent|teammate)\b|"
    r"\bi['’]?m\s+(?:just|only|merely)\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,2}?(?:bot|chatbot|assistant|helper)\b|"
    r"^\W*(?:now\s+)?(?:connecting|transferring|putting\s+you\s+through)\b",
    # the interface's own buttons: "Tap below for the full store list!"
    r"^\W*(?:just\s+)?(?:tap|click|press|hit)\s+(?:(?:the|a)\s+(?:[\w-]+\s+)?(?:button|link|chip|option)s?\s+)?below\b",
    # "I'm connecting you now", "I'd like the seller's support team to handle return questions"
    r"\b(?:i['’]m|i\s+am|we['’]re|we\s+are)\s+(?:now\s+)?(?:connecting|transferring|putting|passing)\s+you\b|"
    rf"\b(?:i['’]d|i\s+would)\s+(?:like|prefer|rather|want)\s+(?:the|our|an?|your)\s+(?:[\w'’-]+\s+){{0,3}}?{_WHO}\s+to\s+"
    r"(?:handle|answer|confirm|check|deal\s+with|look\s+at|take)\b",
    # handed on already, left to a person, owned by a team: "I've handed this to", "leaving that one for a human", "I'll
    # let a colleague take …", "Payment-method questions go to the payments team", "someone from the floor will look it
    # up", "ask in #finance-questions", "that's one to put to the service centre", "Our trade-in estimator … will give",
    # "I'll stay out of it"
    r"\b(?:i|we)['’]ve\s+(?:\w+\s+)?(?:handed|passed|forwarded|escalated|sent|routed|transferred|flagged|queued)\s+"
    r"(?:this|it|that|your|you)\b|\bleav(?:e|ing)\s+(?:that|this|it)(?:\s+one)?\s+(?:for|to)\s+(?:a|an|the|our)\s+"
    r"(?:\w+\s+)?(?:human|person|colleague|team|specialist|agent|expert)\b|\b(?:i['’]ll|i\s+will|let\s+me)\s+let\s+"
    rf"(?:a|an|our|the)\s+(?:\w+\s+)?{_WHO}|\b(?:questions|queries|enquiries|inquiries)\s+(?:go|goes|"
    r"are\s+(?:sent|routed|passed))\s+to\s+(?:our|the|a)\b|\b(?:someone|somebody|a\s+colleague)\b[^.;!?]{0,30}?\b(?:will|"
    r"['’]ll|can|could)\s+(?:\w+\s+){0,2}?(?:look|check|confirm|help|answer|get\s+back|pick\s+up)\b|\bask\s+(?:it\s+)?in\s+"
    r"#[\w-]+|\bone\s+to\s+(?:put\s+to|ask|raise\s+with|check\s+with)\s+(?:the|our|your|a)\b|\bnot\s+(?:going\s+to|"
    r"gonna)\s+(?:make\s+(?:that|this|the)\s+call|comment|weigh\s+in)\b|\b(?:our|the|your)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:estimator|calculator|checker|finder|locator)\b[^.;!?]{0,40}?\b(?:(?:will|can|would)\s+(?:give|show|tell|calculate|list)|"
    r"lists|shows)\b|"
    r"\bi['’]?ll\s+stay\s+out\s+of\s+(?:it|this|that)\b",
    r"\bworth\s+(?:checking|asking|confirming)\s+(?:with|at)\b",
    r"\b(?:your|the)\s+(?:best|quickest|easiest|safest)\s+(?:options?|bets?|routes?|ways?)\s+(?:are|is|would\s+be)\b",

    # where to look: "the prices show up at checkout", "the Contact section … should list the ways to reach the team"
    r"\b(?:show|shown|appear|appears|listed|displayed)\s+(?:up\s+)?(?:at|on|in)\s+(?:the\s+)?(?:checkout|cart|basket)\b",
    r"\bways?\s+to\s+(?:reach|contact|get\s+in\s+touch\s+with)\s+(?:the|our|a|us)\b",
    # whom to ask: "Best to ring the Berlin store directly", "kindly get in touch with our returns desk"
    r"(?:^\W*(?:(?:it['’]?s\s+)?(?:best|better)\s+to|you\s+(?:can|could|may|might)|just|try)|\b(?:please|kindly))\s+"
    r"(?:\w+\s+){0,2}?(?:contact|reach|ring|call|phone|email|e-mail|message|ask|check\s+with|confirm\s+with|get\s+in\s+touch|"
    r"speak|talk|see|visit|open\s+a\s+(?:request|ticket|case|claim)|raise\s+a\s+(?:request|ticket)|use\s+the\s+(?:contact|store\s+locator))\b",
    # kept from an answer for the asker's sake: "I'd hate to get wrong", "something I'd rather you confirm", "I'd prefer
    # our payments colleagues confirm", "something I'd want a person to look at", "I'd like to be careful with"
    r"\b(?:i['’]d|i\s+would)\s+hate\s+to\s+(?:get|give|tell)\b|\bthings?\s+i['’]d\s+hate\s+to\b",
    r"\b(?:something|one|a\s+question|a\s+thing)\s+(?:that\s+)?(?:i['’]d|i\s+would|we['’]d)\s+(?:rather|prefer|want|like)\b",
    r"\b(?:i['’]d|i\s+would)\s+(?:rather|prefer)\s+(?:you|our|that|a|someone|not)\b",
    r"\b(?:i['’]d|i\s+would|i)\s+(?:like|want)\s+to\s+be\s+careful\b",
    r"\bi\s+(?:don['’]t|do\s+not)\s+want\s+(?:you|to)\s+(?:\w+\s+){0,8}?(?:wrong|because\s+of\s+me|on\s+my\s+word)\b",
    r"\bnot\s+going\s+to\s+give\s+you\s+a\s+(?:yes\s+or\s+no|firm|definite|straight)\b",
    r"\bi\s+(?:don['’]t|do\s+not)\s+have\s+(?:a|an|any)\s+(?:[\w-]+\s+){1,4}?(?:i|we)\s+can\s+(?:share|give|provide|pass\s+on)\b",
    r"\b(?:is|are)(?:\s+not|n['’]t)\s+something\s+(?:this\s+(?:\w+\s+)?\w+|i|we)\s+(?:covers?|handles?|can|do|does)\b",
)
_EN_HANDOFF = re.compile("(?i:" + "|".join(_EN_SHAPES) + ")")
# the asker's act of asking as the best course ("Ringing the store ahead of your visit would be the safest bet"; "Express
# would be the quickest option" is no act of asking, a claim): a clause's start, tried apart (in _EN_SHAPES, tried at
# every position, it cost 1 µs a clause)
_EN_ASKING_BEST = re.compile(
    r"(?i:^\W*(?:ringing|calling|phoning|contacting|emailing|messaging|asking|checking\s+with|getting\s+in\s+touch\s+with)\b"
    r"[^.;!?]{0,60}?\b(?:is|would\s+be|['’]d\s+be|['’]s)\s+(?:the|your)\s+(?:best|safest|surest|quickest|easiest)\s+"
    r"(?:bet|option|way|route|move)\b)")
# The Traditional forms of the shapes' characters: a clause holding one is read again in Simplified (3.6 µs, not spent
# on every Chinese clause)
_TRADITIONAL = re.compile("[轉記錄聯絡確認議結論應準話復門點頁員專處斷與給將經為這還單後說觀務電詢進們會問]")
# A word each Chinese shape holds, in one search of literals (0.3 µs over a short answer, the shapes 2.3)
ZH_KEYS = re.compile("工单|服务单|填好|填写|选好|需由|须由|应由|交由|交给|部管|队管|组管|事管|心管|部负责|队负责|组负责|事负责|心负责|尽快联系|"
                      "尽快回复|尽快处理|尽快与|为准|请到|请去|请在|转交|转给|转到|转至|转接|转驳|升级|提交|反馈给|登记|记录|受理|联系|联络|回电|致电|核实|确认|判断|查看|处理|看一下|沟通|留意|"
                      "结论|定论|答应|准话|打包票|答复|回复|看看|看下|找找|找一下|查一下|搜一下|咨询|洽询|询问|问一下|问问|问下|问返|找|跟进|说明|解答|"
                      "协助|转人工|呼叫|【")
_ZH_HANDOFF = re.compile(
    # passed on, recorded, someone will call: 已将您的问题转交会员组, 已经转给发票组, 您反馈的保修问题已记录, 我们将安排专员与您联系
    r"(?:已|已经|会|将|帮(?:您|你)|为(?:您|你))[^，。；！？]{0,8}(?:转交|转给|转到|转至|转接|转驳|转人工|提交给|反馈给|升级(?:至|到|给))|"
    r"(?:问题|请求|需求|反馈|申请|工单)[^，。；！？]{0,4}已(?:经)?(?:记录|登记|受理|提交)(?=[，。；！？\s]|$)|"
    r"(?:安排|让|请)[^，。；！？]{0,10}(?:与|和|跟|给)(?:您|你)(?:联系|联络|回电|致电)|"
    # calling someone in now: 小助手这就帮您呼叫客服来处理; the interface's button pointed at: 可以先戳【积分中心】看看
    r"(?:帮(?:您|你)|这就|马上|正在)[^，。；！？]{0,4}呼叫(?:人工|客服|专员|售后)|(?:戳|点击?|按)(?:一下)?(?:下方的?)?【[^】\n]{1,10}】|"
    # who answers it: 需要售后同事帮您核实, 需要结合您的具体订单来判断, 请跟维修点沟通一下
    r"需要[^，。；！？]{0,12}(?:同事|人工|客服|专员|售后|工作人员|门店|维修点)[^，。；！？]{0,8}(?:核实|确认|判断|查看|处理|看一下)|"
    r"(?:跟|和|与|找)[^，。；！？]{0,8}(?:沟通|确认|核实)一下|需要结合[^，。；！？]{0,12}(?:判断|确认|核实)|"
    r"(?:结算页|付款页|支付页|订单页|详情页)[^，。；！？]{0,8}(?:确认|留意|查看|看一下)|留意一下|"
    r"(?:结算|下单|付款|支付)[^，。；！？]{0,6}(?:看一下|看看|看下|确认一下)|"
    r"(?:官网|网站|[Aa][Pp][Pp]|页面)[^，。；！？]{0,8}(?:找找|找一下|查一下|搜一下|看看|看一下)|"
    # whom to ask: 请您联系人工客服处理, 也可以问一下人工客服
    r"^我?(?:请|建议|麻烦|可以|也可以|直接|或者?)?(?:您|你)?(?:直接|再)?(?:联系|联络|咨询|洽询|询问|找|问一下|问问|问下|问返)[^，。；！？]{0,6}"
    r"(?:人工客服|客服|售后|专员)|(?:向|跟|和)[^，。；！？]{0,6}(?:客服|售后|专员|同事|门店|人工)[^，。；！？]{0,4}(?:确认|核实|咨询|询问)|"
    # who will answer, after the referral: 他们会给您准确的答复, 佢哋会同你跟进, 由专人为您说明会比较清楚, 还是由维修中心的技术人员来回复
    r"(?:他们|他哋|她们|对方|同事|专人|专员|客服)[^，。；！？]{0,4}(?:会|将|可以|能)[^，。；！？]{0,8}(?:答复|回复|说明|解答|跟进|处理|协助)|"
    r"由[^，。；！？]{0,10}(?:专人|同事|客服|专员|人员|团队|中心)[^，。；！？]{0,6}(?:说明|答复|回复|解答|处理|跟进)|"
    # kept from an answer: 不替您下结论, 不好先答应您, 不方便给准话, 没法给您打包票, 先不给您答复, 不适合直接给出结论, 先不自动回复
    r"(?:不|没法|没办法|无法)[^，。；！？]{0,6}(?:下结论|下定论|答应|给准话|准话|打包票|给出结论|答复|自动回复|回复)|"
    # who answers it, and where: 需由账户安全团队答复, 交由售后专员回复, 会员价格归市场部管, 我转给财务同事, 已为您登记, 将尽快联系,
    # 请咨询服务台工作人员, 以下单页面显示为准, 看下结算页, 请到 #会员运营 问, 留意公众号消息
    r"(?:需|须|应|交)由[^，。；！？]{0,10}(?:团队|部门|同事|专员|客服|售后|财务|人工|中心)|交给[^，。；！？]{0,6}(?:团队|部门|同事|"
    r"专员|客服|售后|财务|人工)|归[^，。；！？]{0,8}(?:部|团队|组|同事|中心)(?:管|负责|处理)|我(?:这边)?(?:先|来)?(?:转给|转交)|"
    r"已(?:为|帮)(?:您|你)(?:登记|记录|提交|转交)|(?:创建|提交|生成|建立|开)了?(?:一个|一张)?(?:工单|服务单)|工单[^，。；！？]{0,6}已(?:创建|生成|提交|建立)|(?:将|会)尽快(?:与(?:您|你))?(?:联系|回复|处理)|"
    r"请(?:您|你)?(?:联系|咨询|询问|找|问)[^，。；！？]{0,10}(?:工作人员|店员|服务台|客服|专员|同事|售后|门店)|"
    r"(?:看下|看一下|看看|查看)[^，。；！？]{0,4}(?:结算页|付款页|订单页|详情页)|以[^，。；！？]{0,10}(?:页面|结算页|订单页)[^，。；！？]{0,4}为准|以[^，。；！？]{0,10}(?:客服|售后|专员|同事|工作人员|门店)[^，。；！？]{0,6}为准|"
    r"(?:在|到)\s*(?i:checkout|cart|app)[^，。；！？]{0,6}(?:看一下|看看|看下|查看)|请(?:您|你)?(?:到|去|在)[^，。；！？]{0,20}(?:问|咨询|提问)|"
    r"留意[^，。；！？]{0,8}消息|请(?:您|你)?(?:到|去|在)\s*#|(?:下单|结算|付款)时[^，。；！？]{0,4}(?:填好|填写|选好|选择)")


# A word each English shape holds: a clause with none is spared the shapes (35 µs over 100 characters, the gate 1)
_EN_GATE = frozenset(
    "been forwarded passed escalated referred routed transferred logged pass hand transfer forward "
    "escalate route connect put let handled dealt decided answered managed right best reliable proper correct better "
    "check confirm tell look advise answer guide review verify back contact give call email reach touch follow front over "
    "walk explain sort worth show shown appear appears listed displayed ways share provide "
    "moment hold ring phone message ask speak talk open raise use hate rather prefer careful want going something "
    "follow reply respond queued sent flagged leave leaving handed owned confirmed questions queries enquiries inquiries "
    "someone somebody colleague visit please kindly estimator calculator checker finder locator gonna stay "
    "checked verified discussed asked raised recorded registered ticket opened created connecting transferring putting "
    "passing handle take explained clarified safest surest quickest easiest hang grab fetch bring job bot chatbot "
    "assistant helper tap click press hit bear while matter pick lists shows".split())
_MAX_CHARS = 600
# A hand-off speaks to the asker or for the shop: an answer without one of these words (a summary, an explanation in
# the third person) is spared reading its clauses for one
_EN_ADDRESSED = frozenset("i we our us you your me my please kindly".split())
_NOT_ALPHA = "".join(chr(code) for code in range(128) if not chr(code).isalpha())
_ADDRESSED_GATE = WordGate(sorted(_EN_ADDRESSED), _NOT_ALPHA)
_WORD_GATE = WordGate(sorted(_EN_GATE), _NOT_ALPHA)


def may_hand_off(answer: str) -> bool:
    """The answer's gate: whether any clause of it may hand the question on. A hand-off alone is a few short sentences:
    a longer answer is spared (reading a summary's words for the gate took 10 µs)."""
    if len(answer) > _MAX_CHARS:
        return False
    if not answer.isascii() and HAN.search(answer):  # a Chinese answer is read in Chinese
        return _zh_hands_off(answer)
    if "@" in answer:  # a chat's mention ("@dani — leaving that one for a human") speaks to someone
        return True
    if answer.isascii():  # its words looked up in the crate ("I'd" gives "i")
        return bool(_ADDRESSED_GATE.meets_in(answer))
    return not _EN_ADDRESSED.isdisjoint(letter_runs(answer.lower()))


def hands_off(text: str, quantified: bool) -> bool:
    """Whether a claim clause hands the question on, with no number of its own (`quantified`: it has one the question
    does not)."""
    if quantified:
        return False
    if not text.isascii() and HAN.search(text):
        return _zh_hands_off(text)
    gated = _WORD_GATE.meets_in(text) if text.isascii() else not _EN_GATE.isdisjoint(letter_runs(text.lower()))
    return bool(gated) and (_EN_HANDOFF.search(text) is not None or _EN_ASKING_BEST.match(text) is not None)


def _zh_hands_off(text: str) -> bool:
    if ZH_KEYS.search(text) and _ZH_HANDOFF.search(text) is not None:
        return True
    if _TRADITIONAL.search(text):  # Traditional characters, read as Simplified
        said = mandarin(text)
        return ZH_KEYS.search(said) is not None and _ZH_HANDOFF.search(said) is not None
    return False


def numbers_of_its_own(parsed: Clause, question: Clause) -> bool:
    """Whether a clause has a number the question did not give, whatever its unit ("800 points" says back "about 800")."""
    # "case RC-55102", 工单 WX-77210: a reference's digits are no number
    return not {value for _, value in numbers_said(parsed)} <= {value for _, value in question.quantities}
