"""An answer held to a markdown answer template, a common production RAG output format (scorers/refusal.py's read):
field labels (**Answer:**, **Details:**, Reason:, Next step:, ### Summary; 答复, 说明, 原因, 下一步, 摘要), metadata fields
(**Sources:** [1], **Confidence:** low, Status: ESCALATED, escalation: FIN-L2, a ticket; 来源, 置信度, 状态, 工单号), key:
value blocks in a code fence and disclaimer footers.

- A format field's label is scaffolding, no claim: blanked (one character for one), its value read as a sentence of
  its own. Only a closed class of format fields' names: a content label ("Return window: 30 days", 退货期限：30天) is a
  claim and stays one.
- A metadata field (sources, confidence, status, escalation, a ticket's number) and a footer about the response itself
  ("_This response is informational and does not constitute financial advice._", 以上内容不构成金融建议) say nothing of
  the world: the whole line blanked; so are a list's marks and a ticket opened ("Ticket INC-… has been opened").
- The answer field's value that declines ("**Answer:** N/A", "Unknown.", "Insufficient grounding.", "Pending manual
  assessment", 不适用, 依据缺失, 暂无可用依据, 无从判断): a refusal, as a fallback rule's match is (its span returned); beside
  it the next step's value, without a number of its own, is the refusal's referral.
- Said of the assistant in the third person ("The assistant cannot say", "this assistant is not authorised to …",
  本助手不作价格估算, 超出本助手权限) and of the retrieval named as the gap ("The retrieved passages concern X; neither
  addresses Y", "not answerable from this retrieval set", 检索结果未涉及, 不在本次检索范围内): refusals wherever they
  are said (role_declines; scorers/refusal.py reads them only in an answer that names the assistant or the retrieval).

The gate (is_template): a metadata field's line (what precedes each colon on its line, when short) and a line that
opens with a known field label; not an agent's trace. FaithBench's summaries end in "Note: …" or "Summary: …" without
a metadata field: read as before.
"""

from __future__ import annotations

import re

from ragpulse.scorers.text import blanked

# The closed class of format fields: the answer itself, then the others whose value is read as a sentence
_ANSWER_FIELDS = (r"answer|short\s+answer|final\s+answer|summary|result|resolution|outcome|conclusion|response|"
                  r"答复|回答|答案|结论|摘要|结果|回复")
_FORMAT_FIELDS = (r"details?|explanation|reasons?|rationale|basis|notes?|next\s+steps?|action|recommended\s+action|"
                  r"recommendations?|suggestion|disclaimer|caveats?|limitations?|scope|"
                  r"说明|详情|原因|理由|依据|下一步|建议|处理建议|备注|注意|免责声明|提示")
_METADATA_FIELDS = (r"sources?(?:\s+used)?|references?|citations?|cited|confidence(?:\s+level)?|status|escalat(?:ion|ed(?:\s+to)?)|"
                    r"tickets?(?:\s+(?:id|no\.?|number))?|case(?:\s+id)?|ref|priority|tags?|category|route[d]?(?:\s+to)?|queue|"
                    r"来源|参考来源|引用|置信度|可信度|状态|工单号?|升级|转交|优先级|分类")
# What opens a field's line: a list's or a quote's mark, a heading's hashes, bold or italic marks
_OPEN = r"^[^\S\n]*(?:[-*+>][^\S\n]+)?(?:#{1,6}[^\S\n]*)?(?:\*\*|__|\*|_)?[^\S\n]*"
_CLOSE = r"[^\S\n]*(?:\*\*|__|\*|_)?[^\S\n]*[:：][^\S\n]*(?:\*\*|__|\*|_)?[^\S\n]*"
_LABEL = re.compile(rf"{_OPEN}(?P<field>{_ANSWER_FIELDS}|{_FORMAT_FIELDS}){_CLOSE}", re.IGNORECASE | re.MULTILINE)
_METADATA_HEAD = re.compile(rf"[^\S\n]*(?:[-*+>][^\S\n]+)?(?:#{{1,6}}[^\S\n]*)?[*_]*[^\S\n]*(?:{_METADATA_FIELDS})[^\S\n]*[*_]*[^\S\n]*",
                            re.IGNORECASE)
