"""Clauses that claim nothing about what was asked: said of the channels ("The Store Locator page lists every branch",
"our international desk can go through that with you", 请在会员中心查看), of the process (a search, its documents, a
tool, a step, a hold: "Retrieving account policy", 当前坐席繁忙), in courtesy, or in the question's own words around
those. A refusal or a hand-off is often nothing else, in forms no list of phrasings holds (a call-centre transcript, a
pipeline's log, a form's fields): the local judge reads such a clause beside a refusal or a hand-off as said around it,
and an answer of them only (with at least one, and nothing else) as a refusal.

A clause claims nothing new when it has no number of its own, every English word and name of it is the question's or
one of these words, at most one Chinese character of it is neither the question's nor in one of these words, and it
holds at least one of them. A clause that answers in the question's words ("Engraved watches can't be returned") holds
none, and stays a claim; so does one that names a fee, a time, a service or a rule of its own.
"""

from __future__ import annotations

import re

from ragpulse._native import WordGate
from ragpulse.scorers.declines import letter_runs
from ragpulse.scorers.text import CJK, CJK_FUNCTION, Clause, clause, stem_words

# Channels, the process and courtesy: a clause holds one of these to claim nothing new (its evidence). Not in them:
# what a shop offers or decides (free, fee, refund, return, pickup, warranty, store, available, days), so a claim of
# its own names one.
_EN_EVIDENCE = (
    # who and where: a team, a person, a page, an app, a line
    "support desk department agent agents specialist specialists colleague colleagues human humans "
    "representative representatives advisor adviser crew helpdesk helpline hotline caller email chat page pages app "
    "website site portal dashboard settings section menu tab link ticket enquiry inquiry locator faq queue "
    # what they and the speaker do
    "contact contacting ask asking check checking confirm verify look looked search searched searching review escalate "
    "escalated transfer transferring hold holding retry refresh revert parse parsing retrieve retrieving validate "
    "validating "
    # the process: searches, documents, tools, steps
    "result results document documents passage passages source sources material materials excerpt knowledge error "
    "lookup step steps confidence fallback status pending "
    # courtesy
    "thank thanks sorry apology apologies appreciate patience patronage cheers regards kindly "
    "dear hello hi sir madam mate busy bot apologise apologize"
).split()
# Words such a clause is also made of, no evidence alone ("so one from 2022 should still be good to use" answers)
_EN_FILLER = (
    "person someone somebody staff unit service services centre center line phone call calls mail message messages "
    "account request query question questions help reach see find follow get give tell let know open raise submit sign "
    "log wait connect route routed pass forward handle assist sort guide walk direct visit head go come use click tap "
    "select pop put bring rock kick attend advise note noted pull load loaded failed fail info information detail details "
    "data base answer answers response figure quote estimate guess system topic field value branch branches list "
    "lists listed current currently latest exact exactly reliable best right correct specific specifically accurate "
    "quick quickly direct directly prompt promptly moment today now later soon shortly time times anytime every any all "
    "each thing things way ways option options further clarification nice great good day customer customers important "
    "team teams form tool tools record records welcome lovely pleasure "
    # words of any sentence the stop list leaves: particles, pronouns' contractions, fillers of speech
    "back out up off through again around there that then stay need needful place show shows more much most also "
    "earliest im i'm i've i'll you'd you're they'll we'll it'll um uh er hmm mm mmhmm okay right alright roughly "
    "initiated took ms n a na "
    # what a policy and a request are called, and what a team does with them
    "rule rules policy policies term terms condition conditions eligibility eligible requirement requirements "
    "process processed processing handled handles arrange arranged sit sits requests type "
    "next owner action expect reply individual particular item items model models product products"
).split()
EVIDENCE = frozenset(stem_words(_EN_EVIDENCE))
META_WORDS = EVIDENCE | frozenset(stem_words(_EN_FILLER))
_ZH_EVIDENCE = (
    "人工客服", "客服", "人工", "售后", "财务", "专员", "专席", "坐席", "同事", "工程师", "会员中心", "帮助中心", "个人中心",
    "订单详情", "详情页", "订单页面", "订单页", "结算页面", "结算页", "结帐页面", "收银台", "页面", "官网", "网站", "电话", "热线",
    "工单", "提交", "反馈", "转接", "转人工", "稍等", "稍候", "等待", "久等", "挂机", "繁忙", "检索", "资料", "文档", "工具",
    "调用", "返回", "错误", "超时", "确认", "核实", "查看", "查询", "咨询", "您好", "你好", "感谢", "谢谢", "抱歉",
    "不好意思", "麻烦", "耐心", "门店", "发卡行", "银行", "致歉", "道歉",
)
_ZH_FILLER = ("我的", "在线", "结果", "处理", "建议", "一下", "具体", "准确", "目前", "当前", "暂时", "这边", "问题", "情况", "相关",
              "信息", "说明", "系统", "显示", "为准", "最新", "详细", "亲", "帮", "直接", "提供", "再次", "再", "一次", "先", "看看", "好的",
              "订单号", "订单", "方式", "实际", "选择", "向", "中", "联系", "失败", "团队")
