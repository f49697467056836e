"""Casual chat's form (a chatbot told to talk like its young audience), read as constructions, not as its phrases:
- where a sentence ends: an emoji, an emoticon (":/", ":(") or a tilde after Chinese, then a space and more words, ends
  the sentence before it as a full stop would ("… with all the accessories 🙏 in-store returns tho? no clue"): what
  follows, a question or a decline, is a sentence of its own, and the claim before it stays one (answer_form.unformed);
- the tags and intensifiers said around a sentence ("ngl", "tbh", "fr", "lowkey", "no cap", "bestie", "sooo", an
  interjection such as "oof" or "nooo"): no words of a claim, blanked one for one where an answer may refuse
  (answer_form.as_said), so that "lowkey no clue bestie" reads as "no clue" and "lowkey the best deal is the 2-year
  plan" as its claim.
"""

from __future__ import annotations

import re

from ragpulse._native import WordGates
from ragpulse.scorers.refusal_gate import words_of
from ragpulse.scorers.refusal_zh import HAN, TOPIC
from ragpulse.scorers.text import blanked

_PICTOGRAPH = "\u2600-\u27bf\U0001f300-\U0001faff"  # not a flag: it stands before a country's name
# An emoji (with its variation selector or joiner), or a tilde after a Chinese character, before a space and a word
_SYMBOL_STOP = re.compile(f"[{_PICTOGRAPH}～~](?=[\ufe0f\u200d{_PICTOGRAPH}]*[^\\S\\n]+[^\\s{_PICTOGRAPH}])")
_EMOTICON_STOP = re.compile(r" [:;]-?[()/\\|DPp](?=[^\S\n]+\w)")  # after a space (the gate looks for " :", " ;")


def chat_stops(answer: str) -> str:
    """The answer with an emoji or a tilde after Chinese before more words read as a full stop (one character for one;
    an emoticon, where the answer may refuse: untagged); after a matter named alone ("student pricing 🤔 nothing on my
    side covers it", 积分有效期🤔 …) as the comma it was. Only an answer with a symbol or a Chinese character is read
    (answer_form's gate)."""
    return _SYMBOL_STOP.sub(lambda symbol: _stop(answer, symbol.start()), answer)


def _stop(answer: str, at: int) -> str:
    if answer[at] in "～~" and not (at and HAN.match(answer, at - 1)):
        return answer[at]  # a tilde not after Chinese: "~5 days"
    return "，" if _named_before(answer, at) else "。"


# What a sentence or a Chinese clause holds before a symbol when it only names a matter: a few words, no verb, no number
_VERBLESS = (r"(?![\w'’-]*(?:\d|n['’]t\b))(?!(?:you|u|we|they|it|he|she|i|is|are|was|were|have|has|had|can|will|would|do|does|did|get|gets|"
             r"got|take|takes|cost|costs|cover|covers|come|comes|ship|ships|need|needs|go|goes|last|lasts|run|runs|work|works|earn|"
             r"earns|include|includes|offer|offers|accept|accepts|expire|expires|arrive|arrives|apply|applies|open|opens|yes|"
             r"yep|yup|no|nope|ok|okay)\b)")
_NAMED_ONLY = re.compile(rf"\W*(?:{_VERBLESS}[A-Za-z'’-]+\s+){{0,3}}{_VERBLESS}[A-Za-z'’-]+\s*", re.IGNORECASE)
_STOPS = re.compile(r"[.!?。！？；;\n]")
_ZH_STOPS = re.compile(r"[.!?。！？；;\n，,]")


def _named_before(answer: str, at: int) -> bool:
    """Whether the sentence before `at` (in Chinese, the clause) names a matter only."""
    start = max((found.end() for found in _STOPS.finditer(answer, max(0, at - 60), at)), default=max(0, at - 60))
    if _NAMED_ONLY.fullmatch(answer, start, at):
        return True
    start = max((found.end() for found in _ZH_STOPS.finditer(answer, max(0, at - 30), at)), default=max(0, at - 30))
    before = answer[start:at].strip()
    return bool(HAN.search(before) and TOPIC.search(before))


