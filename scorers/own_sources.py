"""What the speaker's own sources cover: "The excerpts I was given do touch on shipping", "My context only describes
resetting a password", "The warranty text in my sources is about laptops specifically", "The repair documents available
to me mention turnaround times only", 现有资料只说明了配送范围, 提供给我的资料里. A strict-prompt RAG assistant refuses
so: such a clause claims nothing about the world (nothing the chunks must support), so beside a refusal it is said
around it (scorers/refusal.py reads it as it reads a referral). The sources must be the speaker's own ("my", "I was
given", "available to me", 现有, 提供给我的): "Our warranty covers laptops for 2 years" and "The warranty text says 2
years" stay claims. Once named, what they leave out is a refusal ("but nothing about how long the bank takes", 没提到…),
and so is what is not in them (纸质发票的寄送时间不在我参考的说明里).
"""

from __future__ import annotations

import re

from ragpulse.scorers.refusal_words import SOURCE_NOUN
from ragpulse.scorers.refusal_zh import HAN

_OWN = (r"(?:(?:i|we)\s+(?:was|were|am|are|have\s+been|['’]ve\s+been)\s+(?:given|provided|shown|sent|handed)|"
        r"(?:available|provided|given|shown|supplied)\s+to\s+(?:me|us)|(?:in|from)\s+my\s+(?:[\w-]+\s+)?" + SOURCE_NOUN + r"|"
        r"i\s+(?:have|['’]ve\s+got|can\s+see|can\s+access|retrieved|found|pulled\s+up|looked\s+at|checked|consulted)|"
        r"in\s+front\s+of\s+(?:me|us))")
_COVER = (r"(?:touch(?:es)?\s+on|mentions?|describes?|covers?|discuss(?:es)?|address(?:es)?|talks?\s+about|deals?\s+with|"
          r"refers?\s+to|lists?|(?:is|are)\s+(?:all\s+|only\s+|just\s+|entirely\s+)?(?:about|on)|says?|explains?|outlines?)")
# The retrieval named as the speaker's sources: "The retrieved passages concern gift cards", "The retrieval returned
# return-policy passages only", "Both retrieved sources relate to …" (an answer template's, scorers/templates.py)
_RETRIEVED = (rf"(?:the|these|those|both|two|all)\s+(?:[\w-]+\s+){{0,2}}?retrieved\s+(?:[\w-]+\s+){{0,2}}?{SOURCE_NOUN}|"
              r"the\s+retrieval(?:\s+set)?")
_EN = re.compile(rf"^\W*(?:(?:and|but|so)\s+)?(?:(?:the|these|those|any)\s+(?:[\w-]+\s+){{0,3}}?{SOURCE_NOUN}(?:\s+{_OWN}|(?=\s+(?:only|just)\s))|my\s+(?:[\w-]+\s+){{0,2}}?"
                 rf"{SOURCE_NOUN}|{_RETRIEVED})\s+(?:(?:only|do|does|did|just|mainly|mostly|really)\s+)*"
                 rf"(?:{_COVER}|concerns?|relates?\s+to|returned|surfaced)\b", re.IGNORECASE)
# The speaker holding them: "I've got the help-centre article on gift cards in front of me"
_EN_HELD = re.compile(rf"^\W*(?:i|we)\s*(?:['’]ve\s+got|have(?:\s+got)?|can\s+see|['’]m\s+looking\s+at|am\s+looking\s+at)\s+"
                      rf"(?:the|a|an|some|this|these)\s+(?:[\w-]+\s+){{0,3}}?{SOURCE_NOUN}\b[^,;.]{{0,50}}?\s+(?:in\s+front\s+of\s+"
                      r"(?:me|us)|open|up)\W*$", re.IGNORECASE)
# Said of them once named: "but nothing about how long the bank takes", "which is only about password resets"
_EN_NOTHING = re.compile(r"^\W*(?:but|and|yet)?\s*(?:(?:there['’]s|there\s+is|they\s+have|it\s+has)\s+)?nothing\s+(?:about|on|"
                         r"regarding|concerning|for|that)\b|^\W*but\s+not\b", re.IGNORECASE)
_EN_WHICH = re.compile(r"^\W*(?:which|that)\s+(?:(?:is|are|was)\s+(?:all\s+|only\s+|just\s+|entirely\s+|mainly\s+)?(?:about|on)|"
                       r"(?:only\s+|just\s+|mainly\s+)?(?:covers?|mentions?|describes?|talks?\s+about|deals?\s+with))\b|"
                       # "and they cover password resets only", "and the text is about laptops only"
                       r"^\W*(?:and\s+)?(?:they|it|the\s+(?:documents?|context|texts?))\s+(?:(?:is|are)\s+(?:all\s+|only\s+|just\s+|"
                       r"entirely\s+|mainly\s+)?about|(?:only\s+|just\s+|mainly\s+)?(?:covers?|mentions?|describes?|talks?\s+about|"
                       r"deals?\s+with|lists?))\b", re.IGNORECASE)
