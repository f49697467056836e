"""What an answer's form says before its words are read (scorers/refusal.py's read): its text rewritten one character
for one, so that offsets into it (a fallback rule's matches) hold (unformed; as_said and claim_text where it may
refuse).

Every answer (unformed):
- Structure: an answer given as a JSON object ({"resolved": [...], "unresolved": [...]}) is one line of text; each
  member is put on its own line, so that what it resolves and what it declines are read apart.
- Chinese separators: a tilde between Chinese clauses (包邮啦～周末…), an emoji, a check mark, an ellipsis or a space
  between Chinese characters parts clauses as a comma does.
An answer that may refuse (as_said, claim_text; elsewhere these are read as before, at no cost):
- Reasoning: a reasoning model's visible thinking (<think>…</think>, "Thinking: …" before "Answer:") is not the answer.
- Speech: a voice assistant's transcript holds fillers and stutters ("okay so express um I'm I'm not actually able to
  …"): the fillers and a word said again are blanked, so the words read as written text would.
- What a clause keeps of the structure (a member's key, a label in brackets, a message's label) is no part of a claim.
"""

from __future__ import annotations

import re

from ragpulse.scorers.casual import chat_stops, untagged
from ragpulse.scorers.chrome import blank_marks
from ragpulse.scorers.text import blanked

_FILLERS = re.compile(r"(?<![\w'’-])(?:um+|uh+|er+m?|ehn)(?![\w'’-])", re.IGNORECASE)
_SAID_AGAIN = re.compile(r"(?<![\w'’])(i|i['’]m|the|a|to|it|we|so|that)(?:\s+\1)+(?![\w'’])", re.IGNORECASE)
_SPEECH_STARTS = ("um", "uh", "er ", "er,", "erm", "ehn", "Um", "Uh", "Er ", "Er,", "Erm", "Ehn")
# A comma between a JSON object's members (after a string, a list or a literal, before the next "key":)
_MEMBER_COMMA = re.compile(r'(?<=["\]\w])\s*,(?=\s*"[^"\n]{1,40}"\s*:)')
_THINKING = re.compile(r"<think>.*?</think>|(?im:^[^\S\n]*(?:thinking|thought|reasoning)\s*:.*?"
                       r"(?=^[^\S\n]*(?:final\s+)?answer\s*:))", re.DOTALL)
# Spaces in a tool call's quoted search (search_policy("会员 退费 中途")) do not part Chinese clauses
_TOOL_CALL = re.compile(r"[A-Za-z]+_[A-Za-z_]+\s*\(|(?:检索|搜索|查询)[\"“「]")
_QUOTED = re.compile(r"[\"“「][^\"”」\n]{1,40}[\"”」]")
_TILDE = re.compile(r"(?<=[\u3400-\u9fff])[～~]|[～~](?=[～~]*[\u3400-\u9fff])")  # beside a Chinese character
_SYMBOLS = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff…]|(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])")
_SYMBOL_OR_HAN = re.compile("[\u2600-\u27bf\U0001f300-\U0001faff…\u3400-\u9fff]")  # _SYMBOLS's gate (14 µs to 0.2)
# What structure leaves at a claim's ends: a member's key and its brackets ('{"resolved": ["'), a label in brackets
# ("[Assistant] "), and a literal alone ('"escalate": false}': no claim)
_KEY_LEAD = re.compile(r'^[\s{]*"[\w\u3400-\u9fff-]{1,40}"\s*:\s*\[?\s*"?|^\s*\[[^\]\n]{1,30}\]\s*|'
                       r"^\s*【(?:调用工具|工具调用|工具|结果|安全策略|策略|系统|提示|说明|回答|客服|思考|错误|通知|智能助手|助手)】\s*|"
                       r"^\s*(?:message|notice|response|reply|final\s+answer|answer|outcome|result|resolution|说明|内容|提示|消息|"
                       r"回复|最终答案|最终回复|最终回答|答复|回答|结果|处理建议|建议|思考过程|推理过程|bot|ivr|agent|assistant|坐席|机器人|客服)\s*[:：>]\s*",
                       re.IGNORECASE)
_LEAD_STARTS = frozenset('"{[ mMnNrRfFaAoObBiI说内提消回【最答结处建坐机客思推')
# A transcript's other side ("CALLER: how much to fix the screen", 客户：…): the asker's words, no claim of the answer's
_TIME = r"\[?\d{1,2}:\d{2}(?::\d{2})?\]?"  # a turn's time in a log: 16:22:09, [09:41]
_ASKER_TURN = re.compile(rf"^[^\S\n]*(?:{_TIME}[^\S\n]+)?(?:caller|customer|user|client|客户|用户|来电|顾客)[^\S\n]*[:：>][^\n]*",
                         re.IGNORECASE | re.MULTILINE)
# A turn's time before the answering side's label ("16:22:09 bot> …"): the log's, no number of a claim's
_TURN_TIME = re.compile(rf"^[^\S\n]*{_TIME}(?=[^\S\n]+(?:bot|ivr|agent|assistant|system|坐席|机器人|客服)[^\S\n]*[:：>])",
                        re.IGNORECASE | re.MULTILINE)
