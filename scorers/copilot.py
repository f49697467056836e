"""An agent-assist copilot's output, read as what the customer is told plus the agent's guidance (scorers/refusal.py's
read): a contact-centre copilot sits beside a human agent, so the logged answer is guidance to the agent rather than
a reply to the customer.

- What the customer is told is claims: a draft reply's label ("Suggested reply:", "Draft:", 建议回复：, 推荐话术：) is
  blanked, its text read as before; so is an instruction to tell ("Tell the customer …", "Let them know …", "Confirm to
  the caller: …", 请告知客户…, 可告知…): what follows it is told and stays judged.
- The agent's own lines are no claims about the world: a note's label ("Agent note:", "Note to agent:", "Internal:",
  坐席提示：, 内部备注：) is blanked; a metadata line ("Disposition: …", "Use macro: …", "Confidence: …", "Article match:
  0.22", 处置码, 工单标签, 置信度, 知识库匹配度, 命中文章) blanked whole. Guidance about the conversation ("Don't quote a
  timeframe", "Escalate to Tier 2", "Offer a transfer to …", "Hold off on …", "Log the contact as …", 请勿承诺, 转二线,
  升级工单至…, 坐席不报价) and a knowledge-gap note ("No KB article covers …", "KB coverage: none", "isn't in the
  retrieved articles", "Balance isn't visible to the copilot", 未入库, 知识库条目缺失, 未命中任何条目) are the speaker's
  conduct or its lack: refusing clauses (their spans returned, as a fallback rule's matches are). An answer of these
  only is a refusal; beside a claim, a partial.
- Never a clause with a number of its own (a tier's, an extension's, a code's or a score's digits are none: "Escalate
  to Tier 2 if the order is over $500" is a claim) nor guidance that gives a reason ("…, since refunds are instant"):
  those are read as before.

The gate (is_copilot): a copilot's label or metadata line opening a line, an instruction to tell the customer, a routing
move or a held-back quote opening a sentence, or the agent's desk named (the KB, the copilot, a tier; 坐席, 知识库,
告知客户, 转二线, 请勿承诺). Elsewhere nothing here is read (none of the benchmarks' 18,640 answers passes it).
"""

from __future__ import annotations

import re

from ragpulse._native import Substrings
from ragpulse.scorers import refusal_zh as zh
from ragpulse.scorers.text import blanked, clause, clauses, sentences

_OPEN = r"^[^\S\n]*(?:[-*+•>][^\S\n]+|\d{1,2}[.)][^\S\n]+)?(?:\*\*|__)?[^\S\n]*"
_CLOSE = r"[^\S\n]*(?:\*\*|__)?[^\S\n]*[:：][^\S\n]*(?:\*\*|__)?[^\S\n]*"
# What the customer is told and the agent's notes: the label blanked, the value read
_LABELS = (r"suggested\s+(?:reply|response|wording)|draft(?:\s+(?:reply|response))?|reply\s+draft|say|script|"
           r"agent\s+(?:note|tip|hint|guidance)|notes?\s+(?:to|for)\s+(?:the\s+)?agent|internal(?:\s+note)?|agent|copilot|"
           r"next\s+best\s+actions?|action|next\s+steps?|recommended\s+action|"
           r"建议回复|推荐话术|话术建议|参考话术|话术|坐席提示|坐席备注|内部备注|内部|下一步|操作|建议动作|建议操作|处理建议")
_LABEL = re.compile(rf"{_OPEN}(?:{_LABELS}){_CLOSE}", re.IGNORECASE | re.MULTILINE)
# A heading alone on its line ("Next best actions"): the list under it is the agent's
_HEADING = re.compile(r"^[^\S\n]*(?:#{1,6}[^\S\n]*)?(?:\*\*|__)?[^\S\n]*(?:next\s+best\s+actions?|agent\s+guidance|suggested\s+"
                      r"actions?|建议动作|处理步骤)[^\S\n]*(?:\*\*|__)?[^\S\n]*[:：]?[^\S\n]*$", re.IGNORECASE | re.MULTILINE)
