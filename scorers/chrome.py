"""What a channel's interface and a bot's own lines say around an answer: nothing about the world. Read by
scorers/answer_form.py (marks blanked in every answer, one character for one) and scorers/declines.py (lines said
around a refusal or a hand-off, whatever numbers they hold).

- Quick replies: a line of chips under an answer, led by a pointing emoji or an arrow or two or more apart by "|"
  ("👉 Start a return | Talk to an agent", "👉 Retry", "Yes please | Browse consoles"), or of buttons in 【…】, led by one
  or two or more (【重试】【查看订单】): what the asker may tap, short labels, no claim. A line that offers a person
  ("Talk to an agent", 【转人工】) is a hand-over, left to the refusal readings; its chips apart by "|" are said around a
  refusal ("Gift card help | Live chat").
- Chat marks: an emoji shortcode (":wave:", ":no_entry_sign:") and a mention that opens a line ("@dani —") are no words
  of a claim.
- A screen's or a message's chrome: a line of buttons or bracketed headers ("[ Call a colleague ]  [ Back ]",
  "[KIOSK BER-02 | lang=en-GB]", "[WhatsApp 09:14] 🤖 Helpdesk", [门店自助机 SH-05]), an agent's log line ("[agent]
  match=false"), a bot's status line ("> _PolicyBot v2.3 · confidence below threshold · no answer posted_").
- A signature that names an automated answerer ("Aria (automated assistant), Customer Care", "Returns Desk (auto)",
  客服中心（自动回复）), a reference ("case RC-55102", 工单 #ZX-30177), a promise of a reply's time ("Expect a reply within
  one working day", 预计一个工作日内回复), a chat menu ("Reply 1 to be connected", 回复「人工」就能转过去), a voice menu's
  prompt ("Press or say two for our returns team", 'say "agent" at any time', 按3键转维修部门, 请说"安装服务") and a hold
  ("Please stay on the line", 请稍候, 请不要挂机); "Press the power button for 10 seconds" and "say 'express' at
  checkout" are no menu.
- An e-mail auto-reply's own lines: "This is an automated message", 此邮件为系统自动回复, 请勿直接回复.
- A letter's or a text's sign-off naming a team or a brand ("– ShopCare", "After-Sales Team", 售后服务部); an agent's
  trace lines ("Thought: …", "Action: lookup_policy(…)", "Observation: 1 document returned"); a queue's notice ("you
  are number 3 in the queue", 当前排队第3位) and a reply to watch for (请留意后续邮件).
- A JSON reply's machine members: a status that defers ({"status":"deferred"}) and a reason given as an identifier
  ("reason":"policy_sensitive").
"""

from __future__ import annotations

import re

from ragpulse.scorers.text import Clause, blanked, clause

_SHORTCODE = re.compile(r"(?<![\w:/]):[a-z][a-z0-9_+-]{1,30}:(?![\w:/])")
_MENTION = re.compile(r"^[^\S\n]*(?:@[A-Za-z][\w.-]{0,30}|\*[A-Za-z][\w-]{0,30}\*(?=\s))", re.MULTILINE)  # "*PolicyBot* …"
# A voice menu's lead, key and whom it reaches: "or say two", 'say "agent"', "press star", "for our returns team"
_VOICE_LEAD = r"(?:(?:or|and|just|simply|please|you\s+can|you\s+may)\s+)*"
_VOICE_KEY = (r"\d|zero|one|two|three|four|five|six|seven|eight|nine|star|pound|hash|the\s+(?:\d|star|pound|hash)|"
              r"[\"'“‘][^\"'”’\n]{1,20}[\"'”’]")
_VOICE_WHOM = r"(?:team|department|desk|line|agent|person|representative|colleague|specialist|operator|menu|options?)\b"
_LOG_TAG = r"\[(?:agent|tool|system|bot|log|debug|trace|retriever)\]"  # what opens an agent's log line: "[agent] …"