# A field that names the question ("query: parking at Berlin store", 问题类型：发票, {"intent": "分期手续费查询"}): the question
# said back, no claim
_QUESTION_FIELD = re.compile(r'^[\s{]*"?(?:query|question|issue|intent|topic|request|subject|user_(?:query|question)|问题|'
                             r'问题类型|具体问题|用户问题|咨询内容|咨询问题|意图|用户意图|主题)"?\s*[:：]', re.IGNORECASE)
_QUESTION_STARTS = frozenset('"{ qQiItTrRsSuU问具用咨意主')
# A markdown table's rule (|---|---|) and the header row above it name columns; a row's cells read as a form's fields
_TABLE_RULE = re.compile(r"^([^\S\n]*\|[^\n]*\n)([^\S\n]*\|?[^\S\n]*:?-{3,}:?[^\S\n]*(?:\|[^\S\n]*:?-{3,}:?[^\S\n]*)+\|?"
                         r"[^\S\n]*)$", re.MULTILINE)
_TABLE_ROW = re.compile(r"^[^\S\n]*\|[^\n]*\|[^\S\n]*$", re.MULTILINE)
_KEY_END = re.compile(r'"?\s*\]?\s*}?\s*$')
_LITERAL = re.compile(r"(?:true|false|-?\d+(?:\.\d+)?)?", re.IGNORECASE)
_DECLINED = re.compile(r'(?:null|none|"")', re.IGNORECASE)  # {"answer": null}: a refusal as it is (scorers/refusal.py)


def unformed(answer: str) -> str:
    """The answer with its structure and Chinese separators read (one character for one)."""
    answer = blank_marks(answer)  # ":wave:", "@dani —": a chat's marks, no words of a claim
    symbols = not answer.isascii() and _SYMBOL_OR_HAN.search(answer) is not None
    if symbols:  # "🙏 more words", "有效～ 换…": a full stop, before the tilde is read as a comma (scorers/casual.py)
        answer = chat_stops(answer)
    if "~" in answer or "～" in answer:
        answer = _TILDE.sub("，", answer)
    if symbols:
        if " " in answer and _TOOL_CALL.search(answer):
            answer = _QUOTED.sub(lambda quoted: quoted.group().replace(" ", "_"), answer)
        answer = _SYMBOLS.sub("，", answer)
    if ":" in answer or "：" in answer:
        answer = _TURN_TIME.sub(blanked, _ASKER_TURN.sub(blanked, answer))
    stripped = answer.strip()
    if stripped[:1] == "{" and stripped[-1:] == "}":
        answer = _MEMBER_COMMA.sub(lambda comma: comma.group()[:-1] + "\n", answer)
    return answer


def as_said(answer: str) -> str:
    """The answer as said to the user, one character for one: a reasoning model's thinking blanked, and a speaker's
    fillers and, with them, a word said again; the answer itself when it holds none. Read only where an answer may
    refuse (its gates cost 3-4 µs an answer)."""
    said = untagged(answer)  # "ngl", "lowkey", "bestie": a chat's tags (casual.py)
    if "<think>" in said or "nswer" in said:
        said = _THINKING.sub(_blank_but_lines, said)
    if "|" in said and "---" in said:
        said = _TABLE_ROW.sub(_fields, _TABLE_RULE.sub(_blank_but_lines, said))
    if not _spoken(said):
        return said
    spoken, fillers = _FILLERS.subn(blanked, said)
    if not fillers:
        return said
    return _SAID_AGAIN.sub(lambda again: again.group(1) + " " * (len(again.group()) - len(again.group(1))), spoken)


def _spoken(answer: str) -> bool:
    """The gate: a filler with a space before it or at the start (" er" alone would be "every" and "error")."""
    return (" um" in answer or " uh" in answer or " er " in answer or " er," in answer or " erm" in answer
            or " Um" in answer or " Uh" in answer or " ehn" in answer or " Ehn" in answer
            or answer.startswith(_SPEECH_STARTS))


def _fields(row: re.Match[str]) -> str:
    """A table row as a form's fields: "| Gift card online | Not confirmed |" read as " Gift card online : Not confirmed  "."""
    text = row.group()
    first, last = text.index("|"), text.rindex("|")
    return text[:first] + " " + text[first + 1:last].replace("|", ":") + " " + text[last + 1:]


def _blank_but_lines(match: re.Match[str]) -> str:
    return "".join("\n" if char == "\n" else " " for char in match.group())


def claim_text(text: str) -> str:
    """A claim without what the answer's structure left at its ends: a member's key, a label in brackets; "" for a
    member that holds a literal only ("escalate": false); a member that declines ({"answer": null}) as it is."""
    if text[:1] in _QUESTION_STARTS and _QUESTION_FIELD.match(text):
        return ""
    if text[:1] not in _LEAD_STARTS:
        return text
    lead = _KEY_LEAD.match(text)
    if lead is None:
        return text
    rest = _KEY_END.sub("", text[lead.end():])
    if _DECLINED.fullmatch(rest.strip()):
        return text
    return "" if _LITERAL.fullmatch(rest.strip()) else rest


def in_own_words(texts: list[str], said: str, answer: str) -> list[str]:
    """Each text of `said` (in reading order) as `answer` writes it at the same offsets (mandarin(), unformed() and
    as_said() keep them)."""
    found, cursor = [], 0
    for text in texts:
        at = said.find(text, cursor)
        at = said.find(text) if at < 0 else at
        found.append(text if at < 0 else answer[at:at + len(text)])
        cursor = at + len(text) if at >= 0 else cursor
    return found