# Metadata about the contact, not the world: the whole line
_METADATA = (r"disposition(?:\s+code)?|wrap(?:[-\s]?up)?(?:\s+code)?|(?:use\s+)?macro|confidence|article\s+match|kb\s+match|"
             r"match\s+score|kb\s+gap(?:\s+logged)?|case\s+tags?|tags?|queue|intent|"
             r"处置码|处置|工单标签|工单分类|工单类型|标签|置信度|知识库匹配度|匹配度|命中文章|命中条目")
# (to the line's end or its sentence's: "知识库匹配度：低（0.31）。价保类问题请升级…" goes on)
_METADATA_LINE = re.compile(rf"{_OPEN}(?:{_METADATA}){_CLOSE}(?:[^\n。！？.]|\.(?=\S))*[。！？.]?", re.IGNORECASE | re.MULTILINE)
# An instruction to tell the customer: the lead blanked, what follows is told ("Tell the customer returns are free")
_WHOM = r"(?:(?:the\s+)?(?:customer|caller|member|client|shopper|guest|user)s?|them|him|her)"
_TOLD_LEAD = re.compile(rf"^\W*(?:then\s+|and\s+|please\s+)?(?:(?:tell|inform|remind|reassure)\s+{_WHOM}|let\s+{_WHOM}\s+know|"
                        rf"(?:confirm|explain|say|mention)\s+to\s+{_WHOM}|walk\s+{_WHOM}\s+through\s+it)(?:\s+that)?\s*[:：,]?\s*"
                        r"|^\W*(?:请|可以?|可)?(?:直接|明确)?(?:告知|告诉|转告|回复|通知)(?:客户|顾客|用户|对方)?[：:，,]?\s*",
                        re.IGNORECASE)
_TOLD_KEYS = re.compile(r"tell|inform|remind|reassure|let|confirm|explain|say|mention|walk|告", re.IGNORECASE)

# -- guidance: what the agent does in the conversation, and what the copilot lacks --------------------------------

# A clause's opening that is no part of what it says: a list's mark, an arrow, a connective, a topic's label ("Courier
# collection: not covered", "Part 2: …", 维修周期：…)
_LEAD = re.compile(r"^(?:[\s\-*•>→⇒]+|\d{1,2}[.)]\s+|(?:then|and|or|so|please|otherwise|instead|if\s+(?:they|the\s+customer|"
                   r"the\s+caller)\s+(?:push(?:es)?|insists?|asks?)|if\s+that\s+(?:one\s+)?fails(?:\s+too)?)\b[\s,]*|(?:请|或|或者|可|可以|必要时|"
                   r"建议|然后|并|再|也可)(?=[转升建由交使选登勿别不]))*", re.IGNORECASE)
_TOPIC = re.compile(r"^[^:：→\n.!?。！？]{1,40}(?:[:：]|\s*→)\s*")
# Verbs of saying and committing, negated ("Don't quote a timeframe", "Do not say yes or no", "never promise a date")
_COMMIT = (r"quote|promise|guarantee|commit|confirm|rule\s+out|estimate|guess|speculate|give|offer|say|put|improvise|"
           r"troubleshoot|pre-?judge|state|cite|advise|discuss|answer|mention|share|comment|agree|approve|predict|forecast|"
           r"invent|make\s+up|go\s+into|get\s+into|assume|diagnose|interpret|pre-?empt|tell|name|suggest|volunteer")