# A refusal that names them: "isn't covered by the help article I pulled up"
_EN_NAMES = re.compile(rf"\b{SOURCE_NOUN}\s+{_OWN}|\bmy\s+(?:[\w-]+\s+){{0,2}}?{SOURCE_NOUN}\b", re.IGNORECASE)
# 现有资料只说明了…, 提供给我的资料里, 我手头的文档中只提到…: the speaker's sources as the subject or the place
# and the retrieval as the speaker's sources (本次检索到的是…, 检索结果为…, 两条检索来源分别涉及…)
_ZH = re.compile(r"^[-*\s]*(?:本次|这次|两条|两段)?检索(?:到的|结果|来源|片段|内容)(?:内容)?(?:为|是|分别|只|仅|涉及|讲|关于)|"
                 r"^(?:现有|目前的?|提供给我的|给我的|我(?:这边|这里)?(?:的|手头的?|手上的?|能查到的|能看到的|看到的|参考的|"
                 r"查到的))(?:参考)?[\u3400-\u9fff]{0,4}?(?:资料|文档|材料|知识库|内容|信息|说明|条款|介绍|文章)(?:里|中|上)?(?:$|"
                 r"(?:只|仅|就|主要)?(?:说明|提到|提及|介绍|涉及|讲|写|包含|覆盖|针对|适用于|是关于)了?)|"
                 # the sources named as the reply's basis, alone in their clause: 根据提供的上下文，…
                 r"^(?:根据|基于|依据)(?:所?提供的|给出的|检索到的)?(?:上下文|资料|文档|材料)$")
# Not in them (纸质发票的寄送时间不在我参考的说明里), or a help page silent (帮助中心的会员介绍里也没讲): a refusal, named or not
_ZH_NOT_IN = re.compile(r"不在(?:我|现有|提供给我)[^，。；！？]{0,8}?(?:资料|文档|材料|知识库|内容|信息|说明)(?:里|中|范围)|"
                        r"^[^，。；！？]{0,12}?(?:说明|介绍|文档|资料|页面|帮助中心|知识库|条款|文章)(?:里|中|上)(?:也|都|并)?"
                        r"(?:没|未)有?(?:讲|提到?|写|说|涉及|提及)")
# What the sources leave out, said of them once they are named: "pricing is absent from them", "isn't covered in it",
# "tablets aren't addressed there", 没提到寄往澳门的时效, 对重新注册的时间未作说明
_EN_GAP = re.compile(r"\b(?:is|are)\s+(?:absent|missing)\s+(?:from|in)\s+(?:it|them|there)\b|\b(?:is|are)\s+beyond\s+(?:it|them)\W*$|\b(?:is|are)\s*(?:n['’]t|not)\s+"
                     r"(?:\w+\s+)?(?:covered|mentioned|addressed|included|given|listed|described|specified|stated)\s+"
                     r"(?:in\s+(?:it|them)|there|at\s+all)\b", re.IGNORECASE)
_ZH_GAP = re.compile(r"(?:没|未|^不)(?:有)?(?:作|做)?(?:提到|提及|说明|写|讲|涉及|包含|覆盖)")
# What they cover, said again after them (关于注销只提到了订单记录的处理)
_ZH_ONLY = re.compile(r"^(?:关于[^，。；]{1,12}?)?(?:只|仅|就)(?:说明|提到|提及|介绍|涉及|讲|写)")
_NEGATION = re.compile(r"\b(?:not|no|never)\b|n['’]t\b", re.IGNORECASE)
# 这一点, 这点: "this point", no number of the clause's own (建议您咨询物流客服 said of it)
THIS_POINT = re.compile(r"(?:这|那)一?点")


def of_own_sources(text: str, named: bool) -> str:
    """"referral" for a clause that says what the speaker's own sources cover (no claim beside a refusal), "refusal"
    for one that says what they leave out once `named` (an earlier clause named them); "" otherwise."""
    text = text.strip()
    if not text.isascii() and HAN.search(text):
        if _ZH.match(text) or named and _ZH_ONLY.match(text):
            return "referral"
        return "refusal" if named and _ZH_GAP.search(text) or _ZH_NOT_IN.search(text) else ""
    if _EN.match(text):  # "… are about shipping, not about engraving" declines itself: read as before
        return "" if _NEGATION.search(text) else "referral"
    if _EN_HELD.match(text) or named and _EN_WHICH.match(text):
        return "referral"
    return "refusal" if named and (_EN_GAP.search(text) or _EN_NOTHING.match(text)) else ""


def names_own_sources(text: str) -> bool:
    """Whether a refusal names the speaker's own sources ("isn't covered by the help article I pulled up")."""
    return text.isascii() and _EN_NAMES.search(text) is not None