_HEAD_CHARS = 40
_METADATA_LINE = re.compile(rf"{_OPEN}(?:{_METADATA_FIELDS}){_CLOSE}[^\n]*", re.IGNORECASE | re.MULTILINE)
# A heading of the closed class alone on its line ("### Summary", "**Details:**", "## 摘要"): the next line is its value
_HEADING = re.compile(rf"^[^\S\n]*(?:#{{1,6}}|\*\*|__)[^\S\n]*(?P<field>{_ANSWER_FIELDS}|{_FORMAT_FIELDS})[^\S\n]*[:：]?"
                      r"[^\S\n]*(?:\*\*|__)?[^\S\n]*$", re.IGNORECASE | re.MULTILINE)
_ANSWER = re.compile(_ANSWER_FIELDS, re.IGNORECASE)
_TRACE = re.compile(r"<think>|^[^\S\n]*(?:thought|thinking|reasoning|action|observation)[^\S\n]*[:：]", re.IGNORECASE | re.MULTILINE)
# What the asker may do next, beside an answer field that declines: the refusal's referral
_NEXT = re.compile(r"next\s+steps?|action|recommended\s+action|下一步|处理建议", re.IGNORECASE)
# A list's mark, and a ticket opened told as a line's sentence ("Ticket INC-20588 has been opened", 已为您创建工单 INC-30412):
# the form's and the ticket field's, no claim
_BULLET = re.compile(r"^[^\S\n]*[-*+•][^\S\n]+", re.MULTILINE)
_TICKET = re.compile(r"(?<![^\s;；，,])(?:an?\s+)?(?:ticket|case)\s+[*_]*(?:#\s*)?[A-Z]*-?\d[\w-]*[*_]*\s+(?:has\s+been|was|is)\s+"
                     r"(?:opened|created|raised|logged|filed)\b|已(?:为您|为你)?(?:创建|提交|生成)了?工单\s*[A-Z]*-?\d[\w-]*",
                     re.IGNORECASE)
# A footer about the response itself: "This response is informational and does not constitute financial advice.",
# 以上内容不构成金融建议, 本回复仅供参考
_FOOTER = re.compile(r"^[^\S\n]*(?:>[^\S\n]*)?[_*]*[^\S\n]*(?:(?:this|the\s+above)\s+(?:response|answer|reply|information|content)\s+"
                     r"(?:is\s+(?:provided\s+)?(?:for\s+)?information(?:al)?(?:\s+purposes)?(?:\s+only)?\b|does\s*(?:n['’]t|not)\s+"
                     r"constitute\b|is\s+not\s+(?:legal|financial|medical|professional)\b)|(?:以上|本|该)(?:内容|回复|答复|回答|信息)"
                     r"[^\n。]{0,8}(?:仅供参考|不构成))[^\n]*$", re.IGNORECASE | re.MULTILINE)
# The answer field's value that declines: one of a closed class, alone in its clause (a tail of a preposition or an
# infinitive allowed: "Insufficient context to determine", "Out of scope for this assistant")
_EN_DECLINED = (r"n/?a|[—–-]+|none|null|nil|unknown|unclear|undetermined|indeterminate|tbd|tbc|unavailable|escalated|"
                r"not\s+(?:determinable|determined|known|available|applicable|answerable|confirmed|verified|covered|in\s+scope)|"
                r"out\s+of\s+scope|pending(?:\s+(?:manual|human|agent|specialist|further))?(?:\s+(?:review|assessment|"
                r"confirmation|verification|check))?|(?:needs|requires)\s+(?:human|manual|agent)\s+review|"
                r"insufficient\s+(?:context|grounding|information|info|evidence|data|sources?)|"
                r"no\s+(?:(?:grounded|supported|verified|confirmed|reliable|definitive)\s+)?(?:answer|determination|information|"
                r"data|result)s?(?:\s+(?:available|made|found|given|possible))?|cannot\s+be\s+(?:determined|confirmed|answered)|"
                r"(?:[\w-]+\s+){0,4}?(?:could|can)\s*(?:not|n['’]t)\s+be\s+(?:verified|confirmed|determined|established)|"
                r"unable\s+to\s+(?:determine|confirm|answer|quote|say|verify|advise|comment|state)(?:\s+[^,;.\n—–]{1,60})?")
_EN_VALUE = re.compile(rf"(?:{_EN_DECLINED})(?:\s+(?:to|for|with|at|from|in|on|by|as|based)\b[^,;.\n—–]{{0,60}})?[.!]?",
                       re.IGNORECASE)