_EN_GUIDE = re.compile("|".join((
    rf"^(?:don['’]?t|do\s+not|never|avoid|no\s+need\s+to|can['’]?t|cannot|can\s+not)\s+(?:\w+\s+)?(?:{_COMMIT})",
    # routing the contact: "Escalate to Tier 2", "Offer a transfer to …", "Hand off to …", "Log the contact as …"
    r"^(?:escalate|transfer|route|re-?route|refer|forward|hand\s+(?:it\s+|this\s+|them\s+)?(?:off|over|on)|"
    r"pass\s+(?:it|this|them)\s+(?:on|to)|send\s+(?:it|this|them|the\s+\w+)\s+to|(?:offer|suggest)\s+(?:a\s+|to\s+)?(?:warm\s+)?"
    r"(?:transfer|callback|call-?back|hand-?off)|warm\s+transfer|(?:raise|open|create|log|file)\s+(?:a|an|the)\s+(?:\w+\s+){0,2}?"
    r"(?:case|ticket|task|callback|request|contact)|(?:log|tag|flag|code|note)\s+(?:it|this|the\s+(?:\w+\s+){0,3}?(?:case|contact|"
    r"call|chat|ticket))|note\s+the\s+[\w\s-]{1,30}\s+(?:in|on)\s+the\s+(?:case|ticket|notes)|search\s+the\s+internal|"
    r"(?:point|direct|send|refer)\s+(?:the\s+)?(?:customer|caller|them|him|her)\s+to|suggest\s+(?:that\s+)?(?:the\s+)?"
    r"(?:customer|caller|they|he|she)\b|(?:advise|ask|tell|remind|encourage|invite|get)\s+(?:the\s+)?(?:customer|caller|"
    r"member|client|them|him|her)\s+to\b|hold\s+off|keep\s+(?:[\w-]+\s+){1,4}out\s+of|leave\s+(?:[\w-]+\s+){0,4}to\b|"
    r"give\s+neither|stick\s+to|check\s+(?:it|this|that|the\s+[\w\s-]{1,30}?)\s+(?:in|on)\s+(?:the\s+)?[\w\s-]{1,30}?"
    r"(?:console|tool|system|oms|crm|directory|portal)\b|confirm\s+the\s+[\w\s-]{1,30}?(?:number|details|id)\s+with\b|"
    r"verify\s+(?:the\s+)?(?:customer|caller|identity)|agent\s+to\s+\w+|send\s+(?:them\s+|the\s+customer\s+)?(?:the\s+|a\s+)?"
    r"(?:[\w-]+\s+){0,3}?(?:form|link|macro|template)\b)",
)), re.IGNORECASE)
# What the copilot lacks or leaves to others, said anywhere in the clause
_KB = r"(?:kb|knowledge[-\s]?base|articles?|retrieved\s+(?:set|articles?|results?)|article\s+returned|macro\s+list)"
_EN_GAP = re.compile("|".join((
    r"\bno\s+(?:(?:kb|matching|relevant|internal|knowledge[-\s]?base|specific)\s+)*(?:article|entry|entries|articles|coverage|match)\b",
    r"\bkb\s+coverage\W*(?:none|nil|no|zero|n/?a)\b|\bkb\s+gap\b",
    rf"(?:n['’]t|\bnot)\s+(?:\w+\s+)?(?:in|listed\s+in|documented\s+in|covered\s+(?:in|by)|part\s+of|addressed\s+by|"
    rf"included\s+in|among)\s+(?:the\s+|any\s+|our\s+)?(?:[\w-]+\s+){{0,3}}?{_KB}\b",
    r"(?:n['’]t|\bnot)\s+(?:yet\s+)?documented\b|\bundocumented\b|\bnothing\s+in\s+(?:the\s+)?kb\b|\bhas\s+no\s+(?:kb\s+)?article\b",
    r"^(?:not\s+covered|no\s+article|nothing\s+in\s+(?:the\s+)?kb)\b",
    rf"\b(?:falls?|is|are)\s+outside\s+what\s+(?:the\s+)?(?:[\w-]+\s+){{0,3}}?{_KB}",
    r"(?:n['’]t|\bnot)\s+visible\s+(?:to\s+(?:the\s+)?copilot|here|in\s+the\s+copilot)\b|\bno\s+(?:forecast|data|visibility)\s+"
    r"(?:is\s+)?available\b",
    r"\bcopilot\s+(?:is|has|does|can|will)\s*(?:n['’]t|not|no)\b|\bcopilot\s+is\s+holding\s+back\b|\bfrom\s+the\s+copilot\b",
    r"\bnot\s+(?:for\s+(?:the\s+)?(?:agent|copilot|front\s+line|us)|ours|mine)\s+to\s+\w+|\b(?:is|are)\s*(?:n['’]t|not)\s+"
    r"something\s+to\s+(?:promise|quote|confirm|commit|estimate|offer)\b|\bfrom\s+the\s+front\s+line\b|"
    r"\b(?:is|['’]s|are)\s+(?:one\s+)?for\s+(?:the|our)\s+(?:[\w-]+\s+){0,3}?(?:team|desk|department|specialists?|colleagues?)\s+"
    r"to\s+(?:say|decide|confirm|quote|answer|advise)\b",
    # a hand-off told: "a specialist will pick up the case", "you're checking with the carrier team"
    r"\b(?:a|an|the|our)\s+(?:[\w-]+\s+){0,3}?(?:specialist|team|desk|agent|colleague|advisor|adviser|services?)\s+(?:will|['’]ll|"
    r"can|is\s+going\s+to)\s+(?:\w+\s+){0,2}?(?:pick\s+up|follow\s+up|call\s+(?:back|them|you)|get\s+back|contact|reach\s+out|"
    r"be\s+in\s+touch|look\s+into|review|confirm|check)\b|\b(?:you|i|we)(?:['’]re|\s+are|['’]ll|\s+will|\s+am|['’]m)\s+(?:\w+\s+)?"
    r"(?:checking|confirming|passing|looking)\s+(?:it\s+|this\s+)?(?:with|into|on)\b",
    # a topic's owner named: "earn rates sit with Member Services", "is a supervisor decision", "goes through the privacy team"
    r"\b(?:belongs?|sits?|rests?|lies|lie)\s+(?:with|to)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?(?:team|desk|department|services?|"
    r"security|supervisors?|managers?)\b|\b(?:is|are)\s+(?:a|the)\s+(?:\w+\s+)?(?:supervisor|manager|team\s+lead)['’]?s?\s+"
    r"(?:decision|call)\b|\bgoes\s+through\s+the\s+(?:[\w-]+\s+){0,3}?(?:team|desk|department)\b",
)), re.IGNORECASE)
_ZH_VERB = r"(?:承诺|答复|回答|作答|答|报|预估|估|表态|确认|解释|猜|处理|给出|套用?|说|透露|给|拿|作|做)"
_ZH_GUIDE = re.compile("|".join((
    rf"(?:请勿|切勿|勿|别|不要|不得)(?:要)?(?:自行|直接|口头|随意|主动|擅自|私自|提前|向客户)?{_ZH_VERB}",
    rf"(?:坐席|一线|客服)(?:这边|端)?(?:先|暂)?(?:不|无法|别|勿)(?:自行|直接|口头|主动)?{_ZH_VERB}",
    r"^(?:转|转接|转给|转交|转至)(?:二线|[^，。；\n]{0,12}?(?:组|部|中心|专席|专线|专员|团队|二线|同事|客服|财务|售后))",
    r"^(?:升级|建单|登记|提交|反馈)[^，。；\n]{0,8}?(?:至|到|转|给)|^使用话术|^工单(?:类型|备注|分类|标签)",
    r"(?:请|需)?(?:升级|转接|转交)(?:工单)?(?:至|到|给)|请转",
    r"(?:^由|交由|交给|统一由|请由)[^，。；\n]{1,14}?(?:答复|回复|说明|解答|跟进|确认|排期|处理)",
    r"请(?:联系|咨询|致电|拨打)[^，。；\n]{0,12}?(?:组|部|中心|专席|专线|专员|团队|客服|热线)$",
    r"后果请由|^建议客户(?:查看|关注|咨询|联系|留意|拨打|前往|以)|^可以?直接告知$",
)))
_ZH_GAP = re.compile(r"未入库|条目缺失|未命中|无(?:相关|对应)?(?:条目|文章)|没有(?:对应|相关)?(?:条目|文章)|知识库(?:里|中|内)?"
                     r"(?:未|没有?|无)(?:说明|提及|写|涉及|收录|对应内容|相关内容)|知识库(?:里|中)?查不到|(?:不在|不属于)(?:坐席|一线|"
                     r"知识库|答复)[^，。；\n]{0,6}?范围|条目均?未涉及|无可用条目|知识库覆盖\W*无")