# Tags and intensifiers of chat: "ngl", "tbh", "fr", "lowkey", "no cap" (not "no cap on returns"), "bestie", "sooo"
# (three o's or more), interjections ("oof", "nooo", "ugh", "yikes"). "tho" only where it ends the clause.
_TAGS = re.compile(r"(?<![A-Za-z0-9'’-])(?:ngl|tbh|fr(?:\s+fr)?|frfr|lowkey|highkey|no\s+cap(?!\s+(?:on|for|of|at|to|per)\b)|"
                   r"bestie|fam|smh|istg|deadass|ong|rn|so{3,}|no{3,}|oo+f|ugh+|yikes|welp|bruh|xswl|yysy|yyds|"
                   r"tho(?=\s*(?:[,.;!?。，]|$)))(?![A-Za-z0-9'’-])", re.IGNORECASE)  # ASCII bounds: 超纲了xswl
# Chinese net-speak's tags and interjections: xswl (笑死我了), yysy (有一说一), yyds, 栓Q, 绝绝子, 家人们, 宝子, 无语子, 救命
_ZH_TAGS = re.compile("(?i:栓q)|绝绝子|家人们|宝子们?|无语子|救命")
# The gate: the tags as words, looked up in the crate ("fr" is no tag in "from"; a regular expression of them searched
# over a summary took 40 µs, letter_runs 12, the crate 5; as a set of the answer's gate, refusal_gate._GATES, it cost
# every answer those 5 µs), "sooo" and "nooo" by their three o's
_TAG_GATE = WordGates([(sorted("ngl tbh fr frfr lowkey highkey cap bestie fam smh istg deadass ong rn oof ooof ugh ughh "
                               "yikes welp bruh tho xswl yysy yyds".split()),
                        "".join(chr(code) for code in range(128) if not chr(code).isalpha()))])


# A chat's reply is a few lines: its tags are looked for in an answer of up to this many characters (over FaithBench's
# summaries the lookup cost 3 µs an answer)
_CHAT_CHARS = 400


def untagged(answer: str) -> str:
    """The answer with chat's tags and intensifiers blanked and an emoticon before more words read as a full stop (one
    character for one); itself when it holds none."""
    if not answer.isascii() and ("，" in answer or "。" in answer):  # Chinese, or a chat's symbols read as its marks
        answer = _ZH_TAGS.sub(blanked, answer)
    if " :" in answer or " ;" in answer:
        answer = _EMOTICON_STOP.sub(lambda emoticon: " ." + " " * (len(emoticon.group()) - 2), answer)
    if len(answer) > _CHAT_CHARS:
        return answer
    lower = answer.lower()
    if not _TAG_GATE.met_in(lower) and "ooo" not in lower:
        return answer
    return _TAGS.sub(blanked, answer)


# A topic put first without a verb of its own, no number ("repairs at that store specifically,", "the original box
# question"): the object of a bare decline after it
_TOPIC = (r"^\W*(?:(?![\w'’-]*\d)(?!(?:i|m|im|you|u|we|they|it|he|she|that|which|who|is|are|was|were|have|has|had|can|will|would|do|does|did|get|gets|"
          r"got|take|takes|cost|costs|cover|covers|come|comes|ship|ships|need|needs|go|goes|last|lasts|run|runs|work|works|earn|earns|"
          r"include|includes|offer|offers|accept|accepts|expire|expires|arrive|arrives|apply|applies|open|opens)\b)"
          r"[\w'’-]+\W{1,4}){1,6}?")
# A decline with no speaker, as chat says it: "idk", "no clue", "not sure", "can't say", "not gonna guess"
_BARE = (r"(?:idk|dunno|(?:do\s*n['’]?t|dont)\s+know|no\s+(?:clue|idea)|not\s+sure|unsure|(?:ca|can|could|wo)\s*(?:n['’]?t|not)\s+(?:say|tell|confirm)|"
         r"not\s+(?:gonna|going\s+to)\s+(?:guess|say(?:\s+yes\s+or\s+no)?|speculate|quote))\b"
         # … ending the clause, or taking the matter up again ("on that one"): "not sure if the school …" is no decline
         r"(?=\W*$|\s*[,;:.!?]|\s+(?:on|about|with|for)\s+(?:that|this|it|those|these)\b)")