def _bracket_headers(whole_line: bool) -> str:
    """Buttons and bracketed headers, one to four, and a short name or two after them ("[ Call a colleague ]  [ Back ]",
    "[WhatsApp 09:14] 🤖 Helpdesk"). A whole line, blanked in every answer, takes less than a clause read around a
    refusal: square brackets only (【…】 is a Chinese headline), a letter inside them ("[1]" may cite a source), only
    spaces between them; a clause takes 【…】 and up to 40 of anything inside, and anything but a word around them."""
    if whole_line:
        bracket, between, around = r"\[[^\]\n]*[^\W\d_][^\]\n]*\]", r"[^\S\n]*", r"[^\w\n]*"
    else:
        bracket, between, around = r"[\[【][^\]】\n]{1,40}[\]】]", r"\W*", r"\W*"
    return rf"(?:{bracket}{between}){{1,4}}(?:{around}[A-Za-z0-9-]{{1,20}}){{0,2}}{around}"


# Whole lines of chrome: buttons and bracketed headers, an agent's log lines, a code fence, a quoted status line in
# italics
_CHROME_LINE = re.compile(rf"^[^\S\n]*(?:{_bracket_headers(whole_line=True)}|{_LOG_TAG}[^\n]*|```\w*|>[^\S\n]*_[^_\n]{{1,120}}_)"
                          r"[^\S\n]*$", re.MULTILINE | re.IGNORECASE)

# Quick replies, a whole line: chips of a few words, letters only (no sentence's stop), led by a pointing emoji or an
# arrow, or two or more apart by "|" (a table's row opens with "|"); buttons in 【…】, led so or two or more (one alone
# on its line may be a headline)
_LEAD = r"(?:👉|👇|➡️?|→|▶️?)[\ufe0f\U0001f3fb-\U0001f3ff]*[^\S\n]*"
_CHIP = r"[A-Za-z][A-Za-z'’&-]*(?:[^\S\n]+[A-Za-z][A-Za-z'’&-]*){0,4}"
_CHIPS = rf"{_CHIP}(?:[^\S\n]*\|[^\S\n]*{_CHIP}){{0,4}}"
_BUTTON = r"【[^】\n.!?。！？]{1,10}】[^\S\n]*"
_HAND_OVER_CHIP = re.compile(r"\b(?:agents?|human|person|advisor|representative|support|team|staff|live\s+chat|chat\s+with|"
                             r"call|contact|customer\s+(?:service|care)|helpdesk|experts?|specialists?|ticket)\b|"
                             r"人工|客服|售后|专员", re.IGNORECASE)
_QUICK_REPLY_LINE = re.compile(rf"^[^\S\n]*(?:{_LEAD}(?:{_CHIPS}|(?:{_BUTTON}){{1,4}})|{_CHIP}(?:[^\S\n]*\|[^\S\n]*{_CHIP}){{1,4}}|"
                               rf"(?:{_BUTTON}){{2,4}})[^\S\n]*$", re.MULTILINE)
_QUICK_REPLY_MARK = re.compile("[|【👉👇→➡▶]")  # what every such line holds: most answers are spared the line's pattern

# A ticketing macro's line left as its template had it: a label and an unfilled placeholder ("工单号：{{ticket_no}}",
# "Ref: #{{ticket_id}}"), no words of a claim
_PLACEHOLDER_LINE = re.compile(r"^[^\S\n]*[^\n{}]{0,16}?[:：#＃\s]*\{\{[^{}\n]{1,40}\}\}[^\S\n]*$", re.MULTILINE)


def blank_marks(answer: str) -> str:
    """The answer with its emoji shortcodes, a line's opening mention, chrome lines, quick replies and a template's
    unfilled placeholder lines blanked (one character for one)."""
    if ":" in answer:
        answer = _SHORTCODE.sub(blanked, answer)
    if "@" in answer or "*" in answer:
        answer = _MENTION.sub(blanked, answer)
    if "[" in answer or "`" in answer or "_" in answer:
        answer = _CHROME_LINE.sub(blanked, answer)
    if _QUICK_REPLY_MARK.search(answer):
        answer = _QUICK_REPLY_LINE.sub(_blank_quick_replies, answer)
    if "{{" in answer:
        answer = _PLACEHOLDER_LINE.sub(blanked, answer)
    return answer


