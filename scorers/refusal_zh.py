"""The Chinese shapes of a refusal (scorers/refusal.py reads them), and the one script they are read in.

The shapes are written in Simplified Mandarin; mandarin() brings an answer in Traditional characters or Cantonese to
it, character for character, so that what the reading finds maps back to the answer's own text by its offsets.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

import opencc

from ragpulse.scorers.cjk_simplified import TO_SIMPLIFIED

SOURCE = (r"(?:(?i:policy|policies|faq|docs?|documents?|context|materials?|knowledge\s?base)|(?<!个人)(?<!用户)(?<!账户)(?<!注册)资料|文档|文件|知识库|资料库|数据库|上下文|材料|参考资料|手册|原文|"
              r"检索结果|搜索结果|检索到的(?:内容|资料|信息)|所给内容|提供的内容|给出的内容|现有的?(?:信息|资料)|已知信息|所给信息|提供的信息|"
              r"掌握的(?:信息|内容|资料))")
QUALIFIED_INFO = (r"(?:相关|这方面的?|该|此|有关|可参考的|可用的|确切的?|具体的?|更多|进一步的?|任何)"
                      r"(?:信息|资讯|资料|答案|说明|规定|记载|条目|数据|内容|答复|结果)")
INFO = rf"(?:{QUALIFIED_INFO}|答案|资料|记载|条目|(?:相关|这方面的?|有关)\s*(?i:info|information|data))"
SPEAKER = r"(?:我|我们|本人|这边|小助手|本助理|小助理|本机器人|本客服|智能客服|智能助理|智能助手|本平台|本系统)"
# Saying or answering that fails: 说不准, 答不上来, 不晓得, 吃不准…
SPEECH = (r"不好说|说不准|说不好|说不上来?|说不清楚?|说不出来?|答不上来?|答不出来?|答不了|答不到|回答不了|回答不上来|回答不到|"
              r"回答不出来?|答复不了|回复不了|解答不了|不晓得|拿不太?准|吃不太?准")
# Ignorance and the speaker's failed search: refusals only when the speaker says them ("如果您查不到订单号" is not).
IGNORANCE = re.compile(
    rf"不知道|不太?清楚|不太?(?:确定|肯定)|不太?了解|不掌握|不敢确定|不敢保证|{SPEECH}|没有?把握|判断不了|查不了|查不到|查不着|"
    r"查不出来?|看不到|看不了|找不着|搜不到|搜不着|查询不到|打听不到|摸不清|摸不着头脑|心里(?:也|还)?没有?(?:数|底)|"
    r"(?:没有?|毫无)头绪|头绪都没有|一无所知|外行|给不出|给不了(?:您|你)?(?:一个)?(?:准话|准信|准数|确切|明确|肯定|答复|答案|结论)|"
    r"没能查到|未能查到|没有?查到|帮不了|帮不上|不太?懂|没概念|没有概念|缺失|"
    # the speaker of itself: no say, no rights, stuck, blank here (not a story's "我刚才大脑一片空白"), still learning
    # (小助手说了不算, 做不了主, 没有权限, 卡壳了, 小助手这儿是一片空白)
    r"说了不算|做不了主|作不了主|没有?(?:这个)?权限|卡壳|(?:这儿|这里|这边)(?:也|还)?(?:是)?一片空白|(?:还在|正在)努力学习")
# Without a speaker: ignorance that opens the clause (这个真答不上来) or a failed saying that ends it (耳机的情况不好说).
UNSPOKEN_IGNORANCE = re.compile(rf"^(?:这个|这事儿?|这点|这一点|这|此事|那个|暂时|目前)?(?:真的?|还真?|也|可|确实|实在|一时)*"
                                    rf"(?:不太?清楚|不太?确定|不知道|查不到|查询不到|搜不到|找不到|给不出(?:答案|准话|准数|结论)|{SPEECH})|"
                                    rf"(?:{SPEECH})[了呢啊呀哦]*$")
# What identifies the asker's order or account, asked for before an answer
_IDS = r"(?:订单号|单号|订单编号|手机号|尾号|后四位|收货地址|新地址|购买凭证|凭证|截图|账号)"
REFUSAL = re.compile("|".join((
    # 无从确认, 不方便直接答复, 不便报价, 先不作答复
    r"无从(?:得知|知晓|确认|确定|判断|回答|答复|核实|查证)|不得而知|无可奉告|恕难|难以(?:回答|作答|答复|判断|确定)|"
    r"(?:暂不|不便|不方便)(?:直接)?(?:作|做)?(?:回答|答复|回复|作答|报价|答(?:您|你))|(?:先|暂时?)?不(?:作|做|予)(?:答复|回答|回复|判断)",
    r"不在[^，。；！？]{0,8}?(?:知识|能力|服务|回答|解答|受理|处理|支持|咨询|业务)的?范围",
    # what this channel or the assistant may not take: 暂不支持在此渠道咨询, 本系统暂不具备答复权限, 智能客服暂时无法处理
    r"(?:暂不支持|不支持|无法|不能|不便)(?:在|通过)(?:此|本|该|这个)(?:渠道|平台|窗口|页面|服务)(?:咨询|办理|处理|查询|受理|解答)|"
    r"不具备[^，。；！？]{0,6}?(?:权限|资格|能力)",
    rf"{SPEAKER}[^，。；！？]{{0,6}}?(?:无法|没法|没办法|不能)(?:为您|帮您|给您)?(?:处理|受理|办理|解答|回复|查询|查看|核实)",
    r"(?:无法|没法|没办法|不能|难以|未能|没能)[^，。；！？]{0,16}?(?:确定|确认|判断|回答|答复|回复|解答|得知|知道|告知|保证|核实|"
    r"估计|评估|结论|作答|定位到|准话|准信|说法)",
    rf"(?:无法|没法|没办法|不能)(?:为|给|向)?(?:您|你)?提供{INFO}|(?:无法|没法|没办法|不能)提供(?:给|予)(?:您|你)",
    rf"{SOURCE}[^，。；！？]{{0,10}}?(?:没有|没|未|并未|并没有|并无|无|不包含|不含|暂无|暂缺|暂未|缺少|缺乏|不足|"
    r"查不到|搜不到|找不着|找不到|找不出|查不出|查询不到|无关|未收录|不涉及)",
    r"帮不(?:了|上)(?:你|您)|(?:没能|没有|未能|无法|不能)理解(?:您|你)的(?:问题|意思)|^(?:其中|里面|文中|资料中)?[^，。；！？]{0,4}?(?:并未|并没有|未|没有)(?:涉及|提到|提及|包含|记载|说到)|"
    r"查无(?:此|相关|记录|结果|信息|数据)|系统[^，。；！？]{0,6}?(?:查不到|查询不到|搜不到|找不到|查不出)",
    r"未(?:在|从)[^，。；！？]{0,12}?(?:找到|查到|发现)",
    rf"不在[^，。；！？]{{0,12}}?{SOURCE}",
    rf"超出[^，。；！？]{{0,12}}?(?:{SOURCE}|范围|能力)|超纲",
    # chat's (scorers/casual.py): holding back from saying at random (咱不敢瞎报, 我就不乱讲了, 不敢乱指挥), the speaker
    # giving up (这个我摆烂了, 这题我直接交白卷)
    r"(?:不敢|不便|(?:就|先|可|还是)?不)(?:瞎|乱|胡|随便|随意)(?:说|讲|报|答|猜|发言|指挥|回答|承诺|下结论|出主意|表态|指导)",
    rf"(?:{SPEAKER}|咱)[^，。；！？]{{0,4}}?(?:摆烂|投降|认输|弃权|交白卷)",
    rf"(?:没有|没|未能|未|暂无|暂缺|缺少|缺乏|尚无|并无|不掌握)[^，。；！？]{{0,6}}?{INFO}|无{QUALIFIED_INFO}",
    r"(?:相关|现有|已知|目前的?|这方面的?)(?:信息|资料|数据)(?:暂缺|不足|缺失|有限)",
    rf"{SPEAKER}(?:手头|这边|这里|这儿|目前)?(?:也|还|暂时)?(?:没有|没)(?=$|相关|这方面)",
    # the matter beyond the speaker: 不归小助手管, 把小助手难住啦, 小助手怕答错了
    rf"不归{SPEAKER}管|把{SPEAKER}难住|难住{SPEAKER}|{SPEAKER}[^，。；！？]{{0,4}}?怕(?:答|说|讲)错",
    # what the speaker needs first: the asker's order number (麻烦先把订单号发给小助手, 麻烦您提供一下维修单号), its own check
    # (小助手得先核实一下), the answer once it has them (有了订单号才好帮您看)
    rf"^(?:麻烦|请)(?:您|你|亲)?先?(?:(?:把|提供|告诉|发|报)[^，。；！？]{{0,10}}?{_IDS}|(?:告诉|发给|提供给){SPEAKER}[：:]?$)|"
    rf"{SPEAKER}[^，。；！？]{{0,4}}?(?:得|要|需要)先"
    rf"(?:核实|核对|确认|查)|有了[^，。；！？]{{0,10}}?{_IDS}才(?:好|能|可以)(?:帮|给|为)",
    # a system's notice: 系统繁忙, 网络开小差了, 运费信息没加载出来, 请稍后再试
    r"系统(?:繁忙|异常|故障|出错|开小差)|网络(?:开小差|异常|繁忙|出错|不给力)|(?:没|未能?)加载出?来|加载失败|^(?:请|麻烦)?(?:您|亲)?稍后再试",
)))
NOT_SPEAKER = re.compile(r"您|你|如果|若|假如|要是")
KNOWN = r"(?:我?(?:只|就|倒是|倒|却|也)?(?:知道|晓得|记得|听说|了解到)(?:的是)?|据我(?:所知|了解))"
TAIL = re.compile(rf"不过|但是|但|只是|可是|然而|(?<![不没未])(?<!不太)(?<!不大)(?<!不怎么){KNOWN}")
KNOWN_LEAD = re.compile(rf"^(?:但是|但|不过|只是|可是|然而)?[，,\s]*{KNOWN}")
OPENING = re.compile(r"^(?:这个|这事|这一点)?(?:很|非常|真|实在)?(?:抱歉|对不起|不好意思|遗憾|很遗憾|遗憾的是|恕我直言|"
                         r"说实话|老实说|恐怕|嗯+|呃|这个嘛|我(?:帮您|帮你|替您)?(?:查|看|找|搜|检索|翻)了(?:一下|一遍|下)?)"
                         r"[，,、\s]*$")
# A clause that only names what the next one refuses to answer: 关于学生优惠，… / 会员能否中途退订，…
# or a bare noun phrase of a topic (纸质发票寄送时间，…: no predicate)
TOPIC = re.compile(r"^(?:关于|至于|对于|针对|有关|您问的|你问的|您说的|您提到的|根据|按照|依据|基于)|问题$|"
                       r"能否|是否|能不能|可不可以|会不会|有没有|多久|多少|怎么|如何|什么|哪|几|吗|边度|点样|"  # 边度 点样: Cantonese where, how
                       # (已拆封 "opened" names a state, no predicate; 这项服务, 这个需求, 这一块, 的部分, 的判定, 这些: the matter named)
                       r"^(?!.*(?:是|有|需要|要|可以|能够?|已(?!拆封|开封|签收|激活)经?|了|将|都|只|不|没|被|由))[^，。；！？]{1,14}"
                       r"(?:时间|时效|费用|价格|规定|政策|流程|情况|方面|这块|这一块|部分|服务|需求|安排|判定|方式|范围|门槛|周期|这些|标准|细节|"
                       r"方法|规则|条件|地点|进度|的事儿?|这件事|这个事|这事儿?)[嘛呢啊呀]?$")  # 差价这事儿嘛: a particle
REFERRAL = re.compile(r"^(?:这个|此事|这事儿?|这)?(?:还|恐怕|可能)?(?:请|建议(?:您|你)?|您可以|你可以|可以|麻烦(?:您|你)?|"
                          r"得|要|需要|只能)?(?:直接)?(?:联系|咨询|致电|拨打|询问|问问?|找|联络|洽询)(?:一下)?[^，。；！？]{0,10}?"
                          r"(?:客服|人工|工作人员|人员|商家|售后|我们|门店|专员|别人|其他人|专人|部门|中心|那边|物流|财务)")
CONTRAST_LEAD = re.compile(r"^(?:但是|但|不过|只是|可是|然而)[，,\s]*")


def refusal(text: str) -> tuple[str, int] | None:
    """A Chinese clause's refusal: (the claim it makes before it turns to the point it refuses, or "", where the
    refusal's shape ends); None when it refuses nothing. The shapes of ignorance refuse only when the speaker says them
    ("如果您查不到订单号" is not)."""
    found = REFUSAL.search(text)
    ignorance = IGNORANCE.search(text)
    if ignorance is not None and (found is None or ignorance.start() < found.start()):
        before = text[: ignorance.start()]
        spoken = re.search(SPEAKER, before) is not None or UNSPOKEN_IGNORANCE.search(text) is not None
        if spoken and not (NOT_SPEAKER.search(before) and "我" not in before):
            found = ignorance
    if found is None:
        return None
    return _head(text, found.start()), found.end()


# Where a spoken, unpunctuated Chinese answer turns to another point: a connective, or a particle that ends a
# statement before more text (年费的话是一百九十八块然后家里人能不能用这个我不太清楚: a claim, then the refusal)
_TURN = re.compile(r"然后|另外|还有|至于|不过|但是|(?<=[哈呢啦哦呀吧啊嘛])(?=[\u3400-\u9fff])")
_HEAD_CHARS = 6  # a shorter text before the turn names a topic ("这个问题呢"), no claim
_SAYS = re.compile(r"[是有能会可要就都了过不没]|\d|[一二三四五六七八九十百千万两]")  # a predicate or a number: it says something


def _head(text: str, refusal: int) -> str:
    """What a clause says before it turns to the point it refuses, a claim of its own; "" when it does not turn or
    says nothing before (the text before the refusal is its topic: 关于退货运费我不太清楚, 这个问题呢我不清楚)."""
    turns = list(_TURN.finditer(text, 0, refusal))
    if not turns:
        return ""
    head = text[: turns[-1].start()].strip(" ，,")
    return head if len(head) >= _HEAD_CHARS and _SAYS.search(head) else ""



# A Chinese character, the gate of every reading in Chinese (the blocks the refusal readings hold)
HAN = re.compile("[\u3400-\u9fff]")
# The built-in fallback rules' patterns (config/fallback_phrases.yaml) in Traditional characters, as OpenCC's s2t
# converts them (null: to themselves); tests/test_fallback.py holds the table to it. s2t's phrase dictionary takes
# ~26 MB for the process's life (t2s's 3): a config of only the built-in rules never loads it.
_KNOWN_TRADITIONAL: dict[str, str | None] = json.loads(
    resources.files(__package__).joinpath("traditional_forms.json").read_text(encoding="utf-8"))
# Cantonese words of negation, having and pointing, as Mandarin says them (one character for one): 唔知 不知, 冇资料
# 没资料, 呢个 这个
_CANTONESE = str.maketrans({"唔": "不", "冇": "没", "嘅": "的", "咗": "了", "搵": "找", "睇": "看", "喺": "在", "佢": "他",
                            "畀": "给", "啲": "些", "乜": "什"})
_CANTONESE_THIS = re.compile("呢(?=个|样|度|些|种|次|件|位|款|题|方面|边)")
# Whether there is a Cantonese word to translate at all: str.translate looks up every character of a Chinese text
# (3 µs a short answer, where the search takes 0.15)
_CANTONESE_ANY = re.compile(f"[{''.join(map(chr, _CANTONESE))}呢]")


def mandarin(text: str) -> str:
    """`text` in Simplified Mandarin, character for character (Traditional characters converted, Cantonese words of
    negation and pointing as Mandarin says them); `text` itself when it holds no Chinese or converts to another
    length (then the offsets would not hold)."""
    if text.isascii() or HAN.search(text) is None:  # curly quotes and accents: nothing to convert
        return text
    converted = TO_SIMPLIFIED.convert(text)
    if _CANTONESE_ANY.search(converted) is not None:
        converted = _CANTONESE_THIS.sub("这", converted.translate(_CANTONESE))
    return converted if len(converted) == len(text) else text


def in_both_scripts(pattern: str) -> str:
    """A phrase pattern written in Simplified characters, matching their Traditional forms too (資料 for 资料): the
    fallback rules' Chinese phrases are listed once. A pattern without Chinese is returned as it is."""
    if pattern.isascii():
        return pattern
    traditional = _KNOWN_TRADITIONAL[pattern] if pattern in _KNOWN_TRADITIONAL else to_traditional(pattern)
    return pattern if traditional is None or traditional == pattern else f"(?:{pattern})|(?:{traditional})"


@functools.cache
def _s2t() -> opencc.OpenCC:
    return opencc.OpenCC("s2t")


def to_traditional(text: str) -> str:
    """`text` in Traditional characters, by OpenCC's s2t (loaded on first use)."""
    return _s2t().convert(text)


# A matter named alone: a few characters, no predicate, no number or negation (上门取件服务, 会员年费)
_NAMES_ONLY = re.compile(r"[\u3400-\u9fff]{2,10}")
_PREDICATE_CHARS = re.compile("[是可能会要需有不没无未在为将]")


def names_only(text: str) -> bool:
    """Whether a Chinese clause only names a matter, no claim of its own (a list item's title, a topic before "……")."""
    return _NAMES_ONLY.fullmatch(text) is not None and _PREDICATE_CHARS.search(text) is None