# The speaker's own state of lacking or being unable, any metaphor of it: "i'm stuck on that (level)", "my brain's
# buffering on that one", "i'm not the one to ask", "that's a call i won't make", "that's a side quest i never
# unlocked", "nothing on my side covers that one"; each shape with the words one of which it needs (most clauses are
# spared it)
_LED = tuple((frozenset(words.split()), re.compile(shape, re.IGNORECASE)) for words, shape in (
    ("whether if how what which when where who", rf"^\W*(?:whether|if|how|what|which|when|where|who)\b[^,;]{{1,80}},\s*{_BARE}"),
    ("stuck lost blanking buffering lagging", r"\bi\s*(?:['’]m|am)\s+(?:(?:kinda|totally|a\s+bit|so|really|completely|"
     r"honestly)\s+)?(?:stuck|lost|blanking|buffering|lagging)\s+(?:on|with)\s+(?:that|this|it)\b"),
    ("brain mind head memory", r"\bmy\s+(?:brain|mind|head|memory)\s*(?:['’]s|is|has)\s+(?:(?:totally|kinda|just|so)\s+)?"
     r"(?:buffering|blanking|lagging|loading|glitching|frozen|fried|empty|blank|gone\s+blank|crashing|crashed)\b"),
    # the speaker's side as its sources: "nothing on my side covers that one", "nothing on my end mentions it"
    ("nothing", r"\bnothing\s+(?:on|at|in)\s+my\s+(?:side|end)\s+(?:covers|mentions|says|shows|explains|talks\s+about|touches)\b"),
    ("ask answer", r"\bi\s*(?:['’]m|am)\s+not\s+(?:really\s+)?the\s+(?:right\s+|best\s+)?(?:one|person|bot|source|place)\s+to\s+"
     r"(?:ask|answer)\b"),
    ("call decision judgement judgment", r"\b(?:a|the)\s+(?:call|decision|judgement|judgment)\s+i\s*(?:wo|ca|can|could|would)\s*"
     r"(?:n['’]?t|not)\s+(?:make|take)\b"),
    ("unlocked learned learnt covered reached taught trained given", r"\b(?:that|it|this)(?:['’]s|\s+is)\s+(?:a|an|one)\s+"
     r"(?:[\w-]+\s+){0,2}?(?:that\s+)?i\s+(?:never|have\s*n['’]?t|have\s+not|did\s*n['’]?t)\s+(?:unlocked|learned|learnt|covered|"
     r"got\s+to|reached|been\s+(?:taught|trained\s+on|given))\b"),
    # the object put first, taken up by a stranded preposition: "refund timing i can't promise anything on"
    ("promise", rf"(?:{_TOPIC})?\bi\s*(?:ca|can|could|wo|will)\s*(?:n['’]?t|not)\s+promise\s+(?:anything|much)(?:\s+(?:on|about|"
     r"for)(?=\s*(?:,|$)))?"),
))
# A bare decline (_BARE) at the clause's start or after a matter named (_TOPIC): the words it needs
_BARE_LED = re.compile(rf"{_TOPIC}{_BARE}|^\W*{_BARE}", re.IGNORECASE)
_BARE_WORDS = frozenset("idk dunno know clue idea sure unsure say tell confirm guess speculate quote".split())
# The matter said not to be the speaker's, put first ("points math is not my thing", "that quest isn't in my map",
# "sale dates are top secret to me", "reset link stuff is off limits for me", "i'm out of my depth"): the topic belongs
# to the refusal
_PREDICATE = tuple((frozenset(words.split()), re.compile(shape, re.IGNORECASE)) for words, shape in (
    ("thing area department forte suit specialty speciality field domain lane call place",
     r"\b(?:is|are|['’]s|['’]re)\s*(?:not|n['’]t)\s+(?:really\s+|exactly\s+)?my\s+(?:thing|area|department|forte|strong\s+suit|"
     r"specialty|speciality|field|domain|lane|call|place)\b"),
    ("in on within part", r"\b(?:is|are|['’]s|['’]re)\s*(?:not|n['’]t)\s+(?:in|on|within|part\s+of)\s+my\s+(?:[\w-]+\s+){0,2}?"
     r"[\w-]+(?=\W*$|\s*,)"),
    ("mystery secret riddle enigma puzzle news", r"\b(?:an?\s+)?(?:(?:top|total|complete|big|real)\s+)?(?:mystery|secret|riddle|"
     r"enigma|puzzle|news)\s+(?:to|for)\s+me\b"),
    ("limits bounds table grade", r"\b(?:off[-\s]limits|out\s+of\s+bounds|off\s+the\s+table|above\s+my\s+pay\s+grade)\s+"
     r"(?:for|to)\s+me\b"),
    ("failed glitched crashed broke errored", r"\b(?:failed|glitched|crashed|broke|errored)\s+on\s+my\s+end\b"),
    ("out outside beyond", r"\b(?:out\s+of|outside(?:\s+of)?|beyond)\s+my\s+(?:depth|league|element|lane|wheelhouse|comfort\s+zone|"
     r"pay\s+grade)\b"),
    ("uncharted", r"\buncharted(?:\s+(?:territory|waters|ground))?\s+(?:for|to)\s+me\b"),
))
_SPEAKER = frozenset(("i", "my", "me", "idk", "dunno"))  # every shape above names the speaker (or is said by it bare)


