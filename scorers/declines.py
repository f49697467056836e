"""Clauses in which the speaker declines, in words no pattern of scorers/refusal.py lists: the local judge's reading of
refusals by their shape (judging/local_judge.py, _judged; what is said around a refusal: scorers/asides.py).

- The speaker declines: the speaker (I, me, my; 我 but not 我们, 小助手, 这边, 本人; "we" only with "unable to provide
  information" and the like) with a negation before a word of knowing or finding ("i cant find anyting on that",
  "zero information", 没查到, 不清楚) or a word of ignorance ("stumped", "escapes me", "come up empty", 一头雾水, 问倒我了).
  "I don't care for blue", 我不喜欢蓝色 and "I was a waiter once" are the speaker's own story: claims.
- No subject before it ("Can't say", "No idea", 没查到相关记录呢, 不太好讲): the judge takes it as a refusal only when it
  shares nothing with the question or the context ("积分没有有效期限制" answers a question about points: a claim).
- What the speaker says it knows ("I only know that …", 据我所知, "What I can tell you is that …") is a claim; "we"
  speaks for the shop ("We don't ship to Hawaii") and is a claim unless it declines to inform.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from ragpulse._native import WordGate
from ragpulse.scorers.refusal_zh import HAN, mandarin
from ragpulse.scorers.text import Clause, real_negators

_KNOWING = (r"know|knew|sure|certain|find|found|see|seen|tell|say|answer|help|confirm|info|information|idea|clue|data|anything|"
            r"details|access|records?|heard|aware|familiar|remember|recall|promise|guarantee|assume|guess|speculate|quote|"
            r"steps|instructions|timeframes?|turnaround|times")
_DECLINING = (rf"(?:n['’]?t|\bnot|\bno|\bnever|\bcannot|\bcant|\bdont|\bdidnt|\bwont|\bnothing|\bzero)\W+(?:\w+\W+){{0,3}}?"
              rf"(?:{_KNOWING})\b|\bwish\W+(?:\w+\W+){{0,2}}?(?:{_KNOWING})\b|\b(?:idk|dunno|clueless|unsure|unable|stumped|"
              rf"puzzled|lost|empty|blank|escapes?|beyond|above|mystery|head-scratcher)\b")
_ME = r"i|i['’]?m|i['’]?ve|i['’]?d|me|my|myself|im|ive"  # the speaker's words
_I = rf"\b(?:{_ME}|idk|dunno)\b"  # and the words that say "I don't know" alone
_HEDGES = r"(?:(?:ugh|hm+|oh|well|sorry(?:\s+that)?|sry|soz|so\s+sorry|unfortunately|honestly|sadly|alas|afraid)\W+)*"
_WE_DECLINE = (r"\b(?:we|we['’]re|we\s+are)\b.*\b(?:unable|not\s+(?:able|in\s+a\s+position|having)|can['’]?t|cannot)\b\W+"
               r"(?:\w+\W+){0,2}?(?:provide|give|share|offer)?\W*(?:information|info|details|advise|advice|answer|comment|"
               r"say|tell|confirm|guidance|help|assist|determine)\b")
ZH_KNOWING = (r"知道|清楚|了解|确定|查到|找到|收到|数|把握|准|法|听说|研究|懂|讲|说|结论|定论|结果|信息|资料|消息|info|"
               r"给(?:您|你)报|报价|透露|告知|告诉|描述|回答|承诺|保证|判断|代答|提供建议|答复|解答|回复|理解|咨询|内容|给出|提及|提到|作答|读到|推断|推测|打包票|覆盖|涉及|预估|估计|答应|拍板|confirm|check|promise|"
               r"answer")
_ZH_DECLINING = (rf"(?:(?:[不没未无难]|木有|莫有)[^，。；！？]{{0,6}}?(?:{ZH_KNOWING})|没有关于[^，。；！？]{{0,8}}的(?:描述|说明|介绍)|"
                 r"看不到|查不到|查不了|找不到|调不出来|把(?:对话|会话|问题)(?:转)?交给|才(?:能|好)(?:帮|为|回答|答复)|再(?:帮|为)(?:您|你)查|"
                 r"雾水|嘀咕|糊涂|懵|迷糊|头绪|超纲|问倒|哪知道|哪晓得|才疏学浅|没提(?![高升前供])|"
                 r"不方便[^，。；！？]{0,12}(?:回答|答复|说明|报|透露|告知|给(?:您|你)一个)|(?:先|就)不(?:在这[里儿])?(?:给(?:您|你))?报)")
# 我国, 我省, 我市, 我校: "our country" and the like, not the speaker
ZH_SPEAKER = r"(?:我(?![们国省市县区校军党])|小助手|小客服|本渠道|本助手|当前助手|该助手|本系统|本自动回复|本邮件|阿拉|本助理|小助理|本机器人|本客服|智能客服|智能助理|智能助手|这边|本人|鄙人)"
_WISH = (r"\bwish\s+i\s+(?:could\s+(?:\w+\s+)?(?:help|answer|tell|say|assist|confirm|give|provide|share|be\s+more)|knew\b|"
         r"had\s+(?:\w+\s+)?(?:answers?|info|information|details|data|more|number|figure|date))")  # "I wish I could play" is a story
_SPEAKER_DECLINES = re.compile(rf"(?i:{_I}.*(?:{_DECLINING})|(?:{_DECLINING}).*{_I}|{_WE_DECLINE}|{_WISH})"
                               rf"|{ZH_SPEAKER}.*{_ZH_DECLINING}|{_ZH_DECLINING}.*{ZH_SPEAKER}|不是{ZH_SPEAKER}(?:所?能|可以)"
                               rf"|不(?:在|属于){ZH_SPEAKER}[^，。；！？]{{0,6}}(?:范围|权限)|{ZH_SPEAKER}[^，。；！？]{{0,4}}?(?:不被|未被)(?:允许|授权|准许)")
# The speaker declines to say, advise or confirm ("I can't advise on gift card cash-outs", 发票发送时间我这边确认不了): the
# clause tells of the speaker, not the world, so it refuses even where the context has its topic
_WONT_SAY = re.compile(r"(?i:\bi\s*(?:can['’]?t|cannot|am\s+(?:not|unable)\s+(?:able\s+)?to|['’]m\s+(?:not|unable)\s+(?:able\s+)?to)\s+"
                       r"(?:really\s+)?(?:advise|comment|confirm|answer|speak\s+to|tell\s+you)\b)"
                       r"|(?i:\b(?:is|are)\s*(?:n['’]t|not)\s+in\s+(?:there|it|them)\b)"
                       rf"|{ZH_SPEAKER}[^，。；！？]{{0,4}}?(?:没有?|未能?)(?:找到|查到)[^，。；！？]{{0,16}}(?:信息|资料|说明|记录)$"  # of its search
                       rf"|{ZH_SPEAKER}[^，。；！？]{{0,4}}?(?:确认|答复|回答|判断|保证)不了|{ZH_SPEAKER}[^，。；！？]{{0,4}}?(?:无法|没法|不能)(?:确认|答复|回答|判断)"
                       # an auto-reply that cannot answer automatically: "We are unable to provide an automated answer", 暂时无法自动处理
                       r"|(?i:\b(?:unable|not\s+able|can['’]?t|cannot)\s+(?:to\s+)?(?:\w+\s+){0,2}?(?:an?\s+)?(?:automated|automatic)\s+(?:answer|response|reply)\b|"
                       r"\b(?:can['’]?t|cannot|could\s*n['’]?t|not)\s+be\s+(?:answered|handled|resolved|processed)\s+automatically\b)"
                       r"|(?:无法|不能|没法|未能)(?:通过)?(?:系统)?自动(?:回复)?(?:为(?:您|你))?(?:处理|解答|回复|答复|回答)")
# Declining without a speaker, weighed like the speaker's (weigh): each tuple an alternation, English ignoring case.
_EN_UNSPOKEN = (
    # where the clause starts, or after its topic ("Can't say", "No idea", "Not sure", "Drawing a blank", "Sat delivery:
    # can't confirm", "Username changes, can't help there")
    rf"^(?:[^,:;.!?]{{1,40}}[,:;]\s*)?\W*{_HEDGES}(?:(?:can['’]?t|cannot|couldn['’]?t)\s+(?:\w+\s+){{0,2}}?(?:say|tell|help|"
    r"answer|confirm|find|see|comment|give|provide|quote|offer|advise|speak|promise|guarantee|vouch)|(?:do|does)\s*(?:n['’]?t|not)\s+(?:really\s+)?know\b|"
    r"(?:\w+\W+)?drawing\s+(?:a\s+)?(?:blank|zero)|there['’]?s\s+nothing|no\s+(?:idea|clue|info|information|data|details|"
    r"answers?|records?|luck)|not\s+(?:sure|certain)|nothing\s+(?:on|about|found|here)|dunno|idk)\b",
    # formal and machine-translated: "It is not possible for me to …", "not coming under my scope", "unable to advise",
    # "I don't want to give you the wrong answer", "this assistant does not discuss …", "unclear which …"
    r"\bnot\s+(?:possible\s+for\s+(?:me|us)|(?:coming\s+)?(?:within|under)\s+(?:my|our)\s+(?:authority|remit|scope))\b",
    r"\bunable\s+to\s+(?:advise|confirm|comment)\b|\bunclear\s+(?:which|what)\b|\b(?:response|answer|reply)\s+(?:was\s+|has\s+been\s+)?"
    r"(?:withheld|suppressed|blocked)\b|\bno\s+(?:\w+\s+)?content\s+matched\b|\bno\s+answer\s+(?:has\s+been|was|could\s+be)\s+generated\b|"
    r"\bbut\s+nothing\s+(?:about|on|regarding)\b|\b(?:ah|i)['’]?m\s+no\s+(?:able|allowed)\s+tae\b|\bcannae\b|\bdinnae\s+ken\b",
    r"\b(?:do\s*n['’]?t|do\s+not)\s+want\s+to\s+(?:give|tell|hand)\s+you\s+(?:the\s+|a\s+)?(?:wrong|incorrect|inaccurate|figure|"
    r"number|date|price)\b",
    # machine-translated passives: "the answer cannot be given by us", "a reply about if …, we cannot make it", "is not
    # found any information"; a handoff declined ("which declined to respond", "outside its scope")
    r"\b(?:answer|reply|response|confirmation)\b[^.;:!?]{0,60}?\b(?:can\s*not|can['’]?t|could\s*n['’]?t|unable\s+to|"
    r"not\s+able\s+to)\s+(?:be\s+)?(?:make|made|give|given|provide|provided|offer|offered)\b|"
    r"\bnot\s+found\s+(?:any\s+)?(?:information|info|details|rule)\b|\bdeclined\s+to\s+(?:respond|answer|reply|comment)\b|"
    r"\b(?:outside|beyond)\s+(?:its|their|my|our)\s+(?:scope|remit)\b",
    r"\b(?:this|the|our)\s+(?:\w+\s+)?(?:assistant|bot|chatbot|channel|service|system)\s+(?:does\s*(?:n['’]?t|not)|cannot|"
    r"can['’]?t|is\s+(?:unable|not\s+able)(?:\s+to)?)\s+"
    r"(?:discuss|answer|handle|cover|provide|give|share|process|advise)\b|\bnot\s+available\s+(?:through|via|on|in)\s+this\s+(?:assistant|chat|"
    r"channel|service|bot)\b|\brestricted\s+(?:from|for|on|in)\s+(?:this|the)\s+(?:assistant|bot|chat)\b|\bneither\s+(?:see|share|tell|say|confirm)\b",
    # searches and tools that found nothing or failed: "we couldn't find", "it says nothing about", "… but couldn't
    # confirm", "My attempt to pull your details … failed"
    r"\bwe\s+(?:could\s*n['’]?t|could\s+not|were\s+unable\s+to)\s+find\b|\b(?:it|they)\s+(?:says|said|mentions|covers)\s+nothing\b|"
    r"\b(?:it|they)\s+(?:does\s*n['’]?t|do\s*n['’]?t|does\s+not|do\s+not|did\s*n['’]?t)\s+(?:say|mention|cover|specify|address)\b|"
    r"\bneither\s+(?:mentions|covers|says|gives|lists|has)\b|\b(?:do\s*n['’]?t|do\s+not)\s+want\s+to\s+promise\s+anything\b",
    r"\bnothing\s+that\s+(?:came\s+(?:back|up)|turned\s+up|i\s+found)\b|^\W*(?:and\s+)?(?:does|do)\s*(?:n['’]?t|not)\s+"
    r"(?:address|cover|mention|say|specify)\b|\b(?:is|are)\s*(?:n['’]t|not)\s+(?:in\s+(?:there|it|them)|mine\s+to\s+(?:make|decide|"
    r"call|give))\b|\bout\s+of\s+(?:my|our)\s+hands\b|\babove\s+my\s+pay\s*grade\b|\bwon['’]?t\s+(?:try\s+to\s+)?(?:answer|guess|"
    r"comment|speculate)\b|\brather\s+than\s+(?:estimat|guess|speculat)\w*|^\W*(?:missing|not\s+found)\s*:|"
    r"\bnot\s+(?:provided|given|offered|discussed)\s+(?:through|via|on|in|by)\s+this\b|\bi['’]?ll\s+leave\s+(?:\w+\s+){0,3}to\s+"
    r"(?:the\s+)?(?:checkout|team|store|page|them)\b",
    r"\bbut\s+(?:could\s*n['’]?t|could\s+not|was\s+unable\s+to)\s+(?:find|confirm|locate|see)\b",
    r"^\W*not\s+(?:commenting|answering)\b|\bshot\s+in\s+the\s+dark\b|"
    r"\brather\s+than\s+answer(?:ing)?\s+(?:it|this|that)\s+(?:myself|ourselves)\b",
    r"\b(?:attempt|call|lookup|look-up|request|search|query)\b[^.]{0,60}?\b(?:failed|timed\s+out|returned\s+(?:an?\s+)?error|"
    r"errored)\b",
    # not to be guessed at: "not one I'm going to guess at", "not something I'll estimate", "I'd rather a specialist
    # confirmed it than have me guess"
    r"\bnot\s+(?:one|something|a\s+(?:question|thing))\s+(?:that\s+)?i(?:['’]m|\s+am|['’]ll|\s+will)\s+(?:going\s+to\s+|gonna\s+)?"
    r"(?:guess|estimate|speculate)\b|\brather\b[^.;!?]{0,60}?\bthan\s+(?:have|having|let|letting)\s+me\s+(?:guess|speculate|estimate)\b",
    # a topic put outside what the speaker has: "Payment methods aren't on my list of topics for this call", "The
    # Hamburg location isn't one I have opening times for"
    r"\b(?:is|are)(?:\s+not|n['’]t)\s+on\s+(?:my|our)\s+list\b|\b(?:is|are)(?:\s+not|n['’]t)\s+(?:one|ones|something)\s+"
    r"(?:that\s+)?i\s+have\s+(?:\w+\s+){1,3}?(?:for|on|about)\W*$",
    # a handoff: "transfer you to a colleague", "passing the conversation along to them"
    r"\b(?:transfer|put)\s+you\s+(?:through\s+)?to\s+(?:a|an|our|the)\s+(?:\w+\s+)?(?:colleague|agent|representative|specialist)",
    r"\b(?:passing|handing|transferring|routing)\s+(?:the\s+|this\s+|your\s+)?(?:conversation|chat|request|case|you)\s+"
    r"(?:along\s+|over\s+)?to\b",
    # "Neither of the passages I retrieved says …", "better not to quote a figure", a form's field not known ("| Gift card
    # usable online | Not confirmed |", read as "…: Not confirmed" by answer_form.as_said)
    r"\bneither\s+of\s+(?:the|these|those|them|my|our)\b[^.;!?]{0,40}?\b(?:says?|mentions?|covers?|lists?|gives?|shows?)\b|"
    r"\b(?:better|best)\s+not\s+to\s+(?:quote|guess|give|say|state|promise)\b|"
    r"[:：]\s*not\s+(?:confirmed|found|available|known|listed|stated|specified|given|provided|mentioned)\W*$",
)
_ZH_UNSPOKEN = (
    # where the clause starts (没查到相关记录呢, 不太好讲), or anywhere when it says nothing was found (目前还没有查到, 中似乎没有
    # 关于…的描述)
    rf"^[^\u3400-\u9fff]*[\u3400-\u9fff]{{0,4}}{_ZH_DECLINING}",
    r"(?:目前|暂时|暂)还?(?:没有|未)(?:查到|找到|检索到|查询到)|(?:中|里)似乎?没有关于[^，。；！？]{0,8}的(?:描述|说明)",
    r"问题[^，。；！？]{0,4}(?:建议|请)(?:您|你)?[^，。；！？]{0,6}(?:联系|咨询)",  # a question referred on
    r"运行步数已?用尽|达到最大迭代次数|(?:运行|任务)(?:中断|被中止)|被中止|(?:中途|运行)[^，。；！？]{0,4}被?截断",  # a run cut short
    r"(?:没有?|未)被(?:包含|收录|提及|提到|说明|涉及)|(?:回答|答案|答复)[^，。；！？]{0,4}(?:不能够?|无法|未能)被?(?:提供|给出|给予)|"
    r"暂不(?:对外)?(?:答复|回复|回答|公开)",
    r"暂不支持[^，。；！？]{0,4}(?:查询|咨询|回答|答复)",  # a question this channel does not take
    r"(?:接口|系统|查询|调用|服务|工具)[^，。；！？]{0,8}?(?:报错|出错|返回了?错误|超时|失败)",  # a lookup that failed
    r"(?:请求|任务|回答|答案)未能(?:完成|生成)|(?:系统|助手)[^，。；！？]{0,4}(?:不能|无法|不可以)够?[^，。；！？]{0,8}(?:提供|给出|回答|答复)|"
    r"没有?(?:写|提到|提及|讲到|覆盖到?)$|未(?:写|提到|提及|讲到)$|"
    r"(?:内容|资料|文档|结果|说明)[^，。；！？]{0,4}(?:均|都)?(?:没有?|未)(?:涉及|提到|提及|覆盖|写)|未能生成(?:回答|答案)|(?:回复|回答)已?被?(?:拦截|屏蔽)",  # a run or a guardrail
    # said in passing: 换电池的价格查不到, 给不了您准确的 ETA, 这边不方便说, 这个别问我, 不想给您一个可能不准的时间, 暂不提供,
    # 无法在此对话中处理, a form's field not known (延保价格：未查到)
    r"(?:查|找|搜)不(?:到|着)[啊呀哦呢啦哈]?$|(?:给|说|答|提供|确认)不(?:了|出)|不方便(?:说|透露|告知|回答|讲|答复)|(?:别|不要)问我|"
    r"不想[^，。；！？]{0,12}(?:不准|错误|不对|误导)|暂不提供|无法在(?:此|这个|本|这里)[^，。；！？]{0,6}(?:处理|回答|答复|解答)|"
    r"[:：]\s*(?:未查到|未找到|未知|不详|待确认)\W*$",
)
_UNSPOKEN_DECLINES = re.compile("(?i:" + "|".join(_EN_UNSPOKEN) + ")|" + "|".join(_ZH_UNSPOKEN))
# "I had no idea skiing is that old", "I didn't know that Elvis sang gospel": what follows is said to be so, the claim
# ("I didn't know that", "I had no idea about it" and "… where it is" decline; "I never knew him" is a claim as it is)
PRESUPPOSED_LEAD = re.compile(r"^i\s*(?:had\s+no\s+idea|did\s*(?:n['’]?t|not)\s+(?:know|reali[sz]e)|never\s+(?:knew|reali[sz]ed)|"
                                  r"was\s*(?:n['’]?t|not)\s+aware)\s+(?:that\s+)?(?=\w+\s+\w)(?!(?:that|this|it|about|of|"
                                  r"either|too|yet|where|what|when|how|why|who|whom|which|whether|if|any|anything|you|him|her|"
                                  r"them)\b)", re.IGNORECASE)
SPEAKER = re.compile(rf"(?i:\b(?:{_ME})\b)|{ZH_SPEAKER}")  # the speaker anywhere: scorers/asides.py
_SAYS_SO = re.compile(r"(?i:(?<!until\s)(?<!unless\s)(?<!before\s)\bi\s+(?:just\s+|only\s+|do\s+)?know\b|\ball\s+i\s+know\b|"
                      r"\bwhat\s+i\s+(?:can|do)\s+(?:tell|say|"
                      r"confirm)\b|\bi\s+can\s+(?:tell\s+you|say|confirm)\s+(?:that|this)\b|"
                      r"\bi\s*(?:['’]m|am)\s+(?:sorry|afraid)\s+to\s+(?:say|tell\s+you)\b|\bi\s+regret\s+to\s+(?:say|inform))|(?<!哪)知道|据我|(?<!哪)晓得|记得")
def says_so(text: str) -> bool:
    """The speaker says what follows is so ("What I can tell you is that …", 据我所知): a claim, never a refusal."""
    return _SAYS_SO.search(mandarin(text)) is not None


# The gates: a clause is matched against the declining shapes only when it holds a cue (a negation or a word of
# ignorance; in Chinese a character or word of them): the shapes cost 5-30 µs a clause, the gate under 1 µs.
_CUE_WORDS = frozenset(
    "not no never nothing none cannot cant dont didnt wont couldnt wouldnt doesnt isnt arent wasnt havent hasnt zero idk "
    "dunno clueless unsure unable stumped puzzled lost "
    "empty blank escape escapes beyond above mystery head wish sry unclear transfer failed passing handing routing "
    "restricted neither withheld cannae dinnae declined outside suppressed blocked hands mine missing leave rather timed error "
    "errored".split())
_ZH_CUES = ("不", "没", "未", "无", "难", "拦截", "超", "恕", "木有", "雾水", "嘀咕", "糊涂", "懵", "迷糊", "头绪", "问倒", "哪知", "哪晓",
            "才疏", "才能", "才好", "调不出", "再帮", "再为", "交给", "转接", "用尽", "中断", "中止", "迭代", "截断", "打包票",
            "别问", "报错", "出错", "返回错误", "返回了错误", "失败")
# any of _ZH_CUES in one search (its branches' first characters skip the rest): a generator of 31 `in` took 1.5 µs
_ZH_CUE = re.compile("|".join(map(re.escape, _ZH_CUES)))
_NOT_LETTERS = str.maketrans({code: " " for code in range(128) if not 97 <= code <= 122})  # ASCII but a-z: spaces


def letter_runs(lower: str) -> list[str]:
    """re.findall("[a-z]+", lower): the runs of a-z in a lower-cased text, by a translation and a split (half the time:
    7.6 -> 3.6 µs over a FaithBench summary); any other character parts runs, as a "?" does."""
    if not lower.isascii():
        lower = lower.encode("ascii", "replace").decode("ascii")
    return lower.translate(_NOT_LETTERS).split()


# letter_runs as bytes, for the gate: the same runs, in half the time (4.1 -> 2.1 µs over a summary)
_NOT_LETTERS_BYTES = bytes(code if 97 <= code <= 122 else 32 for code in range(256))
_CUE_BYTES = frozenset(word.encode("ascii") for word in _CUE_WORDS)
# letter_runs of an ASCII text in the crate, the cues looked up there (7 -> 1 µs over a summary)
_CUE_GATE = WordGate(sorted(_CUE_WORDS), "".join(chr(code) for code in range(128) if not chr(code).isalpha()))


def cued(said: str) -> bool:
    """The gate: whether a text already in Simplified Mandarin (mandarin()) holds a cue of declining (an answer's, once:
    scorers/refusal.py's Reading.cued; then each clause's)."""
    lower = said.lower()
    if lower.isascii():
        return "n't" in lower or bool(_CUE_GATE.meets_in(lower))
    if HAN.search(lower) and _ZH_CUE.search(lower):  # every character of _ZH_CUES is a HAN
        return True
    return "n't" in lower or "n’t" in lower or not _CUE_BYTES.isdisjoint(
        lower.encode("ascii", "replace").translate(_NOT_LETTERS_BYTES).split())


def weigh(text: str, parsed: Clause, asked: Callable[[], Clause], *, in_context: bool) -> Literal["refusal", "maybe"] | None:
    """How the judge reads a clause without a quantity (`parsed`), given the question's clause (`asked`, made when
    first needed) and whether the context has any of its terms: a refusal; "maybe" a refusal (one unless the context
    supports it: it declines on the topic asked, "idk about Australia tbh"; the speaker declining to say, advise or
    confirm refuses whatever the context); None, a claim (or an aside: see asides.around_a_refusal)."""
    text = mandarin(text)
    if not cued(text):
        return None
    question = asked()
    if not parsed.names <= question.names or _SAYS_SO.search(text) is not None:
        return None
    if _WONT_SAY.search(text):
        return "refusal"
    if not text.isascii():
        text = real_negators(text)  # 不同身份的人说话 declines nothing
    if _SPEAKER_DECLINES.search(text) is None and _UNSPOKEN_DECLINES.search(text) is None:
        return None
    return "refusal" if not in_context and parsed.terms.isdisjoint(question.terms) else "maybe"