_ZH_VALUE = re.compile(r"(?:N/?A|[—–-]+|不适用|无|暂无|未知|不详|待定|(?:暂)?无(?:可用|相关|可靠)?(?:依据|资料|信息|答案|支撑材料)|"
                       r"(?:依据|信息|资料|材料|上下文)(?:不足|缺失)|无从(?:判断|确认|回答)|(?:暂)?不(?:作|予)?(?:判断|作答|答复|回答)|"
                       r"(?:本次)?(?:暂)?不作答|暂?不清楚|(?:待|需)人工(?:判定|核实|复核|确认|处理|评估)|待(?:复核|核实|确认|评估)|"
                       r"检索(?:内容|结果)?可信度不足|超出[^，。；\n]{0,10}(?:范围|权限)|不属于[^，。；\n]{0,12}范围)[。！]?")
_VALUE_PARTS = re.compile(r"[^,;，；—–\n]+")


_FIELD = re.compile(rf"(?P<answer>{_ANSWER_FIELDS})|(?P<format>{_FORMAT_FIELDS})|{_METADATA_FIELDS}", re.IGNORECASE)


def field_kind(name: str) -> str | None:
    """What a field's name is (scorers/structured_output.py reads a JSON answer's keys so): "answer" (answer, response,
    答复), "format" for another of the closed class whose value is read as a sentence (explanation, note, 说明),
    "metadata" for one that says nothing of the world (sources, confidence, status, 状态), None for a content field
    ("Return window")."""
    field = _FIELD.fullmatch(name.strip())
    return None if field is None else "answer" if field["answer"] else "format" if field["format"] else "metadata"


def is_template(answer: str) -> bool:
    """The gate: a metadata field's line (a template's mark: a summary's "Note:" and "Summary:" alone are none) and a
    line that opens with a known field label or a closed-class heading; not an agent's trace or a reasoning model's
    thinking (answer_form.as_said reads its "Answer:")."""
    if ":" not in answer and "：" not in answer or not _has_metadata(answer):
        return False
    return (_LABEL.search(answer) is not None or _HEADING.search(answer) is not None) and _TRACE.search(answer) is None


def _has_metadata(answer: str) -> bool:
    """Whether a line opens with a metadata field: what comes before each colon on its line, read only when short (a
    search of every line took 1.6 µs over a summary)."""
    for colon in (":", "："):
        at = answer.find(colon)
        while at >= 0:
            start = answer.rfind("\n", 0, at) + 1
            if at - start <= _HEAD_CHARS and _METADATA_HEAD.fullmatch(answer, start, at) is not None:
                return True
            at = answer.find(colon, at + 1)
    return False


def template(answer: str) -> tuple[str, list[tuple[int, int]]]:
    """The answer with its template read (one character for one): metadata lines and footers blanked, format labels,
    a list's marks and a ticket opened blanked; and the spans of the answer field's clauses that decline,
    with the next step's beside them."""
    answer = _METADATA_LINE.sub(blanked, answer)
    values: list[tuple[str, int]] = []  # (the field, where its value starts)

    def field(match: re.Match[str]) -> str:  # a heading's or a label's field noted as it is blanked
        values.append((match.group("field").strip(), match.end()))
        return blanked(match)

    answer = _LABEL.sub(field, _HEADING.sub(field, answer))
    answer = _FOOTER.sub(blanked, answer)  # a disclaimer's footer, its label blanked first
    answer = _TICKET.sub(blanked, _BULLET.sub(blanked, answer))
    declined = [span for field, start in values if _ANSWER.fullmatch(field) for span in _declined(answer, start)]
    if declined:  # the next step beside it, without a number of its own: the refusal's referral
        declined.extend(span for field, start in values if _NEXT.fullmatch(field) and (span := _line(answer, start))
                        and not any(char.isdigit() for char in answer[span[0]:span[1]]))
    return answer, declined


def _line_end(answer: str, start: int) -> int:
    end = answer.find("\n", start)
    return len(answer) if end < 0 else end


def _line(answer: str, start: int) -> tuple[int, int] | None:
    """The span of a field's value on its line from `start`, None when the line holds none."""
    end = _line_end(answer, start)
    return (start, end) if answer[start:end].strip() else None


def _declined(answer: str, start: int) -> list[tuple[int, int]]:
    """The spans of the answer field's value (its first line with words, from `start`) whose clauses decline."""
    while start < len(answer) and answer[start].isspace():
        start += 1
    end = _line_end(answer, start)
    spans = []
    for part in _VALUE_PARTS.finditer(answer, start, end):
        text = part.group().strip()
        if text and (_EN_VALUE.fullmatch(text) or _ZH_VALUE.fullmatch(text)):
            spans.append((part.start(), part.end()))
    if not spans and (dash := answer[start:end].strip()) and _EN_VALUE.fullmatch(dash):  # "—" alone
        spans.append((start, end))
    return spans