# What the agent's desk names: a tier or a line, an extension, a queue's or a macro's code, a score; no number of a claim
_REFERENCES = re.compile(r"\b(?:tier|level|line|ext\.?|extension|queue|macro)\s*[-#]?\s*\w*\d\w*|\b[A-Z]{2,}(?:-[\w]+)+|"
                         r"\b[A-Z]{2,}\d[\w-]*|[\w\u3400-\u9fff]+-\d+|\(\s*0?\.\d+\s*\)|（\s*0?\.\d+\s*）|[一二三]线|"
                         r"^\W*part\s+\d+", re.IGNORECASE)
_METADATA_FIELD = re.compile(rf"\W*(?:{_METADATA})\W*", re.IGNORECASE)
# A parenthesis naming where the agent sends the contact ("(ext. 4410)", "(queue RET)", "(macro WAR-02)"): no words
_REFERENCE_PARENTHESIS = re.compile(r"[(（]\s*(?:ext\.?|extension|queue|macro|tier|line|code|ref)\b[^()（）\n]{0,24}[)）]",
                                    re.IGNORECASE)
# A reason given with guidance ("Escalate to billing, since refunds are instant"): a claim of its own
_REASON = re.compile(r"[,;]\s*(?:since|because|as|given\s+that)\s+(?!(?:the\s+)?copilot\b)", re.IGNORECASE)