def declined(text: str) -> re.Match[str] | None:
    """A decline said as chat says it, led by the speaker or bare (the clause's head before it is read as any
    refusal's is); None when there is none."""
    words = frozenset(words_of(text))  # the clause gate's (refusal_gate.may_refuse)
    if not _BARE_WORDS.isdisjoint(words) and (bare := _BARE_LED.match(text)) is not None:
        return bare
    if _SPEAKER.isdisjoint(words):
        return None
    return next((found for keys, shape in _LED if not keys.isdisjoint(words) and (found := shape.search(text))), None)


def declined_matter(text: str) -> re.Match[str] | None:
    """The matter put first, then said not to be the speaker's (the topic before it is no claim); None when not."""
    words = frozenset(words_of(text))  # the clause gate's (refusal_gate.may_refuse)
    if "my" not in words and "me" not in words:
        return None
    return next((found for keys, shape in _PREDICATE if not keys.isdisjoint(words) and (found := shape.search(text))), None)


_YOU = r"(?:you|u|ya)"
# Around a refusal (scorers/asides.py), chat's words for what is said there: sympathy with the asker's mishap ("a broken
# headset is not the vibe", "that sucks"), where the answer is and who has it, in text-speak ("account support got u",
# "order support is who u want", "ur local customs site is the move", "customer care has the deets", "the product page
# should have the full breakdown", "they'll give u the real answer", "the shipping team would know way better than me",
# "follow our socials to catch the drop"), and the question said back with its marks ("dropped ur laptop??").
AROUND = (
    r"\b(?:is|are|['’]s|['’]re)\s+(?:so\s+)?(?:not\s+the\s+vibe|the\s+worst|no\s+fun|such\s+a\s+(?:pain|bummer|drag)|a\s+bummer)\W*$|"
    r"^\W*(?:that|it|this)\s+(?:sucks|stinks|hurts)\W*$",
    rf"^\W*(?:the\s+|our\s+|your\s+|ur\s+)?(?:[\w'’-]+\s+){{0,3}}?(?:team|support|care|desk|crew|centre|center|store|page|site|app|"
    rf"folks|people)\s+(?:(?:has|have|['’]s\s+got|got|will\s+have|should\s+have|would\s+have)\s+(?:the\s+|all\s+the\s+|ur\s+|your\s+)?"
    rf"(?:full\s+|real\s+|exact\s+|latest\s+)?(?:deets|details|info|answers?|scoop|specs|breakdown|tea)|got\s+{_YOU}(?:\s+covered)?|"
    rf"(?:is|are)\s+(?:who|what|where)\s+{_YOU}\s+(?:want|need)|(?:is|are)\s+the\s+move)\b",
    rf"^\W*(?:and\s+)?(?:they|he|she)\s*(?:['’]ll|will|can|could|should|would)\s+(?:give|get)\s+{_YOU}\s+(?:the|a)\s+(?:real\s+|right\s+|"
    r"exact\s+|proper\s+|correct\s+|full\s+)?(?:answer|number|figure|quote|breakdown|deets|details|info)\b",
    r"\b(?:will|would|should|can)\s+know\s+(?:(?:way|much|a\s+lot|far|loads)\s+)?(?:more|better)(?:\s+than\s+(?:me|i\s+do))?\W*$|"
    r"\bbreak\s+(?:it|that|this)\s+down\b|\b(?:page|site|app|checkout)\s+(?:will|would|should|can)\s+show\s+(?:u|ya)\W*$",
    r"^\W*(?:follow|watch|check)\s+(?:our|the)\s+(?:socials|social\s+media|instagram|tiktok|newsletter|app|feed|drops?)\b",
)
# … and in Chinese: where the answer is, best asked or looked up there (去会员中心瞅一眼最准, 问门店最快)
ZH_AROUND = (r"^[\s，,]*(?:去|到|问问?|找|上)[^，。；！？]{1,12}?(?:瞅|看|查|问)?[^，。；！？]{0,4}?最(?:准|快|靠谱|稳|方便|省事)",)