# The assistant in the third person declining: "The assistant cannot say", "this assistant is not authorised to issue
# them", "gives no binding statements", "is not something the assistant decides", "not by the assistant", "outside what
# this assistant is cleared to confirm"; 本助手不作价格估算, 超出本助手权限, 不属于本助手答复范围
_ASSISTANT = r"(?:the|this|our)\s+(?:[\w-]+\s+)?assistant"
_DECIDING = (r"(?:quote|state|say|answer|confirm|decide|advise|provide|give|issue|discuss|handle|cover|share|comment|"
             r"estimate|determine|approve|pre-approve|promise|guarantee|offer|speak|verify|assess|rule|make|know)")
_EN_ROLE = (rf"\b{_ASSISTANT}\s+(?:(?:does|did|will|can|could|may|would)\s*(?:n['’]?t|not)|cannot|won['’]t)\s+(?:\w+\s+)?{_DECIDING}|"
            rf"\b{_ASSISTANT}\s+(?:is|was)\s*(?:n['’]?t|not)\s+(?:\w+\s+)?(?:authori[sz]ed|permitted|allowed|cleared|able|"
            rf"in\s+a\s+position)\b|\b{_ASSISTANT}\s+is\s+unable\b|\b{_ASSISTANT}\s+neither\b|"
            rf"\b{_ASSISTANT}\s+(?:gives|makes|offers|provides|issues|states)\s+no\b|"
            rf"\bnot\s+(?:something|anything|a\s+\w+)\s+(?:that\s+)?{_ASSISTANT}\s+(?:can\s+|will\s+|may\s+)?{_DECIDING}|"
            rf"\bnot\s+by\s+{_ASSISTANT}\b|\b(?:outside|beyond)\s+(?:the\s+scope\s+of\s+)?(?:what\s+)?{_ASSISTANT}\b|"
            rf"\bout\s+of\s+scope\s+for\s+{_ASSISTANT}\b|\b{_ASSISTANT}\s+(?:defers|leaves\s+(?:this|that|it))\s+to\b")
_ZH_ASSISTANT = r"(?:本|该|此|当前)(?:智能)?助手"
_ZH_ROLE = (rf"{_ZH_ASSISTANT}[^，。；！？]{{0,4}}?(?:不|无法|不能|无从|未被|不被)[^，。；！？]{{0,10}}?(?:答复|回答|作答|确认|判断|估算|"
            r"估价|转述|承诺|提供|建议|代为|作出|处理|评估|保证|报价|解答|具备|允许|授权)|"
            rf"(?:超出|不属于|不在|不是)(?:了)?{_ZH_ASSISTANT}|"
            r"^[-*\s]*(?:不|无法)(?:提供|作出?|予以?|给出)[^，。；！？]{0,6}(?:建议|答复|判断|估算|意见|承诺)$")  # its subject left out
# The retrieval named as the gap: "The retrieved passages concern gift cards; neither addresses price matching",
# "not answerable from this retrieval set", "None of the retrieved documents concern privacy", "is a topic the
# retrieved context does not touch on", "The sources returned (…) are unrelated to …", "so no policy is stated here";
# 检索结果未涉及, 不在本次检索范围内, 均与…无关, 不属于本次检索内容所覆盖的话题
_RETRIEVAL = r"(?:supplied\s+for\s+this\s+(?:question|query|request)|retriev\w*|(?:sources?|results?|passages?|documents?)\s+returned|returned\s+(?:sources?|passages?|documents?))"
_COVERS = r"(?:address(?:es)?|concerns?|relates?|covers?|mentions?|touch(?:es)?|deals?|discuss(?:es)?|appl(?:y|ies))"
_EN_GAP = (rf"\bnot\s+(?:answerable|covered|addressed|found|available|included)\s+(?:from|in|by|within)\s+(?:this|the)\s+"
           rf"(?:\w+\s+)?{_RETRIEVAL}|\b(?:neither|none\s+of\s+(?:the|these))\s+(?:\w+\s+)?{_RETRIEVAL}\b[^.;]{{0,30}}?\b{_COVERS}\b|"
           rf"\b{_RETRIEVAL}\b[^.;]{{0,60}}?\b(?:do(?:es)?|did)\s*(?:n['’]?t|not)\s+{_COVERS}\b|"
           rf"\b{_RETRIEVAL}\b[^.;]{{0,60}}?\b(?:unrelated|irrelevant|not\s+(?:relevant|related|conclusive))\b|"
           rf"\b{_RETRIEVAL}\b[^.;]{{0,60}}?\b(?:says?|has|contains?|mentions?)\s+(?:nothing|no)\b|"
           rf"\b{_RETRIEVAL}\b[^.;]{{0,60}}?\b(?:is|are|was|were)\s+not\s+(?:confirmed|verified|known)\b|"
           rf"\b{_RETRIEVAL}\b[^.;]{{0,60}}?\bbelow\s+the\s+(?:relevance\s+)?threshold\b")