# The gate: a copilot's own label or metadata line opening a line, an instruction to tell the customer or an agent's
# move opening a sentence, the agent's desk named. Each tried only where its words are (one pattern searched over a
# FaithBench summary took 145 µs)
_GATE_LABEL = re.compile(r"[^\S\n]*(?:[-*+•>][^\S\n]+)?(?:#{1,6}[^\S\n]*)?(?:\*\*|__)?[^\S\n]*(?:(?:suggested\s+(?:reply|response|"
                         r"wording)|agent\s+(?:note|tip)|notes?\s+(?:to|for)\s+(?:the\s+)?agent|internal(?:\s+note)?|agent|disposition|"
                         r"use\s+macro|article\s+match|kb\s+(?:coverage|match|gap)|建议回复|推荐话术|话术建议|坐席提示|内部备注|处置码|工单标签|"
                         r"知识库匹配度|命中文章)[^\S\n]*(?:\*\*|__)?[^\S\n]*[:：]|next\s+best\s+actions?\b)", re.IGNORECASE)
# Each key's pattern, tried (lower-cased, ’ read as ') only around where the key is
_MOVE = r"(?:^|[.;!:]\s+)"  # a sentence's or a line's opening
_TO_CUSTOMER = re.compile(r"\b(?:tell|advise|inform|let|suggest(?:\s+that)?)\s+the\s+(?:customer|caller)\b")
_ROUTED = re.compile(rf"{_MOVE}(?:(?:escalate|route|transfer|hand\s+off)\s+to|offer\s+(?:a\s+|to\s+)?transfer)\b", re.MULTILINE)
_HELD_BACK = re.compile(rf"{_MOVE}(?:don't|do\s+not)\s+(?:quote|promise|guarantee|commit|estimate|guess|speculate)\b", re.MULTILINE)
_GATE_WORDS = {
    "kb": re.compile(r"\bkb\b"), "copilot": re.compile(r"\bcopilot\b"), "tier": re.compile(r"\btier[-\s]?\d\b"),
    "them know": re.compile(r"\blet\s+them\s+know\b"), "the customer": _TO_CUSTOMER, "the caller": _TO_CUSTOMER,
    "walk them": re.compile(r"\bwalk\s+them\s+through\b"), "ours to": re.compile(r"\bnot\s+ours\s+to\b"),
    "agent to": re.compile(r"\bagent\s+to\s+[a-z]"),
    "suggest": re.compile(r"\bsuggest\s+(?:that\s+)?(?:they|the\s+(?:customer|caller))\b"),
    "escalate": _ROUTED, "route to": _ROUTED, "transfer": _ROUTED, "hand off": _ROUTED, "don't": _HELD_BACK, "do not": _HELD_BACK,
}
_GATE_SUBSTRINGS = Substrings(tuple(_GATE_WORDS))
_ZH_GATE_KEYS = ("坐席", "知识库", "告知客户", "向客户", "建议客户", "转二线")
_ZH_HELD_BACK = re.compile(r"(?:请勿|勿|别|不要)(?:自行|直接|口头)?(?:承诺|答复|作答|答|报价|报|预估)")
_CJK = re.compile(r"[\u3400-\u9fff]")