_ZH_EVIDENCE_WORDS = re.compile("|".join(sorted(map(re.escape, _ZH_EVIDENCE), key=len, reverse=True)))
_ZH_META = re.compile("|".join(sorted(map(re.escape, _ZH_EVIDENCE + _ZH_FILLER), key=len, reverse=True)))
_HAN = re.compile(f"[{CJK}]")
# A channel's name: up to three words before what it names ("our Rewards team", "the Billing department", "the
# **Rewards** tab", "the Card Services line"): a name, not a claim of the shop's
_CHANNEL_NOUNS = ("team teams desk department dept page tab section line centre center portal queue unit crew folks "
                  "coordinator specialist specialists estimator finder locator checker hub").split()
_CHANNEL_NAME = re.compile(rf"\b(?:our|the|your|a|an)\s+((?:[\w&'’*-]+\s+){{1,3}}?)(?:{'|'.join(_CHANNEL_NOUNS)})\b",
                           re.IGNORECASE)
# A reference ("Ref: GCB-40917", "ticket #GC-88213", "form PA-2"): its digits are no quantity of a claim's
_REFERENCE = re.compile(r"#\s*[\w-]*\d[\w-]*|\b[A-Z]{2,}-?\d[\w-]*|\b(?:ref|reference|ticket|case)\s*[:#]?\s*[\w-]*\d[\w-]*",
                        re.IGNORECASE)
_PREFIX = 5  # a word of the question's in another form ("expiry" for "expire"): the first five letters of its stem
_STRAY = 1  # Chinese characters of a clause outside the question and these words that may still be no claim


# The gate: a clause with no word of the evidence as written is spared its analysis (3-9 µs a claim, made only for the
# rules that read it). The words with their usual endings, looked up in the crate for an ASCII text (0.3 µs; one
# pattern of them all took 10 µs a claim); a text beyond ASCII by its letter runs and its Chinese evidence words.
def _written(word: str) -> set[str]:
    stem = word[:-1] if word.endswith(("e", "y")) else word
    return {word, word + "s", word + "es", word + "ed", word + "d", stem + "ing", stem + "ies", stem + "ied"}


_EVIDENCE_WRITTEN = frozenset(form for word in (*_EN_EVIDENCE, *_CHANNEL_NOUNS) for form in _written(word))
_HINT_GATE = WordGate(sorted(_EVIDENCE_WRITTEN), "".join(chr(code) for code in range(128) if not chr(code).isalpha()))


def may_say_nothing(text: str) -> bool:
    """Whether a claim's text holds a word that may be evidence that it claims nothing new."""
    if text.isascii():
        return bool(_HINT_GATE.meets_in(text))
    return not _EVIDENCE_WRITTEN.isdisjoint(letter_runs(text.lower())) or _ZH_EVIDENCE_WORDS.search(text) is not None


def says_nothing_new(parsed: Clause, question: Clause) -> bool:
    """Whether a clause claims nothing about what was asked (the module's docstring)."""
    if parsed.negated:  # "it isn't open on Sundays" answers
        return False
    if parsed.quantities - question.quantities and (
            _REFERENCE.search(parsed.text) is None or clause(_REFERENCE.sub(" ", parsed.text)).quantities - question.quantities):
        return False
    allowed = question.terms | META_WORDS
    own = (parsed.words | parsed.names) - question.names - allowed
    if own:
        named = frozenset(stem_words(" ".join(m.group(1) for m in _CHANNEL_NAME.finditer(parsed.text)).lower().split()))
        asked = {term[:_PREFIX] for term in question.terms if len(term) >= _PREFIX}
        if any(word not in named and word[:_PREFIX] not in asked for word in own):
            return False
    met = bool(parsed.words & EVIDENCE) or _CHANNEL_NAME.search(parsed.text) is not None
    if parsed.cjk_parts:
        stray = sum(1 for char in _HAN.findall(_ZH_META.sub("", parsed.text))
                    if char not in question.chars and char not in CJK_FUNCTION)
        return (met or _ZH_EVIDENCE_WORDS.search(parsed.text) is not None) and stray <= _STRAY
    return met