# Said of them once named, in an answer that names them: "neither addresses …", "is not among them", "so no policy is
# stated here", "so it was not used to confirm …"
_EN_AFTER = (r"^\W*(?:and\s+)?neither\s+(?:of\s+them\s+)?(?:address(?:es)?|concerns?|relates?\s+to|covers?|mentions?)\b|"
             r"\b(?:is|are)\s*(?:n['’]?t|not)\s+among\s+them\b|"
             r"\bno\s+(?:[\w-]+\s+){1,2}(?:is|are|was|were)\s+(?:stated|given|quoted|provided|offered|confirmed)\s+here\b|"
             r"\b(?:was|were)\s+not\s+used\s+to\s+(?:confirm|answer|state|support)\b")
_ZH_GAP = (r"(?:检索|返回的)[^，。；！？]{0,20}?(?:未|没有?|不)(?:涉及|提及|提到|覆盖|包含|采用)|不(?:在|属于)[^，。；！？]{0,6}?检索[^，。；！？]{0,12}?"
           r"(?:范围|之内|内容|结果|之中)|检索[^，。；！？]{0,16}?(?:之外|以外)|(?:均|都)?与[^，。；！？]{1,16}?(?:无关|不相关)$|"
           r"不在[^，。；！？]{0,4}检索|检索[^，。；！？]{0,8}?(?:相关度|可信度)[^，。；！？]{0,4}(?:偏低|不足|较低)|"
           r"故?此处不(?:陈述|说明|给出|提供)")
# Each tried only where its words are (an alternation of all of them, searched over a summary, took 0.7 µs a character)
_EN_ROLE_RE = re.compile(_EN_ROLE, re.IGNORECASE)
_EN_GAP_RE = re.compile(_EN_GAP, re.IGNORECASE)
_EN_AFTER_RE = re.compile(_EN_AFTER, re.IGNORECASE)
_ZH_RE = re.compile(f"{_ZH_ROLE}|{_ZH_GAP}")
_AFTER_WORDS = ("either", "among", " here", "not used")


def names_a_role(text: str) -> bool:
    """The gate of role_declines, once an answer: it names the assistant or the retrieval (substrings that need no
    lower-casing; the Chinese ones looked up only beyond ASCII)."""
    return ("ssistant" in text or _names_retrieval(text)
            or not text.isascii() and ("助手" in text or "检索" in text or "返回的" in text))


def _names_retrieval(text: str) -> bool:
    return "etriev" in text or "ources returned" in text or "upplied for this" in text


def role_declines(text: str) -> re.Match[str] | None:
    """Where a clause of an answer that names the assistant or the retrieval (names_a_role) declines as the assistant
    in the third person or names the retrieval as the gap, each pattern tried only around its words."""
    found = _near(_EN_ROLE_RE, text, ("ssistant",), 80, 100)
    if found is None:
        found = _near(_EN_GAP_RE, text, ("etriev", "ources returned", "upplied for this"), 80, 140)
    if found is None and any(word in text for word in _AFTER_WORDS):
        found = _EN_AFTER_RE.search(text)
    if found is None and not text.isascii():
        found = _ZH_RE.search(text)
    return found


def _near(pattern: re.Pattern[str], text: str, words: tuple[str, ...], before: int, after: int) -> re.Match[str] | None:
    """The pattern's first match within `before` and `after` characters of one of the words (each holds one of them:
    a search over a whole summary took 60-90 µs)."""
    for word in words:
        at = text.find(word)
        while at >= 0:
            if (found := pattern.search(text, max(0, at - before), at + after)) is not None:
                return found
            at = text.find(word, at + 1)
    return None