def is_copilot(answer: str) -> bool:
    """Whether the answer shows an agent-assist copilot's register (the module's docstring)."""
    at = 0
    while at >= 0:  # each line's opening
        if _GATE_LABEL.match(answer, at) is not None:
            return True
        at = answer.find("\n", at)
        at = at + 1 if at >= 0 else -1
    text = answer
    if not answer.isascii():
        if any(key in answer for key in _ZH_GATE_KEYS) or (("勿" in answer or "别" in answer or "不要" in answer)
                                                          and _ZH_HELD_BACK.search(answer) is not None):
            return True
        text = answer.replace("’", "'").encode("ascii", "replace").decode("ascii")  # the crate reads ASCII
    if not _GATE_SUBSTRINGS.in_lowered(text):  # one scan in the crate (17 `find`s of a summary took 10 µs)
        return False
    lower = text.lower()
    for key, pattern in _GATE_WORDS.items():
        at = lower.find(key)
        while at >= 0:
            if pattern.search(lower, max(0, at - 24), at + 40) is not None:
                return True
            at = lower.find(key, at + 1)
    return False


def copilot(answer: str) -> tuple[str, list[tuple[int, int]]]:
    """The answer as the customer is told it and the agent is guided (one character for one): metadata lines, the
    labels and an instruction's lead to tell blanked; and the spans of the clauses that guide the agent or note the
    copilot's lack, which refuse, with a Chinese topic named just before one (手机号重新注册的时限，现有条目均未涉及)."""
    answer = _LABEL.sub(blanked, _HEADING.sub(blanked, _METADATA_LINE.sub(blanked, answer)))
    if "(" in answer or "（" in answer:
        answer = _REFERENCE_PARENTHESIS.sub(blanked, answer)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for sentence in sentences(answer):
        topic: tuple[int, int] | None = None  # a Chinese clause that names a matter, awaiting the next
        for part in clauses(sentence):
            start = answer.find(part, cursor)
            if start < 0:
                continue
            cursor = start + len(part)
            told = _told(part)
            if told:  # "Tell the customer …": what follows is told, read as before unless it guides too
                answer = answer[:start] + " " * told + answer[start + told:]
            if _guides(part[told:]):
                spans.extend(((start + told, cursor),) if topic is None else (topic, (start + told, cursor)))
            topic = (start, cursor) if not told and _CJK.search(part) and (zh.TOPIC.search(part) or zh.names_only(part)) else None
    return answer, spans


def _told(text: str) -> int:
    """The length of an instruction's lead to tell the customer what follows ("Tell the customer", 请告知客户：), 0
    when there is none or it asks them to do something ("Tell the customer to request a new link")."""
    if not _TOLD_KEYS.search(text[:40]):
        return 0
    lead = _TOLD_LEAD.match(text)
    if lead is None or re.match(r"to\s+\w", text[lead.end():], re.IGNORECASE):
        return 0
    return lead.end()


def _guides(text: str) -> bool:
    """Whether a clause guides the agent or notes what the copilot lacks, with no number of its own and no reason given."""
    body = text[_LEAD.match(text).end():]  # type: ignore[union-attr]  # _LEAD matches the empty string
    topic = _TOPIC.match(body)
    if topic is not None:
        if _METADATA_FIELD.fullmatch(body, 0, topic.end()):  # "… Confidence: very low." after a sentence: no claim
            return True
        body = body[topic.end():]
    if not body.strip() or _REASON.search(body):
        return False
    if _CJK.search(text):
        body = body[_LEAD.match(body).end():]  # type: ignore[union-attr]  # 请 after a topic: 退回渠道：请勿答
        found = _ZH_GUIDE.search(body) or _ZH_GAP.search(text) or _EN_GAP.search(text)
    else:
        found = _EN_GUIDE.search(body) or _EN_GAP.search(text)
    return found is not None and not clause(_REFERENCES.sub(" ", text)).quantities