def _blank_quick_replies(match: re.Match[str]) -> str:
    """A line of quick replies blanked, but one that offers a person ("Talk to an agent", 【转人工】): a hand-over the
    refusal readings read as before."""
    return match.group() if _HAND_OVER_CHIP.search(match.group()) else blanked(match)


# A reference: letters and digits joined by a hyphen or after "#", "case", "ticket", 工单, 编号, 单号 (工单号 448102)
REFERENCE = (r"(?:#\s*[\w-]*\d[\w-]*|\b[A-Z]{2,}-?\d[\w-]*|\b(?:ref|reference|ticket|case)\s*[:#]?\s*[\w-]*\d[\w-]*|"
             r"(?:工单|编号|单号)\s*[:：#＃]?\s*[\w-]*\d[\w-]*|\bv\d+(?:\.\d+)+\b)")
_REFERENCE = re.compile(REFERENCE, re.IGNORECASE)
_CHROME = re.compile("|".join((
    # buttons and bracketed headers, with a short name after them; a log's line, its key=value fields
    rf"^\W*{_bracket_headers(whole_line=False)}$", rf"^\W*{_LOG_TAG}|^\W*[a-z_.]+=\S",
    # quick replies apart by "|", a hand-over's too ("Gift card help | Live chat"): around a refusal, what may be tapped
    rf"^\W*{_CHIP}(?:\s*\|\s*{_CHIP}){{1,4}}\W*$",
    # what this screen or chat holds: "The opening times loaded on this screen are for the Berlin shop only"
    r"\b(?:on|in)\s+this\s+(?:screen|kiosk|terminal|device|chat|channel|app)\s+(?:are|is)\s+(?:for|about)\b[^.;!?]{0,40}\bonly\b",
    r"^[^.!?]{0,40}\((?:an?\s+)?(?:automated|auto|ai|virtual)(?:\s+(?:assistant|agent|reply|response|system|bot))?\)[^.!?]{0,40}$|"
    r"[（(]自动(?:回复|处理|答复|发送)?[)）]\W*$",
    r"\bexpect\s+(?:a\s+|our\s+)?(?:reply|response|answer|call)\s+(?:within|in|by)\b|预计[^，。；！？]{0,12}(?:回复|答复|联系|处理)",
    r"^\W*reply\s+[*_]*\w+[*_]*\s+to\s+(?:be\s+connected|go\s+back|speak|talk|reach|return)\b|"
    r"回复\s*[「“\"][^」”\"]{1,8}[」”\"]\s*(?:即可|就能|就可以)?[^，。；！？]{0,4}(?:转|接)",
    # an e-mail's auto-reply saying it is one: "This is an automated message", 此邮件为系统自动回复, 请勿直接回复
    r"\bthis\s+(?:is\s+an?\s+)?(?:automated|automatic|auto-generated)\s+(?:message|reply|response|e-?mail)\b|\bthis\s+(?:message|"
    r"e-?mail|reply)\s+(?:was|is|has\s+been)\s+(?:sent|generated)\s+automatically\b|^\W*please\s+do\s+not\s+reply\b|"
    r"(?:此|本|该)(?:邮件|消息|信息|回复|短信)(?:为|是|由)(?:系统)?自动(?:回复|发送|生成|发出)|^\W*请勿(?:直接)?回复",
    # a letter's or a text's sign-off: a dash (not a list's hyphen) and a name ("– ShopCare"), a team's name alone
    # ("After-Sales Team", 售后服务部)
    r"(?-i:^[^\w\n—–]*(?:[—–]|--)\s*[A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*){0,3}\W*$|^\W*(?:[A-Z][\w&'.-]*\s+){0,3}(?:Team|Desk|Department|"
    r"Dept|Support|Care|Centre|Center|Services?|Helpdesk|Office)\W*$)|^[\u4e00-\u9fff]{1,8}(?:部|中心|团队|小组)$",
    # an agent's trace: its thought, the tool it called and what came back ("Observation: 1 document returned")
    r"^\W*(?:thought|action(?:\s+input)?|observation|tool\s+(?:call|output|result))\s*[:：]",
    # a queue's notice and a reply to watch for: "you are number 3 in the queue", 当前排队第3位, 请留意后续邮件
    r"\b(?:you\s+are|you['’]re)\s+(?:number\s+|no\.?\s*|#)?\d+\w*\s+in\s+(?:the\s+)?(?:queue|line)\b|\b(?:estimated|expected|"
    r"current)\s+wait(?:ing)?(?:\s+time)?\b|(?:排队|排在)第\s*\d+\s*(?:位|个|名)|前面还有\s*\d+\s*(?:人|位)|\b(?:keep\s+an\s+eye\s+on|"
    r"watch|look\s+out\s+for)\s+(?:your\s+)?(?:inbox|e-?mails?|messages?|sms|texts?)\b|请(?:留意|注意查收|关注)[^，。；！？]{0,6}(?:邮件|短信|消息|通知|来电)",
    # a voice menu's prompt: a key or a word to say, and whom it reaches ("Press or say two for our returns team", 'Say
    # "agent" at any time', 按3键转维修部门, 请说"安装服务", 或者按0转人工); a hold ("stay on the line", 请稍候, 请不要挂机)
    rf"^\W*{_VOICE_LEAD}(?:press|say|dial)(?:\s+or\s+(?:press|say))?\s+(?:{_VOICE_KEY})(?:\s+key)?\W*(?:$|at\s+any\s+time\W*$|"
    rf"(?:to|for)\s+(?:be\s+)?(?:connected|transferred|put\s+through|speak|talk|reach|an?\s+(?:agent|person|operator)|"
    rf"(?:our|the)\s+(?:[\w-]+\s+){{0,3}}?{_VOICE_WHOM}))",
    r'^\W*(?:请|或者?|也可以|(?:您|你)可以|直接)*(?:按\s*(?:\d|[零一二三四五六七八九井星*#＊＃])\s*(?:号?键)?|说\s*[“"「][^”"」\n]{1,10}[”"」])'
    r"\s*(?:(?:转|转接|接通|进入|联系|找)[^，。；！？]{0,10})?\W*$",
    r"^\W*(?:please\s+)?(?:stay|remain)\s+on\s+the\s+line\W*$|\bdon['’]t\s+hang\s+up\b|^\W*请(?:您)?(?:稍候|稍等)(?:片刻|一下)?\W*$|"
    r"请(?:您)?(?:不要|别|勿)挂(?:机|断)",
    r'^[\s{]*"(?:status|state|outcome)"\s*:\s*"(?:deferred|escalated|handed_off|handoff|queued|pending_human|no_answer)"',
    r'^[\s{]*"(?:reason|code|category|intent|route|queue)"\s*:\s*"[a-z]+(?:_[a-z]+)+"\W*$',
)), re.IGNORECASE)
_REFERENCE_LINE = re.compile(rf"^\W*(?:[\w\u3400-\u9fff]{{1,4}}\s*)?{REFERENCE}\W*(?:[—–-]+\s*[\w-]+(?:\s+[\w-]+)?\W*)?$",
                             re.IGNORECASE)


def numbers_said(parsed: Clause) -> frozenset[tuple[str, float]]:
    """A clause's quantities but a reference's digits ("ticket #448102", （编号 WX-77310）, 工单号 FP-20418: no number of
    the world, whatever brackets hold them)."""
    quantities = parsed.quantities
    if quantities and _REFERENCE.search(parsed.text):
        quantities = clause(_REFERENCE.sub(" ", parsed.text)).quantities
    return quantities


def said_by_the_channel(text: str) -> bool:
    """Whether a clause is a channel's chrome or a bot's own line (the module's docstring), whatever numbers it holds."""
    return _CHROME.search(text) is not None or _REFERENCE_LINE.match(text) is not None
