"""The local judge's analysis, issue 44: refusals recognised by what they are (scorers/refusal.py), measured on
refusals and partial refusals written for it (exact shares), and the named defects, each on a minimal example
that claims.v4's analysis got wrong."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.local_judging import judged
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.config import Config
from ragpulse.judging.attribution import attribute
from ragpulse.judging.exit import build_record
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.judging.sampler import JudgeItem
from ragpulse.judging.verdicts import Judgment
from ragpulse.scorers.fallback import FallbackDetector
from ragpulse.scorers.refusal import read
from ragpulse.scorers.text import clause

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

DATA = Path(__file__).parent / "data"
FAULTS = ("contradicted", "not_in_context")


def verdicts(judgment: Judgment) -> list[str]:
    return [c.verdict for c in judgment.claims]


# -- refusals ----------------------------------------------------------------------------------------------------

RETURNS = "Unopened items can be returned within 30 days of delivery for a full refund."


@pytest.mark.parametrize("answer", [
    "Unfortunately, our knowledge base doesn't cover that.",
    "The documents I have access to don't say anything about gift wrapping. Would you like me to connect you with an agent?",
    "I'm not sure. The context doesn't specify the battery life. Please contact our support team.",
    "知识库里查不到这方面的内容。",
    "关于学生优惠，资料里一个字都没提。",
    "这个我不清楚，建议您咨询人工客服。",
    # missed in the held-out sets *-w* and *-x*: a search that came back empty, passing on it, a reason or a channel
    # the assistant lacks, the assistant as the speaker
    "I ran a search of the help centre, but nothing came back about cancelling orders. Shall I escalate this to a human agent?",
    "Sorry, I don't have pricing for express delivery. You might want to ask our delivery team.",
    "That's a tricky one and I don't want to give you wrong info, so I'll have to pass on it. Would you like me to put you "
    "through to the warranty team?",
    "敬愛的客戶您好，有關企業採購事宜，本助理目前無相關資料可供答覆，敬請見諒。建議您洽詢業務部門。",
    "很抱歉，關於帳號綁定多個手機號碼的問題，我目前無從得知。若您需要，可以請真人客服協助。",
    "Our order tracking tool is currently unavailable, so I can't look that up for you right now. Please try again a "
    "little later, sorry for the trouble.",
    "Thank you for your enquiry. For security reasons, I am not permitted to discuss payment-related matters in this "
    "chat. Please refer to an authorised representative.",
    "Dear valued customer, we are unable to process service enquiries through this channel. Please contact us via the "
    "official service line. We thank you for your patience.",
    "I'm still learning and don't know the answer to that yet. Sorry! You can reach a human agent through the Contact "
    "page if you need it sooner.",
    "您好，您咨询的事项暂不在本平台受理范围内，建议您通过人工服务渠道进一步咨询。感谢您的理解与支持。",
    "关于贵方所询事项，本系统暂不具备答复权限，请另行联系相关部门。特此说明。",
    "您好，很抱歉给您带来不便。关于您反映的问题，智能客服暂时无法处理，您可回复“人工”转接人工坐席为您服务。",
    "尊敬的客户您好，根据相关规定，支付方式相关问题暂不支持在此渠道咨询，请您通过官方客服热线进行咨询。感谢您的来电。",
    # and in *-y*: texting without apostrophes, a persona, where to look, sympathy before the refusal
    "sorry i dont have any info on gift card validity 🙁 maybe ask at the till next time ur in store?",
    "Great question, Commander! 🎮 Sadly I don't have any intel on upcoming releases. Keep an eye on our official "
    "channels for announcements!",
    "Oh no, sorry your item arrived damaged! 😟 I'm not able to answer questions about return shipping costs, but our "
    "support team can help — just hit 'Contact us' at the bottom of the page.",
    "少侠，这个问题小精灵暂时帮不了你哦～建议你提交工单联系专属客服，麻烦动动手指啦～",
    "您好呀～关于会员价格，我这里暂时没有办法给您准确的答复哦😊 您可以在App内【我的-会员中心】查看，或者咨询在线客服~",
    # and in *-z*: a persona, the sources about other subjects, the question said back, a long span before 答复
    "Hello! I'm Lena, your store assistant. I'm really sorry, but I can't give you opening times right now. Please "
    "contact the store directly or check our website — they'll have the latest information for you. 😊",
    "I want to be upfront: the material I retrieved for this question is about different subjects, and nothing in it "
    "explains how personal data is handled after an account is closed.",
    "我查阅了本次检索到的资料，其中讨论的是其他方面的内容，并未涉及上门安装服务。为避免给您错误的信息，我就不作推测了。",
    "您好，您询问的是买到假货后的赔偿方式。很抱歉，我掌握的资料中没有这方面的内容，暂时无法回答，建议您咨询人工客服。",
    "**无法回答**\n抱歉，我不能就已拆封商品的退货问题给出答复，请您咨询售后客服。",
    # and in *-q2*: a search that found nothing, hours, a question not understood
    "I searched our help articles but didn't find anything on managing email subscriptions. Sorry about that — a "
    "support agent should be able to sort it out for you.",
    "I'm sorry, I don't have opening hours for individual stores. You may want to contact the store directly.",
    "抱歉，没有理解您的意思。请尝试换个说法，或回复“人工”联系客服。",
    "亲亲，活动信息小助手这边还没有收到哦，请您留意官方公告～",
])
def test_an_answer_that_claims_nothing_and_declines_is_a_refusal_never_a_hallucination(answer: str) -> None:
    result = judged("Do you offer gift wrapping?", answer, RETURNS)
    assert (result.refusal, result.hallucination, result.claims, result.groundedness) == (True, False, [], None)
    assert result.groundedness_verdict == "refusal" and result.groundedness_reason.startswith("a refusal")
    assert attribute(result, fallback=result.refusal) == "knowledge_gap"  # the chunk does not answer the question


KNOWLEDGE = json.loads((DATA / "refusals_kb.json").read_text(encoding="utf-8"))
DEVELOPMENT = {row["id"]: row for row in map(json.loads, (DATA / "refusals_dev.jsonl").read_text(encoding="utf-8").splitlines())}


@pytest.mark.parametrize("row", [
    # *-q3*'s: what the team pointed to will do ("they'll know how that blazer fits"), "I don't have store opening
    # times", 我们的工作人员会尽快联系您, a reason before the refusal (账号注销涉及个人信息安全)
    "en-refusal-q302", "en-refusal-q315", "en-refusal-q322", "zh-refusal-q314", "zh-refusal-q327",
    # *-q4*'s: a label ("**Short answer:"), a team it must "go through" or "come from", a page that "will show the
    # exact cost", advice that "should help", "I'd rather not give you an estimate", a reason ("for your protection",
    # "fall under financial services"), 您可以留下联系方式, 检索到的文档里只有…, 不方便给您报, 请在…查看, 不是我能做出承诺的,
    # 還請您至…查看, 为保障您的账户安全, 请您先提交
    "en-refusal-q404", "en-refusal-q413", "en-refusal-q419", "en-refusal-q420", "en-refusal-q421", "en-refusal-q425",
    "en-refusal-q430", "zh-refusal-q410", "zh-refusal-q414", "zh-refusal-q417", "zh-refusal-q418", "zh-refusal-q420",
    "zh-refusal-q421", "zh-refusal-q426", "zh-refusal-q428",
    # *-q5*'s: an e-mail's subject line, "Please share …", "Kindly raise a return request", "a colleague will get back to
    # you", "go to the counter", "check at checkout", "can't advise", "It is not possible for me to make the
    # confirmation", "not within my authority", "times can change", "Hmm, the return period ah", "I'd rather not give
    # you delivery terms"; 问问看, 请您去做联系, 受多种因素影响, 要看具体情况, 小客服, 本渠道不作答复, 把订单截图发来,
    # 出于…考虑, 【客服】抱歉, 你要搭巴士还是德士
    "en-refusal-q507", "en-refusal-q509", "en-refusal-q514", "en-refusal-q516", "en-refusal-q517", "en-refusal-q518",
    "en-refusal-q521", "en-refusal-q522", "en-refusal-q524", "en-refusal-q528", "en-refusal-q530", "zh-refusal-q501",
    "zh-refusal-q504", "zh-refusal-q506", "zh-refusal-q507", "zh-refusal-q516", "zh-refusal-q521", "zh-refusal-q524",
    "zh-refusal-q527", "zh-refusal-q530",
    # *-q6*'s: an agent's search and tool error told ("My lookup returned …", "The order tool responded with an error",
    # "hidden from me", "returned nothing", {"answer": null}), key: value answers ("Payment: unable to advise", "this
    # assistant does not discuss …", "unclear which …"), a pharmacist or technicians pointed to, "rules … vary",
    # "depends on details", "is for a different branch", "I'm not going to assume", "Take your time", "until I know";
    # 我调用了…工具, 工具返回错误, 查询超时, 看不到, 我才能帮您查询, 须由…确认, 可能已有调整, 能否… said back, 返回的结果都和…有关,
    # 本助手, 恕难回复, 涉及金融服务, 没太理解, 找 finance team
    "en-refusal-q602", "en-refusal-q605", "en-refusal-q606", "en-refusal-q607", "en-refusal-q610", "en-refusal-q611",
    "en-refusal-q612", "en-refusal-q614", "en-refusal-q615", "en-refusal-q618", "en-refusal-q620", "en-refusal-q623",
    "en-refusal-q624", "en-refusal-q630", "zh-refusal-q602", "zh-refusal-q603", "zh-refusal-q604", "zh-refusal-q609",
    "zh-refusal-q610", "zh-refusal-q612", "zh-refusal-q614", "zh-refusal-q617", "zh-refusal-q619", "zh-refusal-q623",
    "zh-refusal-q624", "zh-refusal-q626", "zh-refusal-q629", "zh-refusal-q630",
    # *-q7*'s: speech and small models ("I am unable to. … For individual stores.", a shouted answer, an IVR's "we
    # couldn't find … press star", "transfer you to a colleague"), a reasoning model's preamble ("Let me think about
    # this.", "(thought)", "they're asking about"), "isn't responding", "look up the store page", "not coming under my
    # scope"; 好的，用户问的是…, 检索到的内容讲的是…, 接口暂时无响应, 查不到, 调不出来, 才好回答, …这块儿, 归谁出, 管不管,
    # 还是别的, 稍等, 瞅瞅吧, 留意活动页面, 问题暂不支持, 您问这个…
    "en-refusal-q702", "en-refusal-q707", "en-refusal-q711", "en-refusal-q715", "en-refusal-q717", "en-refusal-q718",
    "en-refusal-q723", "en-refusal-q728", "en-refusal-q730", "zh-refusal-q701", "zh-refusal-q703", "zh-refusal-q711",
    "zh-refusal-q715", "zh-refusal-q717", "zh-refusal-q718", "zh-refusal-q720", "zh-refusal-q721", "zh-refusal-q725",
    "zh-refusal-q727", "zh-refusal-q728", "zh-refusal-q730",
    # *-q8*'s ("Empty Response", LlamaIndex's, is a fallback rule now: tests/test_fallback.py): "My role is limited to
    # …", "direct … to our Gift Card team", "may be out of date", "I don't want to give you the wrong answer", "Could you
    # clarify which …"; 现有资料仅涉及…, 不能告诉您, 目前还没有查到, 不在我的答复范围内, 中似乎没有关于…的描述, 请洽服务中心,
    # 我再帮您查
    "en-refusal-q818", "en-refusal-q821", "en-refusal-q823", "en-refusal-q824", "zh-refusal-q806",
    "zh-refusal-q813", "zh-refusal-q815", "zh-refusal-q818", "zh-refusal-q824", "zh-refusal-q825", "zh-refusal-q827",
    # *-q9*'s, agents' final answers ("Agent stopped due to iteration limit or time limit.", LangChain's, is a fallback
    # rule now): a tool's report ("`search_kb` only surfaced articles on …", "came back empty-handed", "found nothing",
    # "failed with an authentication error"), planner labels ("Plan:", "Next:"), "aren't part of what I can look up",
    # "My retriever is limited to …", "wasn't among them", "restricted from this assistant", "neither see nor share",
    # "but couldn't confirm", a handoff ("passing the conversation along to them", "a question for our … specialists");
    # 运行中断：已达到最大迭代次数, 未能生成回答, 只拿到…的条款, 再调用 `get_product`, 调用超时, 稍后再来咨询, 不在我的权限之内,
    # 先在知识库里检索到了, 属于营销信息, 我试着用…查询, 运行步数已用尽, 被中止, 把对话交给它
    "en-refusal-q903", "en-refusal-q905", "en-refusal-q906", "en-refusal-q910", "en-refusal-q911", "en-refusal-q912",
    "en-refusal-q915", "en-refusal-q916", "en-refusal-q925", "en-refusal-q928", "zh-refusal-q907", "zh-refusal-q911",
    "zh-refusal-q913", "zh-refusal-q919", "zh-refusal-q920", "zh-refusal-q921", "zh-refusal-q922", "zh-refusal-q925",
    "zh-refusal-q927", "zh-refusal-q930",
    # *-q10*'s, ordinary traffic: "need to be reviewed by our service team", "Our service centre should be able to give
    # an estimate"; …的情况 and …的安排 said back, 涉及具体订单, 属于金融服务
    "en-refusal-q1018", "en-refusal-q1025", "zh-refusal-q1005", "zh-refusal-q1023", "zh-refusal-q1025",
    "zh-refusal-q1029",
    # *-q11*'s, ordinary traffic again: "I can't process price adjustments or refunds here", "each case may be
    # different" ("can still be returned" no contrast); 您可以关注我们的App活动页, 具体损坏是否属于保修 said back
    "en-refusal-q1122", "en-refusal-q1130", "zh-refusal-q1106", "zh-refusal-q1119",
    # *-q12*'s: "we are not having the details", "not available through this assistant", "this service is unable to
    # provide information", "reply AGENT to chat with our team", "write to the Data Protection Office"; 暂未查询到,
    # 当前助手无法查询, 暂不支持自助查询
    "en-refusal-q1210", "en-refusal-q1212", "en-refusal-q1225", "en-refusal-q1230", "zh-refusal-q1208",
    "zh-refusal-q1214", "zh-refusal-q1230",
    # *-q13*'s, ordinary traffic: "I don't have turnaround times", "… troubleshooting steps", "sorry to hear it
    # arrived damaged", "I can't advise on gift card cash-outs" (whatever the context holds); 我这边确认不了,
    # 您如果着急的话
    "en-refusal-q1307", "en-refusal-q1310", "en-refusal-q1317", "en-refusal-q1322", "zh-refusal-q1323",
    # *-q14*'s: …的处理方式 said back before 我没有查到
    "zh-refusal-q1411",
    # *-q15*'s: …如何处理 said back, …确实很着急 (sympathy)
    "zh-refusal-q1506", "zh-refusal-q1514",
    # *-q16*'s hard cases: an agent's steps told ("Ran `policy_search(…)`", "Retry → returned … only", "my instructions
    # say"), stock replies and guardrails ("No approved content matched", "Response withheld", "Reference: …", "answer:
    # UNAVAILABLE"), machine translation ("we are not able to make determine", "the assistant is not able provide"),
    # Scots ("ah'm no able tae"), Singlish ("… can return or not I cannot say"); 已调用 `…`, 检索词为, 工具 `…` 返回错误,
    # 回复已拦截, 未能完成, 本系统不能够向您提供, …是吧 and …的话 said back, 阿拉, 伊拉, 只讲了, …没写
    "en-refusal-q1602", "en-refusal-q1606", "en-refusal-q1609", "en-refusal-q1614", "en-refusal-q1616",
    "en-refusal-q1619", "en-refusal-q1620", "en-refusal-q1623", "en-refusal-q1624", "en-refusal-q1625",
    "en-refusal-q1626", "en-refusal-q1628", "en-refusal-q1630", "zh-refusal-q1601", "zh-refusal-q1602",
    "zh-refusal-q1605", "zh-refusal-q1606", "zh-refusal-q1607", "zh-refusal-q1609", "zh-refusal-q1611",
    "zh-refusal-q1612", "zh-refusal-q1615", "zh-refusal-q1616", "zh-refusal-q1617", "zh-refusal-q1618",
    "zh-refusal-q1619", "zh-refusal-q1620", "zh-refusal-q1621", "zh-refusal-q1622", "zh-refusal-q1626",
    "zh-refusal-q1627", "zh-refusal-q1628", "zh-refusal-q1630",
    # *-q17*'s hard cases: an agent's tool named ("I ran kb_search for …", "Running warranty_check", 我调用了 kb_search,
    # 已通过 policy_lookup, "which declined to respond", "Handoff:"), voice transcripts ("okay so express um I'm I'm not
    # actually able …", "right so the the berlin shop uh…", 呃上门取件, 啊拆封的耳机哈), machine translation ("the answer
    # cannot be given by us", "is not found any information", 此项内容是未被说明的, 回答是不能够被提供的, 本助手不被允许), a
    # guardrail's lines ("Message: … restricted for this assistant", 说明：…暂不对外答复), Singlish and Pidgin ("the gift card
    # notes never mention …", "Ehn, about picking up …"), "Madam, I am sorry to inform that I am not authorised to share …"
    "en-refusal-q1701", "en-refusal-q1703", "en-refusal-q1707", "en-refusal-q1708", "en-refusal-q1710",
    "en-refusal-q1711", "en-refusal-q1712", "en-refusal-q1713", "en-refusal-q1715", "en-refusal-q1717",
    "en-refusal-q1718", "en-refusal-q1721", "en-refusal-q1722", "en-refusal-q1723", "en-refusal-q1726",
    "en-refusal-q1727", "en-refusal-q1728", "en-refusal-q1729", "en-refusal-q1730", "zh-refusal-q1701",
    "zh-refusal-q1703", "zh-refusal-q1706", "zh-refusal-q1707", "zh-refusal-q1708", "zh-refusal-q1711",
    "zh-refusal-q1716", "zh-refusal-q1717", "zh-refusal-q1718", "zh-refusal-q1724", "zh-refusal-q1725",
    "zh-refusal-q1726", "zh-refusal-q1728", "zh-refusal-q1729",
    # *-q18*'s: an agent's log ("→ search_kb(…)", "Tool call failed: … 504 Gateway Timeout", "[retriever] 1 passage, score
    # 0.41 (threshold 0.55)", 【调用工具】search_policy("会员 退费 中途"), 调用 shipping_zone_check(…) → 错误), a reasoning model's
    # thinking (<think>…</think>, "Thinking: … Answer:"), the sources about something else ("specific to another product
    # category", 说的是别的品类, 检索到的两段分别讲…), "This assistant is unable to process …", "this virtual assistant does not
    # handle …", "I cannot communicate this information", "the info here never say", English in a Chinese clause
    # ("sorry 这个 i can't really confirm"), 不好给您打包票, 瞅一眼
    "en-refusal-q1801", "en-refusal-q1802", "en-refusal-q1803", "en-refusal-q1805", "en-refusal-q1807",
    "en-refusal-q1808", "en-refusal-q1809", "en-refusal-q1812", "en-refusal-q1816", "en-refusal-q1818",
    "en-refusal-q1820", "en-refusal-q1821", "en-refusal-q1822", "en-refusal-q1823", "en-refusal-q1828",
    "en-refusal-q1830", "zh-refusal-q1802", "zh-refusal-q1803", "zh-refusal-q1805", "zh-refusal-q1806",
    "zh-refusal-q1808", "zh-refusal-q1816", "zh-refusal-q1818", "zh-refusal-q1819", "zh-refusal-q1822",
    "zh-refusal-q1829",
    # *-q19*'s, refusals that tell at length what was searched and why not to guess: "Ran a help-centre lookup for …",
    # "the top hit was …", "Nothing that came back tells me …", "What I have on trade-ins talks about …", "isn't in
    # there", "aren't mine to make", "out of my hands", "above my pay grade", "I'll leave delivery prices to checkout",
    # "Missing: …", "Retrieved 1 passage", sympathy ("rough luck at the footy", 真让人心疼), 我查了一下…的说明, 里面讲的是…,
    # 没有覆盖到, 以上内容均未涉及, 不方便替售后同事回答, 先不报了, 明白你的 concern, …这部分, 拍板
    "en-refusal-q1901", "en-refusal-q1902", "en-refusal-q1903", "en-refusal-q1904", "en-refusal-q1906",
    "en-refusal-q1909", "en-refusal-q1910", "en-refusal-q1911", "en-refusal-q1913", "en-refusal-q1914",
    "en-refusal-q1915", "en-refusal-q1918", "en-refusal-q1919", "en-refusal-q1920", "en-refusal-q1921",
    "en-refusal-q1922", "en-refusal-q1923", "en-refusal-q1924", "en-refusal-q1925", "en-refusal-q1926",
    "en-refusal-q1927", "en-refusal-q1928", "en-refusal-q1929", "en-refusal-q1930", "zh-refusal-q1901",
    "zh-refusal-q1902", "zh-refusal-q1903", "zh-refusal-q1904", "zh-refusal-q1905", "zh-refusal-q1908",
    "zh-refusal-q1910", "zh-refusal-q1911", "zh-refusal-q1912", "zh-refusal-q1914", "zh-refusal-q1916",
    "zh-refusal-q1917", "zh-refusal-q1918", "zh-refusal-q1920", "zh-refusal-q1921", "zh-refusal-q1922",
    "zh-refusal-q1923", "zh-refusal-q1925", "zh-refusal-q1926", "zh-refusal-q1927", "zh-refusal-q1928",
    "zh-refusal-q1929", "zh-refusal-q1930",
    # *-q20*'s, answers that hand the question on and say nothing else (scorers/handoffs.py): "Your query has been
    # forwarded to the relevant department", "Store opening hours are something I'd rather you confirm with the store
    # locator", "I'd hate to get wrong", "is the right place to confirm", 已将…转交, 不替您下结论, 不方便给准话; and "the closest
    # match was about …", "Good thing to check before ordering"
    "en-refusal-q2008", "en-refusal-q2009", "en-refusal-q2016", "en-refusal-q2019", "en-refusal-q2020",
    "en-refusal-q2023", "en-refusal-q2024", "en-refusal-q2025", "en-refusal-q2026", "en-refusal-q2027",
    "en-refusal-q2028", "en-refusal-q2030", "zh-refusal-q2016", "zh-refusal-q2017", "zh-refusal-q2024",
    "zh-refusal-q2026", "zh-refusal-q2027",
    # *-q21*'s: "Our support team can go over the payment options", "it might also be worth checking with UK customs",
    # "That's a really good thing to check", 辛苦啦, 别着急, 这种情况挺常见的, 是个挺重要的决定, 可以在下单结算时看一下
    "en-refusal-q2103", "en-refusal-q2128", "zh-refusal-q2112", "zh-refusal-q2116", "zh-refusal-q2119",
    "zh-refusal-q2128",
    # *-q22*'s: "prices show up at checkout", "I don't have a phone number I can share here", "the Contact section … should
    # list the current ways to reach the team", 结算的时候看下, 在官网或App里找找, 很遗憾听到…
    "en-refusal-q2207", "en-refusal-q2229", "zh-refusal-q2201", "zh-refusal-q2222", "zh-refusal-q2226",
    # *-q23*'s: "worth checking with customer support so you don't risk losing any of your 800 points" (the question's
    # number, in another unit), "For student pricing, your best options are:"
    "en-refusal-q2310", "en-refusal-q2311",
    # *-q24*'s hard cases: a ReAct trace's "Final Answer:", a table's header and rule, a field that names the question
    # ("query: parking at Berlin store", 问题类型：发票, {"intent": …}) or is not known ("| Gift card usable online | Not
    # confirmed |", 答复：暂不提供, "resolution: none"), a tool call and its error code in backticks, "so you'd like to …",
    # "Neither of the passages I retrieved says …", 换电池的价格查不到, 这个别问我, 问售后吧, 请您联系人工客服处理
    "en-refusal-q2402", "en-refusal-q2404", "en-refusal-q2409", "en-refusal-q2410", "en-refusal-q2412",
    "en-refusal-q2413", "en-refusal-q2417", "en-refusal-q2424", "en-refusal-q2426", "en-refusal-q2428",
    "en-refusal-q2430", "zh-refusal-q2402", "zh-refusal-q2404", "zh-refusal-q2406", "zh-refusal-q2409",
    "zh-refusal-q2411", "zh-refusal-q2412", "zh-refusal-q2417", "zh-refusal-q2418", "zh-refusal-q2420",
    "zh-refusal-q2421", "zh-refusal-q2423", "zh-refusal-q2425",
    # *-q25*'s: clauses of channels, process and courtesy only (scorers/nothing_new.py): a call-centre transfer, a pipeline's
    # steps, "The Store Locator page lists every branch …", 积分转赠请咨询会员中心, 当前坐席繁忙
    "en-refusal-q2501", "en-refusal-q2505", "en-refusal-q2519", "en-refusal-q2521", "en-refusal-q2522",
    "en-refusal-q2527", "en-refusal-q2529", "zh-refusal-q2504", "zh-refusal-q2515", "zh-refusal-q2519",
    "zh-refusal-q2524",
    # *-q26*'s: a channel's name ("the Returns Centre in your account"), a form's reference ("Ref: GCB-40917")
    "en-refusal-q2610", "en-refusal-q2616", "zh-refusal-q2618",
    # *-q27*'s: a log's own lines (a transcript's header and confidence, a draft's label, "Step 2 of 4"), sign-offs ("^MK",
    # "Priya, Social Care"), "I've queued your question for a trade-in specialist", "I'll leave rewards to the rewards folks"
    "en-refusal-q2702", "en-refusal-q2704", "en-refusal-q2707", "en-refusal-q2709", "en-refusal-q2711",
    "en-refusal-q2714", "en-refusal-q2719", "en-refusal-q2721", "en-refusal-q2725",
    # *-q28*'s: a screen's and a chat's chrome (kiosk buttons, "[WhatsApp 09:14] 🤖 Helpdesk", ":wave:", "@dani", an agent's
    # log in a code fence, "> _PolicyBot v2.3 · … · no answer posted_"), signatures of automated answerers, references
    # ("case RC-55102", 工单 WX-77210), a JSON reply whose status is deferred, a topic owned by a team ("Gift-card terms are
    # owned by Finance", 会员价格归市场部管), idioms of declining ("I'll stay out of it", "Not commenting", 我就不代答了)
    "en-refusal-q2801", "en-refusal-q2804", "en-refusal-q2806", "en-refusal-q2809", "en-refusal-q2810",
    "en-refusal-q2816", "en-refusal-q2817", "en-refusal-q2820", "en-refusal-q2821", "en-refusal-q2822",
    "en-refusal-q2827", "en-refusal-q2828", "en-refusal-q2830", "zh-refusal-q2801", "zh-refusal-q2806",
    "zh-refusal-q2808", "zh-refusal-q2812", "zh-refusal-q2813", "zh-refusal-q2814", "zh-refusal-q2817",
    "zh-refusal-q2819", "zh-refusal-q2820", "zh-refusal-q2822", "zh-refusal-q2823", "zh-refusal-q2824",
    "zh-refusal-q2826", "zh-refusal-q2827", "zh-refusal-q2828", "zh-refusal-q2829",
    # *-q29*'s: e-mail auto-replies that cannot answer automatically and open a ticket ("Your request has been logged
    # (ticket #448102)", 已为您创建工单（编号 WX-77310）, 工单号 FP-20418, 此邮件为系统自动回复), "本自动回复无法为您提供维修报价",
    # "Trade-in requirements are best confirmed by a team member in store"
    "en-refusal-q2918", "en-refusal-q2922", "zh-refusal-q2907", "zh-refusal-q2915", "zh-refusal-q2924",
    # *-q30*'s: sign-offs naming a brand or a team ("– ShopCare", "After-Sales Team", 售后服务部 under 请留意后续邮件), an
    # agent's "Observation: 1 document returned" and Thought line, a queue's 当前排队第3位
    "en-refusal-q3018", "en-refusal-q3019", "en-refusal-q3020", "zh-refusal-q3005", "zh-refusal-q3007", "zh-refusal-q3014",
    # *-q31*'s: "I don't have delivery timeframes for orders going to Canada, sorry, and I'd rather not guess"
    "en-refusal-q3107",
])
def test_a_blind_sets_missed_refusal_over_its_own_chunks(row: str) -> None:
    """The refusals each held-out set's measurement missed, once read: refusals, never hallucinations."""
    written = DEVELOPMENT[row]
    result = judged(written["q"], written["a"], *(KNOWLEDGE[key] for key in written["chunks"]))
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


GIFT_CARDS = "Gift cards are valid for 3 years from purchase and can be used online."


@pytest.mark.parametrize("answer", [
    # a chat's marks and a bot's status line: no words of a claim
    "@dani — leaving that one for a human to confirm. :wave:\n> _PolicyBot v2.3 · confidence below threshold · no answer posted_",
    # a kiosk's header and buttons around a pointer
    "[KIOSK BER-01]\nFor gift card questions please see the Customer Service desk near the entrance.\n[ Show map ]",
    # a topic owned by another team, and declining to comment
    ":no_entry_sign: Gift-card terms are owned by Finance. Not commenting — ask in #finance-questions.",
    # a hand-off with its reference, signed by an automated answerer
    "Hi Hannah,\n\nI'd rather not comment on this one myself. I've passed your message to the finance team under case "
    "RC-55102 and they will reply to this thread.\n\nBest,\nCustomer Care (automated agent)",
    "Reckon that's one to put to the finance team, mate — I'll stay out of it.",
    "您好，\n\n这个问题我这边不便下结论，已将您的问题转给售后团队（工单 WX-77210），他们会在本邮件线程中回复。\n\n客服中心（自动处理）",
])
def test_a_channels_chrome_and_a_bots_own_lines_around_a_refusal_claim_nothing(answer: str) -> None:
    """*-q28*'s registers: what a screen, a chat or a bot says around a refusal or a hand-off was judged as claims (a
    kiosk's id, a reference's digits, a signature's team) and the answer called a hallucination (the rows of *-q28*
    above hold the JSON reply that defers, 会员价格归市场部管 and 我就不代答了)."""
    result = judged("How long is a gift card valid?", answer, GIFT_CARDS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # a line of buttons and a status line are blanked; a bracketed label before a Chinese claim is not a button
    ("[ Call a colleague ]  [ Back ]\nGift cards are valid for 3 years.", ["Gift cards are valid for 3 years"]),
    ("【保修范围】笔记本摔坏属于保修范围，一年内可以免费维修。", ["【保修范围】笔记本摔坏属于保修范围", "一年内可以免费维修"]),
    ("_Reminder: gift cards are valid for 3 years._", ["_Reminder: gift cards are valid for 3 years._"]),
    (":tada: Gift cards are valid for 3 years.", ["Gift cards are valid for 3 years"]),
])
def test_chrome_is_blanked_and_claims_are_kept(answer: str, claims: list[str]) -> None:
    assert [c.strip() for c in read(answer).claims] == claims


DAMAGED_RETURNS = "Return shipping is free for items that arrive damaged. Refunds are issued within 5 business days."


@pytest.mark.parametrize("answer", [
    # an auto-reply that cannot answer automatically, its ticket's reference in brackets, a team that will be in touch
    "Hello,\n\nThis is an automated message. Your question can't be answered automatically. Your enquiry has been "
    "recorded [ref #30917] and one of our team will be in touch shortly.\n\nKind regards,\nHelp Centre",
    "Thanks for your email. We are unable to send an automatic reply to this question; we've opened a support ticket "
    "(case 55120) for you.",
    # a question best left to a person
    "Damage claims are best checked with our returns desk, so I won't guess at it here.",
    # the same in Chinese: 本邮件 as the speaker, a reference after 编号 or 单号 in any bracket, the mail an auto-reply
    "您好！本邮件无法为您解答退货运费的问题，系统已为您生成服务单【编号 448120】，客服专员会尽快与您联系。\n\n本邮件由系统自动发送，请勿直接回复。",
    "您的问题暂时无法通过系统自动处理，因为涉及运费判定，已提交工单（单号 RT-5520），请耐心等待。",
])
def test_an_auto_reply_that_opens_a_ticket_claims_nothing(answer: str) -> None:
    """*-q29*'s registers: an e-mail auto-reply that says it cannot answer automatically and logs a ticket was judged as
    claims (a reference's digits in brackets read as a quantity, "will be in touch" and the mail's own lines as claims),
    as was a topic "best confirmed by" a person; the answers are refusals."""
    result = judged("Is the return shipping free if my order arrived broken?", answer, DAMAGED_RETURNS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


GIFT_CARD_TERMS = "Gift cards are valid for 3 years from purchase."
SCREEN_REPAIRS = "屏幕维修需要5到7个工作日。维修期间可免费借用备用机。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    # a text's sign-off naming a brand (the letter's "After-Sales Team" and 请留意后续邮件: the rows of *-q30* above)
    ("Do you take Apple Pay?", "Sorry, can't help with payment questions by text. Pls contact our team. – QuickMart",
     GIFT_CARD_TERMS),
    # an agent's trace lines: the tool it called and a count it got back
    ("Can I pay with Klarna?", "Action: search_kb(query=\"klarna\")\nObservation: 2 documents returned.\nI'm afraid I "
     "can't confirm payment plans. Please reach out to our billing team.", GIFT_CARD_TERMS),
    # a queue's notice, the speaker's search that found nothing on a topic the context has
    ("Can I pay with Klarna?", "I can't help with payment plans here, sorry. You are number 4 in the queue for an agent.",
     GIFT_CARD_TERMS),
    ("发票开错了怎么重开？", "发票的问题小助手这边无法处理哦，已为您转接人工，前面还有2位，请留意后续短信通知。", GIFT_CARD_TERMS),
    ("换屏大概要花多少钱？", "抱歉，我没有找到屏幕维修的费用信息，无法告诉您具体价格。", SCREEN_REPAIRS),
])
def test_a_sign_off_an_agents_trace_and_a_queue_around_a_refusal_claim_nothing(question: str, answer: str,
                                                                               context: str) -> None:
    """*-q30*'s registers: a sign-off naming a brand or a team ("– ShopCare", "After-Sales Team") was read as a name
    the context lacks, an agent's "Observation: 1 document returned" and a queue's 当前排队第3位 as quantities, 请留意后续
    邮件 as a claim, and "I found no information on <a topic the context has>" as a claim the context supports."""
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # a queue of the shop's is a claim, and so is what the speaker found
    ("我不确定礼品卡的事，不过门店排队一般要20分钟。", ["门店排队一般要20分钟"]),
    ("我没有找到价格信息，不过我找到了维修时长：5到7个工作日。", ["我找到了维修时长：5到7个工作日"]),
])
def test_claims_beside_a_sign_off_or_a_queue_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("Can I pay with Klarna?", answer, GIFT_CARD_TERMS, SCREEN_REPAIRS).claims] == claims


INTERNATIONAL = "We ship to Canada, Mexico and the United Kingdom. International orders are not eligible for free shipping."


@pytest.mark.parametrize(("question", "answer"), [
    # the figures the speaker lacks, whatever they are of, for a topic the context names (*-q31*'s en-refusal-q3107:
    # "I don't have delivery timeframes for orders going to Canada, sorry, and I'd rather not guess")
    ("How long does delivery to Toronto take?", "I don't have delivery timeframes for Canada."),
    ("When will my UK order arrive?", "I don't have lead times for the United Kingdom, so I can't give you a date."),
    ("Can I get an ETA for Canada?", "I haven't got any estimates for orders to Canada, sorry."),
    ("How much is shipping to Mexico?", "Sorry, I have no shipping costs for Mexico, and I'd rather not guess."),
])
def test_the_figures_the_speaker_lacks_are_information_it_lacks(question: str, answer: str) -> None:
    """*-q31*'s: "I don't have <figures> for <a topic>" (timeframes, lead times, estimates, costs) was read as a claim of
    the speaker's the context barely supports, and the answer called a hallucination."""
    result = judged(question, answer, INTERNATIONAL)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # the shop's figures are claims; so is what comes before the speaker's lack
    ("There are no fees for orders to Canada.", ["There are no fees for orders to Canada"]),
    ("We don't charge fees for orders shipped to Canada.", ["We don't charge fees for orders shipped to Canada"]),
    ("Orders to Mexico take 10 days; I don't have lead times for the UK though.", ["Orders to Mexico take 10 days"]),
])
def test_the_shops_figures_beside_the_speakers_lack_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("Are there fees for Canada?", answer, INTERNATIONAL).claims] == claims


@pytest.mark.parametrize(("answer", "claims"), [
    # what the new shapes leave a claim of the world: a check done by someone (not "best" left to them), what is done
    # automatically (not what cannot be), a claim after a reference's line
    ("I'm not sure about refunds, but returns are checked by the warehouse within 2 days.",
     ["but returns are checked by the warehouse within 2 days"]),
    ("I can't say when, but refunds are processed automatically within 5 business days.",
     ["but refunds are processed automatically within 5 business days"]),
    ("我这边查不到您的退款进度，不过退款会在7个工作日内自动原路退回。", ["退款会在7个工作日内自动原路退回"]),
])
def test_claims_beside_a_refusal_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("When will my return be refunded?", answer, DAMAGED_RETURNS).claims] == claims


@pytest.mark.parametrize(("answer", "verdict"), [
    # a JSON object's members read apart: what it resolves is judged, what it declines is no claim
    ('{"resolved": ["Return shipping is free for defective items."], "unresolved": ["Label printing steps are '
     'not in the knowledge base."], "escalate": false}', "supported"),
    ('{"answer": "Defective items are returned free within 90 days at any store.", "declined": "Label printing is not '
     'covered by the available documents."}', "not_in_context"),
    # a label in brackets before each line
    ("[Assistant] Return shipping is free for defective items.\n[Notice] Label printing could not be verified from current "
     "sources.", "supported"),
    # a greeting before the claim; a reasoning model's thinking, which is not the answer
    ("Dear customer, we offer free courier pickup for every return. Regarding the label, I am not having that "
     "information.", "uncertain"),
    ("<think>The passage covers defective items only. Nothing on labels.</think>\nReturn shipping is free for defective "
     "items. I can't tell you how to print the label, sorry.", "supported"),
])
def test_a_structured_partial_refusal_keeps_its_claim_judged(answer: str, verdict: str) -> None:
    result = judged("Is return shipping free for a defective item, and how do I print the label?", answer,
                    "Return shipping is free for defective items.")
    assert (result.refusal, verdicts(result)) == (False, [verdict]), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # in an answer that may refuse, fillers and a word said again are speech, not words of the claim
    ("okay so um the the shipping is free on orders over fifty dollars uh. I'm not sure about returns though.",
     ["okay so    the     shipping is free on orders over fifty dollars"]),
    # in an answer that may refuse, its structure is no claim: a member's key, a label in brackets, a literal alone
    ('{"answer": "Returns are free.", "declined": "I can\'t tell you the fee.", "confidence": 0.9}', ["Returns are free."]),
    ("[Assistant] Returns are free.\n[Notice] I can't tell you the fee.", ["Returns are free"]),
    ("Message: returns are free. I can't tell you the fee.", ["returns are free"]),
    # a reasoning model's thinking is not the answer
    ("<think>Fees are not in the passage.</think> Returns are free. I can't tell you the fee.", ["Returns are free"]),
])
def test_speech_and_structure_are_read_past(answer: str, claims: list[str]) -> None:
    assert read(answer).claims == claims


def test_a_refusal_over_a_chunk_that_answers_is_an_over_refusal_and_its_record_a_refusal() -> None:
    result = judged("Can I return unopened items?", "I'm afraid the help articles don't say.", RETURNS)
    assert result.refusal and attribute(result, fallback=True) == "over_refusal"
    event = TraceEvent(trace_id="t", query="Can I return unopened items?", answer="I'm afraid the help articles don't say.",
                       chunks=[Chunk(text=RETURNS)])
    record = build_record(JudgeItem(event, False, "base_rate", "routine", "none"), result, "over_refusal", "local", 0.0, False)
    assert (record.fallback, record.verdict, record.hallucination, record.groundedness, record.used_chunks) == (
        True, "refusal", False, None, None)


def test_a_partial_refusal_keeps_its_claims_judged() -> None:
    """The refusal clause is no claim; what follows the "but" is, and an unsupported one is flagged."""
    supported = judged("Can I return opened items?", "I couldn't find the exact policy for opened items, but unopened "
                       "items can be returned within 30 days of delivery.", RETURNS)
    assert (supported.refusal, verdicts(supported), supported.hallucination) == (False, ["supported"], False)
    invented = judged("Can I return opened items?", "I couldn't find the exact policy, but returns are free for 90 days.",
                      RETURNS)
    assert not invented.refusal and verdicts(invented) == ["contradicted"]
    chinese = judged("拆封的商品能退吗？", "已拆封商品的规定我不太清楚，不过未拆封商品签收后60天内都可以退货。",
                     "未拆封商品自签收之日起30天内可无理由退货。")
    assert not chinese.refusal and verdicts(chinese) == ["contradicted"]


DELIVERY = "Standard delivery is free on orders above $50 and takes 3-5 business days."


@pytest.mark.parametrize("answer", [
    "Free standard delivery above $50. Sat delivery: can't confirm, sorry.",
    "Standard delivery is free above $50. Saturday drops, can't help there, sorry.",
    "Standard delivery is free above $50. About Saturday delivery, sorry, I don't have info on that.",
])
def test_a_refusal_after_its_topic_is_no_claim_beside_a_supported_one(answer: str) -> None:
    """The part declined names its topic first ("Sat delivery:", "Saturday drops,", "About …, sorry"): it was kept
    as a claim the context lacks, and the answer called a hallucination beside its supported claim."""
    result = judged("Is delivery free, and do you deliver on Saturdays?", answer, DELIVERY)
    assert (result.refusal, verdicts(result), result.hallucination) == (False, ["supported"], False), result.groundedness_reason


@pytest.mark.parametrize("answer", [
    "Apple Pay works, yes. Whether crypto is accepted I can't say from what I've got.",
    "We accept Apple Pay. Crypto payments: I'm not sure we take them.",
])
def test_the_object_of_a_refusal_put_first_is_no_claim(answer: str) -> None:
    """"Whether crypto is accepted" and a label ("Crypto payments:") before the speaker's refusal are what it declines
    to answer: the first was judged as a claim the context barely supports."""
    result = judged("Do you take Apple Pay or crypto?", answer, "We accept Visa, Mastercard, PayPal and Apple Pay.")
    assert (result.refusal, verdicts(result)) == (False, ["supported"]), result.groundedness_reason


WARRANTY = "All laptops come with a 1-year limited warranty. Accidental damage is not covered by the standard warranty."


@pytest.mark.parametrize(("answer", "context"), [
    ("I really don't know, i just know that accidental damage isn't covered after 6 months.", WARRANTY),
    ("I'm not sure. All I know is that laptops don't come with any warranty.", WARRANTY),
    ("Not sure about water damage, though the warranty doesn't cover laptops older than 6 months.", WARRANTY),
    ("我真的不知道，只知道笔记本电脑不享受任何保修。", "笔记本电脑享受一年有限保修，仅限制造缺陷，人为损坏不在保修范围内。"),
])
def test_a_claim_after_a_refusal_is_judged_whatever_the_connective(answer: str, context: str) -> None:
    """What follows the refusal says something about the world (with a negation and the speaker, which alone would
    read as a refusal the context does not support): a claim, and this one unsupported."""
    result = judged("Is water damage covered?", answer, context)
    assert not result.refusal and any(v in FAULTS for v in verdicts(result)), result.groundedness_reason


def _measure(name: str) -> Counter[tuple[str, ...]]:
    """Each row through the shipped fallback rules and the local judge: refusals recognised (by either) and, not
    recognised, read with a faulted claim; refusals whose answer the judge calls a hallucination (what issue 44 asks
    never to happen: `Judgment.hallucination`, the model's verdict, judging/judge_model.py); partial refusals whose
    claims the judge faulted, and whose answer it calls a hallucination, by the truth of the claim after the
    refusal."""
    knowledge = json.loads((DATA / "refusals_kb.json").read_text(encoding="utf-8"))
    detector = FallbackDetector([(r.name, r.pattern) for r in Config().all_fallback_rules()], empty_retrieval=True)
    local = LocalJudge(CollectorRegistry(), cache_entries=100, cache_max_bytes=10_000_000)
    tally: Counter[tuple[str, ...]] = Counter()
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        event = TraceEvent(trace_id=row["id"], query=row["q"], answer=row["a"],
                           chunks=[Chunk(text=knowledge[key]) for key in row["chunks"]])
        result = local.judge(event)
        refused = detector.detect(event) is not None or result.refusal
        faulted = any(c.verdict in FAULTS for c in result.claims)
        if row["kind"] == "refusal":
            tally[(row["lang"], "refusal", "recognised" if refused else "faulted" if faulted else "not faulted")] += 1
            tally[(row["lang"], "refusal", "a hallucination")] += result.hallucination
        else:
            tally[(row["lang"], row["expect"], "refused" if refused else "faulted" if faulted else "not faulted")] += 1
            tally[(row["lang"], row["expect"], "answer a hallucination")] += result.hallucination
    return +tally  # without the zero counts


def test_refusals_and_partial_refusals_written_for_the_recogniser() -> None:
    """tests/data/refusals_dev.jsonl: fifty batches the recogniser was designed on, each after the first written when
    the previous one had frozen it and read after its measurement. The fourth, ids *-k*: partial refusals whose claim
    follows "I just know that", "all I know is", "though", 只知道, 据我所知… and holds a negation. The fifth, ids *-d*:
    the held-out set after the third froze the recogniser, then read. The sixth, ids *-e*: idioms and registers the
    recogniser missed ("beats me", 不好说…). The seventh, ids *-f*: the held-out set after the sixth (29 of 52
    refusals), then read. The eighth, ids *-g*, and the ninth, ids *-m*: held-out sets written blind by others
    (120 rows each: 60 refusals, 60 partial refusals) after the seventh and the eighth froze the recogniser
    (scorers/declines.py: 43 and 40 of 60 refusals recognised), then read. The tenth, ids *-q*: written blind after
    the ninth froze it (customer-service registers, greetings and sign-offs, referrals, typos, mixed English and
    Chinese; 51 of 60 recognised), then read. The eleventh, ids *-r*: written blind after the tenth froze it (LLM
    assistants' registers; 43 of 60 recognised), then read. The twelfth, ids *-s*: written blind after the eleventh
    froze it (many assistants' registers; 48 of 60 recognised), then read. The thirteenth, ids *-t*: written blind
    after the twelfth froze it (agents and chat products, Traditional Chinese; 33 of 60 recognised), then read. The
    fourteenth, ids *-u*: written blind after the thirteenth froze it (a dozen assistants at random; 54 of 60
    recognised), then read. The fifteenth, ids *-v*: written blind after the fourteenth froze it (twelve writers'
    assistants; 51 of 60 recognised), then read. The sixteenth, ids *-w*: written blind after the fifteenth froze it
    (deployed assistants of many companies and countries; 55 of 60 recognised), then read. The seventeenth, ids *-x*:
    written blind after the sixteenth froze it (banks', telecoms', airlines' and government services' registers,
    voice transcripts, learner English, refusals that give a reason; 40 of 60 recognised), then read.
    The eighteenth, ids *-y*: written blind after the seventeenth froze it (thirty companies' bots; 47 of 60
    recognised), then read. The nineteenth, ids *-z*: written blind after the eighteenth froze it (RAG assistants'
    refusal logs on many LLMs; 47 of 60 recognised), then read. The twentieth, ids *-q2*: written blind after the
    nineteenth froze it (a week of a shop assistant's traffic; 52 of 60 recognised), then read. The twenty-first, ids *-q3*:
    written blind after the twentieth froze it (a month of three retailers' assistants; 55 of 60 recognised), then
    read. The twenty-second, ids *-q4*: written blind after the twenty-first froze it (a marketplace's assistant
    on several model families; 45 of 60 recognised), then read. The twenty-third, ids *-q5*: written blind after the
    twenty-second froze it (a retailer's messaging channels in Southeast Asia, Africa and the Gulf; 40 of 60
    recognised), then read. The twenty-fourth, ids *-q6*: written blind after the twenty-third froze it (an online
    department store's LLM agents with tools; 30 of 60 recognised), then read. The twenty-fifth, ids *-q7*: written
    blind after the twenty-fourth froze it (an appliance chain's voice transcripts, small models, reasoning models'
    preambles, dialects; 33 of 60 recognised), then read. The twenty-sixth, ids *-q8*: written blind after the
    twenty-fifth froze it (what RAG stacks emit: frameworks' stock refusals; 46 of 60 recognised), then read.
    The twenty-seventh, ids *-q9*: written blind after the twenty-sixth froze it (agents' final answers; 38 of 60
    recognised), then read. The twenty-eighth, ids *-q10*: written blind after the twenty-seventh froze it
    (ordinary traffic; 54 of 60 recognised), then read. The twenty-ninth, ids *-q11*: written blind after the
    twenty-eighth froze it (ordinary traffic again; 56 of 60 recognised), then read. The thirtieth, ids *-q12*:
    written blind after the twenty-ninth froze it (half ordinary traffic; 53 of 60 recognised), then read. The
    thirty-first, ids *-q13*: written blind after the thirtieth froze it (ordinary traffic of a third deployment; 55
    of 60 recognised), then read. The thirty-second, ids *-q14*: written blind after the thirty-first froze it
    (ordinary traffic of a fourth deployment; 58 of 60 recognised), then read. The thirty-third, ids *-q15*: written
    blind after the thirty-second froze it (ordinary traffic of a fifth deployment; 58 of 60 recognised), then read.
    The thirty-fourth, ids *-q16*: written blind after the thirty-third froze it (hard cases from many deployments; 21
    of 60 recognised), then read. The thirty-fifth, ids *-q17*: written blind after the thirty-fourth froze it (hard
    cases again, by another writer; 27 of 60 recognised), then read. The thirty-sixth, ids *-q18*: written blind
    after the thirty-fifth froze it (one deployment over a month, half ordinary, half hard cases; 33 of 60
    recognised), then read. The thirty-seventh, ids *-q19*: written blind after the thirty-sixth froze it (a
    deployment over a quarter whose refusals explain at length; 13 of 60 recognised), then read. The thirty-eighth, ids
    *-q20*: written blind after the thirty-seventh froze it (five assistants in their natural proportions; 33 of 60
    recognised), then read. The thirty-ninth, ids *-q21*: written blind after the thirty-eighth froze it (a week of four
    chat models' ordinary replies; 54 of 60 recognised), then read. The fortieth, ids *-q22*: written blind after the
    thirty-ninth froze it (a month of three channels; 55 of 60 recognised), then read. The forty-first, ids *-q23*:
    written blind after the fortieth froze it (a random day of a marketplace's assistant; 58 of 60 recognised), then
    read. The forty-second, ids *-q24*: written blind after the forty-first froze it (hard cases from several
    deployments; 33 of 60 recognised), then read. The forty-third, ids *-q25*: written blind after the forty-second
    froze it (hard cases again; 16 of 60 recognised), then read. The forty-fourth, ids *-q26*: written blind after the
    forty-third froze it (one retailer's five assistants; 10 of 60 recognised), then read. The forty-fifth, ids *-q27*:
    written blind after the forty-fourth froze it (a marketplace's channels' logs; 24 of 60 recognised), then read.
    The forty-sixth, ids *-q28*: written blind after the forty-fifth froze it (a retailer's week, kiosks, a Slack bot,
    auto-replies; 29 of 60 recognised), then read. The forty-seventh, ids *-q29*: written blind after the forty-sixth
    froze it (a retailer's month of ordinary traffic, e-mail auto-replies among it; 55 of 60 recognised), then read.
    The forty-eighth, ids *-q30*: written blind after the forty-seventh froze it (three retailers' assistants, a
    tool-using agent's trace, templated hand-overs and queue notices, e-mail and SMS; 54 of 60 recognised), then read.
    The forty-ninth, ids *-q31*: written blind after the forty-eighth froze it (a week of an electronics retailer's
    assistants across six regions and several model vendors; 59 of 60 recognised), then read. The fiftieth, ids
    *-q32*: written blind after the forty-ninth froze it (a holiday fortnight at an electronics retailer: an IVR line's
    transcripts, a plain-language assistant, English and Chinese mixed, ticketing macros, a seller's bot; 34 of 60
    recognised), then read. refusals_heldout.jsonl, ids *-q33*: written blind after the fiftieth's reading froze it,
    measured once. None of the answers is a phrasing of the fallback catalogue (config/fallback_phrases.yaml). Every partial refusal's claim is supported by the chunks (grounded) or not
    (hallucination). The hallucination counts are the model's verdicts (judging/judge_model.py) and move when it is
    refitted."""
    assert _measure("refusals_dev.jsonl") == Counter({
        # "what I've got doesn't cover them", "They cover delivery speeds and costs, but not …" (what the sources hold),
        # "Price matching with other retailers: I can't answer …" (a topic without a verb, in the context); *-q16*'s
        # run-on transcripts that refuse at their end; *-q20*'s "Ooh, in-store pickup — that's outside what I've got …"
        # *-q28*'s reading recognises 2 more of the earlier batches' (1272 and 45 before it) and 28 of its own 30;
        # *-q29*'s reading all 30 of its own (1302 before); *-q30*'s reading all 30 of its own (1332 before); *-q31*'s
        # reading all 30 of its own (1362 before; "I don't have delivery timeframes for …": the figures the speaker lacks);
        # *-q32*'s reading all 30 of its own (1392 before; 16 frozen: tests/test_local_judge_registers.py)
        ("en", "refusal", "recognised"): 1422, ("en", "refusal", "not faulted"): 17,
        # Scots ("I'm no' allowed tae …"), *-q18*'s "only have info on one location and it's not in Ireland", *-q20*'s "The
        # warranty info I have access to is only for laptops"
        ("en", "refusal", "faulted"): 43, ("en", "refusal", "a hallucination"): 59, ("zh", "refusal", "recognised"): 1390,
        # 不敢 confirm, 不敢 promise, "answer: 无" (an English word in a Chinese clause is read as a name the question
        # lacks), Shanghainese (勿晓得, 讲勿清爽), an offer (如果是家电或者数码产品的问题), a noun alone in speech (投影仪吊装); a
        # referral with its topic and no cue of declining (运费承担方面的问题建议您直接联系人工客服处理); *-q20*'s advice beside the
        # refusal (建议送修前先备份, 注销是比较重要的操作)
        # (*-q28*'s reading: 66, 8 and 28 before it, 1237 recognised; its own 30 all recognised. *-q29*'s reading: its
        # own 30 recognised (1270 before); *-q27*'s JSON reply "已为您创建工单#CN-77312，支付组会联系您" no longer faulted, no
        # longer a hallucination (64, 7 and 27 before): a ticket opened and a reference's digits are no claim. *-q30*'s
        # reading: its own 30 recognised (1300 before). *-q31*'s own 30 recognised frozen (1330 before). *-q32*'s
        # reading: its own 30 recognised (1360 before; 18 frozen))
        ("zh", "refusal", "faulted"): 63, ("zh", "refusal", "not faulted"): 8, ("zh", "refusal", "a hallucination"): 26,
        # *-q28*'s 15 added (550, 125, 612 before); *-q29*'s 15 (564, 126, 627 before); *-q30*'s 15 (578, 127, 641
        # before; its 15 as measured: a sign-off's or a queue's reading moves none); *-q31*'s 15 (592, 128, 655 before;
        # 12, 3, 13 after its reading, 13, 2, 14 measured: "I don't have UK-specific transit times" is a refusal since, no
        # faulted claim, and that answer's own claim, "arrives the next business day" against "1 to 2 business days", is
        # read as supported); *-q32*'s 15 (604, 131, 668 before; 9, 6, 10 after its reading, 10, 5, 11 measured: a
        # seller's bot's "Hi, this is the assistant for Kestrel Tech Goods" had flagged an answer whose own claim, "opened
        # electronics can be returned within 30 days as long as the original receipt is included", is read as supported:
        # the analysis's cut)
        ("en", "hallucination", "faulted"): 613, ("en", "hallucination", "not faulted"): 137,
        ("en", "hallucination", "answer a hallucination"): 678,
        # *-q28*'s reading: 518 and 146 before it (and *-q28*'s 15 added); an agent's "[tool] …" lines and "@customer
        # Exceptions aren't mine to make" are no claims; *-q29*'s 15 added (529 and 150 before); *-q30*'s 15 (540 and 154
        # before; a list's "- Visa" is no signature's "– ShopCare": *-q5*'s list stays judged); *-q31*'s reading: *-q11*'s
        # "I don't have delivery time estimates for shipments abroad" no longer a faulted claim (552 and 157 before), and
        # its own 15 (553 and 156 before); *-q32*'s reading: *-q19*'s "so it's worth giving the store a quick call before
        # you go" no longer a faulted claim (a pointer, "giving … a call"), and its own 15 (565 and 159 before)
        ("en", "grounded", "not faulted"): 576, ("en", "grounded", "faulted"): 163,
        # "you get a point for every dollar you spend 🎉", "Every dollar you spend gives you a point" and "You get a
        # point for each dollar you spend": one term, an aside; "sending it back won't cost you anything" shares no
        # word with the question or the chunk; two of *-q16*'s run-on transcripts ("okay so er it's a hundred points
        # gets you a five dollar voucher and um expiry i'm not seeing anything …"); *-q18*'s "yes, the UK is one of the
        # countries we deliver to" after the refusal (no word of the chunk's "We ship to … the United Kingdom"), and in
        # Chinese its English claim "The repair period, a spare phone can be borrowed for free"; one of *-q20*'s
        ("en", "grounded", "refused"): 6, ("en", "hallucination", "refused"): 2,
        # 410 before *-q28*'s reading and its 15; 417 before *-q29*'s 15; 424 before *-q30*'s 15; 433 before *-q31*'s;
        # 437 before local_judge.v5 (one answer at p 0.832, v4's cut 0.831); 436 before *-q32*'s
        ("en", "grounded", "answer a hallucination"): 439,
        # *-q28*'s 15 and 15 added (550, 111, 477; 502, 156, 54 before); *-q29*'s 15 and 15 (564, 112, 489; 511, 162, 55
        # before), and *-q27*'s voice transcript's header "热线录音转写 #H7702" no longer a faulted claim of a grounded
        # answer (a reference's digits), nor the answer a hallucination; *-q30*'s 15 and 15 (578, 113, 501; 523, 165, 57
        # before); *-q31*'s 15 and 15 as measured (591, 115, 512; 533, 170, 60 before); claims.v10's places (601, 120, 521;
        # 542, 176, 62 before): where it ships, a place the chunks do not name ("不过我们也支持配送到新加坡和日本"); true ones
        # a place the speaker names beside the chunk's list and says is not on it in Cantonese or Traditional (唔, 無: no
        # negators yet), "台湾目前还寄不了"; *-q32*'s 15 and 15 as measured (620, 101, 555; 540, 178, 65 before), and
        # *-q6*'s "这个 case 嘛，拆封的耳机 30 天内都可以退，运费我们出" no longer flagged (zh-partial-q628): "这个 case 嘛" (the
        # matter at hand in an English word) had been its one faulted claim; its claims are read as supported
        # claims.v11 reads Traditional characters as Simplified and 唔 冇 無 沒 as negators (631, 104, 565; 551, 182, 66
        # before): Traditional and Cantonese partials' claims share the chunk's terms, 26 grounded ones no longer faulted
        # ("會員每筆訂單都能拿到兩倍積分喔") and 7 no longer hallucinations; 2 newly faulted as their Simplified twins are
        # ("所以香港沒問題": 没 negates; the chunk's 未拆封 negates its clause); of the unsupported, 3 newly faulted
        # ("積分有效期係兩年" contradicted by the chunk's figure), 6 no longer (uncertain or supported), 6 more answers
        # hallucinations
        ("zh", "hallucination", "faulted"): 628, ("zh", "hallucination", "not faulted"): 107,
        ("zh", "hallucination", "refused"): 1, ("zh", "hallucination", "answer a hallucination"): 571,
        ("zh", "grounded", "not faulted"): 575, ("zh", "grounded", "faulted"): 158, ("zh", "grounded", "refused"): 1,
        ("zh", "grounded", "answer a hallucination"): 59,
    })
    # held out (*-q33*: an eighteenth writer's month of a mid-size online electronics shop's ordinary traffic, its
    # deployed assistant behind an "answer only from the context" prompt: polite, medium length, apologies and
    # redirections, short lines, the question restated, a few e-mail replies and app chats), measured once with the
    # recogniser frozen after *-q32*'s reading: 51 of 60 refusals recognised (27 English, 24 Chinese), 3 judged
    # hallucinations (English); partial refusals' unsupported claims make the answer a hallucination in 26 of 30, true
    # ones in 10
    assert _measure("refusals_heldout.jsonl") == Counter({
        ("en", "refusal", "recognised"): 27, ("en", "refusal", "faulted"): 3, ("en", "refusal", "a hallucination"): 3,
        ("zh", "refusal", "recognised"): 24, ("zh", "refusal", "faulted"): 1, ("zh", "refusal", "not faulted"): 5,
        ("en", "hallucination", "faulted"): 14, ("en", "hallucination", "not faulted"): 1,
        ("en", "hallucination", "answer a hallucination"): 14,
        ("en", "grounded", "not faulted"): 11, ("en", "grounded", "faulted"): 4,
        ("en", "grounded", "answer a hallucination"): 4,
        ("zh", "hallucination", "faulted"): 14, ("zh", "hallucination", "not faulted"): 1,
        ("zh", "hallucination", "answer a hallucination"): 12,
        ("zh", "grounded", "not faulted"): 7, ("zh", "grounded", "faulted"): 8,
        ("zh", "grounded", "answer a hallucination"): 6,
    })


@pytest.mark.parametrize(("answer", "claims"), [
    ("We don't ship to Hawaii.", ["We don't ship to Hawaii"]),
    ("I can confirm returns are free.", ["I can confirm returns are free"]),
    ("Not sure if you noticed, but returns are free within 30 days.", ["but returns are free within 30 days"]),
    ("It's hard to say no to free shipping on orders over $50.", ["It's hard to say no to free shipping on orders over $50"]),
    ("I'd guess it arrives in 3 to 5 business days.", ["I'd guess it arrives in 3 to 5 business days"]),
    ("Nothing beats our express shipping.", ["Nothing beats our express shipping"]),
    ("You've got me covered with the warranty.", ["You've got me covered with the warranty"]),
    ("我们不支持海外配送。", ["我们不支持海外配送"]),
    ("这个价格说不准明天就涨了。", ["这个价格说不准明天就涨了"]),
    ("外行也能轻松上手这款笔记本。", ["外行也能轻松上手这款笔记本"]),
    ("发货时间，我们一般是3天内。", ["发货时间", "我们一般是3天内"]),
])
def test_a_claim_that_looks_like_an_idiom_of_ignorance_stays_a_claim(answer: str, claims: list[str]) -> None:
    """The idioms of ignorance (scorers/refusal.py) are refusals only in their shape: "beats" without "me", "hard to
    say no", "I'd guess", 说不准 inside a claim, 外行 without a speaker, a topic before a claim are claims."""
    assert read(answer).claims == claims


@pytest.mark.parametrize("answer", ["我国没有出口这种芯片。", "我省未开通跨境退货服务。", "不同会员等级的说法也有区别。",
                                    "我的看法跟说明书不同。"])
def test_our_country_and_a_word_that_holds_a_negator_are_no_speaker_declining(answer: str) -> None:
    """我国, 我省 ("our country", "our province") are not the speaker, and 不同, 区别 negate nothing: claims, not refusals
    (OCNLI's development half had such hypotheses read as refusals, and so never judged)."""
    result = judged("退货要多久？", answer, "退货在签收后七天内办理，运费由买家承担。")
    assert not result.refusal and verdicts(result), result.groundedness_reason


@pytest.mark.parametrize(("answer", "refusal"), [
    ("I'm not a fan of gift cards either.", False), ("I haven't ordered from the outlet store lately.", False),
    ("I'm afraid I can't shed any light on that.", True), ("I can't advise on changing an order once it's placed.", True),
])
def test_the_speakers_story_is_no_refusal(answer: str, refusal: bool) -> None:
    """The speaker with a negation refuses when it speaks of answering, knowing, the sources or an inability; what
    the speaker likes or did is a claim (BEGIN's chit-chat: 12 of its held-out answers were read as refusals)."""
    result = judged("Do gift cards expire?", answer, "Returns are accepted within 30 days of delivery.")
    assert result.refusal is refusal, result.groundedness_reason


@pytest.mark.parametrize("answer", [
    "Dear Customer,\n\nThank you for contacting us regarding gift cards. Unfortunately, I am unable to confirm this "
    "at this time.\n\nKind regards,\nCustomer Care",
    "Thanks for your question about gift cards. I'm sorry, but I don't have details on that. Please refer to our "
    "help pages or speak to an agent.",
    "Sry cant help w/ that one, pls check w the store directly thx",
    "sorry亲，礼品卡这个我这边看不到，你问下客服那边吧",
    "尊敬的客户：\n\n您好！很抱歉目前无法为您提供相关信息。\n\n此致\n敬礼\n客服中心",
    "## Gift cards\n\nYou'd like to know whether gift cards expire. That detail isn't included in the materials I have "
    "access to. If you share your order number, I can forward your question to a colleague.",
    "Regarding gift card expiry — I'm sorry, but I don't know. A member of our support team can look into it.\n\n"
    "Best regards,\nSupport Assistant",
    "关于 SKU GC-100 礼品卡的有效期：\n- 现有资料中未包含相关信息；\n- 为避免误导，我暂不作回答。\n\n若您能提供订单号，我可以帮您转交。",
    "您想了解礼品卡是否会过期。很抱歉，检索到的内容中并未提及，建议提供订单号后由专人为您处理。",
    "**Short answer:** I don't know. I could not locate it in the provided context (ref: doc 1).",
    "Hi there! 👋 Sadly I don't know that. Good question about gift cards, though — best to check with the store!",
    "We're unable to help with that question at the moment, apologies.\n\nKind regards,\nThe Support Team",
    "作为AI助手，我无法回答您的问题，十分抱歉。方便的话可以提供一下订单号。",
    "Tool result: 0 documents. I can't answer that. Here's what you can do: 1. Gather your order number. 2. Contact "
    "customer support.",
    "I searched the knowledge base for 'gift cards' and got no matching results. I'd rather not guess.",
    "抱歉，我目前的資料中沒有禮品卡相關資訊，無法回答您。建議您聯繫客服人員確認。",
    "呢個我真係唔知，冇資料，你問下客服啦。",
    "查詢結果：0 筆資料。無法提供答案，抱歉。",
    "hmm i dont have anything about gift cards sorry want me to look up something else",
    "Sadly, I'm not in a position to say. Our returns team will be happy to look at your case.",
    "歹勢，禮品卡效期這邊無法提供給您，建議直接詢問客服中心的人員。",
    "不好意思，目前查不到禮品卡的相關資訊。",
    "我查询了支付相关文档，但未能确认礼品卡的有效期，暂时无法回答。",
    "For gift card questions I cannot give you an answer. If you'd like, I can put you through to our support team.",
    "Can't give you a figure on that one, sorry. You may wish to ring the store; that's one for the store folks.",
    "礼品卡的事项不在我能解答的范围内。如需帮助，请转接人工服务。",
])
def test_a_refusal_in_a_letter_or_a_text_is_a_refusal(answer: str) -> None:
    """Greetings, thanks for asking about the topic, sign-offs (a team's name), referrals and texting around a refusal
    are no claims (the blind set *-q*'s misses)."""
    result = judged("Do gift cards expire?", answer, "Returns are accepted within 30 days of delivery.")
    assert result.refusal and not result.hallucination, result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "claim"), [
    ("Can I transfer points, and how many do I earn?",
     "Members earn (sorry, I can't help with transfers) 5 points for each dollar they spend.",
     "5 points for each dollar they spend"),
    ("能用PayPal吗？有没有手续费？", "手续费这个我不清楚～PayPal是可以用的哦。", "PayPal是可以用的哦"),
    ("能寄到台湾吗？要几天？", "抱歉，时效这个我没法确认，不过台湾是可以寄的。", "台湾是可以寄的"),
])
def test_a_claim_beside_a_refusal_in_brackets_after_a_tilde_or_short_is_judged(question: str, answer: str,
                                                                               claim: str) -> None:
    """What follows a refusal in brackets, after a tilde, or in a short clause with a predicate is a claim."""
    result = judged(question, answer, "Members earn 1 point for each dollar they spend. 支持支付宝。")
    assert not result.refusal and claim in [c.claim for c in result.claims], result.groundedness_reason


# -- the named defects -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["未来三年公司将扩大产能", "这无疑是最划算的选择", "这款经典耳机经久不衰", "我特别推荐这款耳机",
                                  "非洲的订单由当地仓库发货", "无理数的小数部分"])
def test_a_word_that_holds_a_negator_character_does_not_negate(text: str) -> None:
    assert not clause(text).negated


def test_a_chinese_claim_with_such_a_word_is_not_the_context_negated() -> None:
    result = judged("公司有什么计划？", "未来三年公司将扩大产能。", "公司将在三年内扩大产能。")
    assert verdicts(result) == ["supported"], result.groundedness_reason


@pytest.mark.parametrize(("text", "quantities"), [
    ("十分抱歉", set()), ("所有能源都十分充足", set()), ("考了九十分", {("points", 90.0)}), ("等十分钟", {("duration", 10.0)}),
])
def test_shifen_alone_is_very_not_ten_points(text: str, quantities: set[tuple[str, float]]) -> None:
    """十分 is "very" (十分抱歉: "very sorry" was a claim of 10 points beside a refusal); 九十分 and 十分钟 are numbers."""
    assert clause(text).quantities == quantities


def test_a_year_is_a_year_not_a_duration() -> None:
    assert clause("该品牌创立于2023年").quantities == {("count", 2023.0)}
    assert clause("有着1500年历史").quantities == {("duration", 1500 * 525960.0)}  # a history of 1,500 years is one
    # 2015年 was 2,015 years, "contradicted" by 8 years of history; a year the context does not give is missing
    founded = judged("品牌哪年创立？", "该品牌创立于2015年。", "该品牌已有8年历史，总部位于上海。")
    assert founded.claims[0].reason.startswith("2015 (count) is not in the context"), founded.groundedness_reason
    other = judged("品牌哪年创立？", "该品牌创立于2013年。", "该品牌创立于2015年，总部位于上海。")
    assert other.claims[0].reason.startswith("says 2013 (count) where the context says 2015 (count)")


def test_a_lead_in_before_a_colon_is_no_claim() -> None:
    context = "Poseidon grossed $181,674,817 at the worldwide box office on a budget of $160 million."
    for answer in ("Based on the provided passage, here is a concise summary of the key points:\n\nPoseidon grossed "
                   "$181,674,817 worldwide on a budget of $160 million.",
                   "According to the passage, the key facts are:\n\nPoseidon grossed $181,674,817 worldwide."):
        result = judged("Summarize the passage.", answer, context)
        assert verdicts(result) == ["supported"], result.groundedness_reason


@pytest.mark.parametrize(("answer", "context"), [
    ("Although sales rose in March, profits fell sharply.",
     "While sales rose in March, profits fell sharply. Although costs were high, the firm kept its staff."),
    ("The EU imposed new tariffs on steel imports.",
     "The European Union imposed new tariffs on steel imports. EU ministers met in Brussels on Monday."),
    ("Conditions on the northern farms worsened during the spring.",
     "Conditions on the northern farms got worse during the spring. Analysts expect the situation to worsen further."),
])
def test_a_paraphrase_is_no_swap(answer: str, context: str) -> None:
    result = judged("What happened?", answer, context)
    assert verdicts(result) == ["supported"], result.groundedness_reason


def test_a_swap_of_one_thing_for_another_is_still_caught() -> None:
    stores = "Our Berlin store is open Monday to Saturday from 9 am to 8 pm. The Munich store closes at 6 pm on Saturdays."
    result = judged("When is the Munich store open?", "The Munich store is open Monday to Saturday from 9 am to 8 pm.", stores)
    assert result.claims[0].reason.startswith("says munich where the context says berlin")


def test_once_as_a_conjunction_is_no_number() -> None:
    assert clause("Once the parcel arrives, you can return it").quantities == frozenset()
    assert clause("You can change the address once per order").quantities == {("times", 1.0)}
    result = judged("How long do I have?", "Once the parcel arrives, you have 14 days to return it.",
                    "Returns are accepted within 14 days of delivery.")
    assert verdicts(result) == ["supported"], result.groundedness_reason


RETURN_STEPS = ("Returns are accepted within 30 days of delivery if the item is unused and in its original packaging. To "
                "start a return, open the order in your account and choose Return item; a prepaid return label is "
                "emailed to you.")
REFUNDS = "Refunds are issued to the original payment method within 5 business days after the returned item arrives."
SHIPPING = ("Standard shipping takes 3 to 5 business days and is free on orders over $50. Express shipping costs $12.99 "
            "and arrives in 1 to 2 business days.")
INTERNATIONAL = "International orders ship from our warehouse in Rotterdam and may be subject to customs fees."


def test_an_invented_service_and_an_invented_rule_are_hallucinations() -> None:
    pickup = judged("How do I return my blender?", "Open the order in your account and choose Return item to get a "
                    "prepaid label. We also offer free home pickup for returns.", RETURN_STEPS, REFUNDS)
    assert pickup.hallucination and verdicts(pickup) == ["supported", "not_in_context"], pickup.groundedness_reason
    assert pickup.claims[1].reason.startswith("an addition ('also')")
    split = judged("When will my order ship?", "Standard shipping takes 3 to 5 business days. Orders with several items "
                   "are always split into separate parcels.", SHIPPING, INTERNATIONAL)
    assert split.hallucination and verdicts(split) == ["supported", "not_in_context"], split.groundedness_reason


@pytest.mark.parametrize(("answer", "context"), [
    ("Heartbreak Hotel became a number 1 hit in the United States.",
     "Heartbreak Hotel was released in January 1956 and became a number one hit in the United States."),
    ("The band has 13 members.", "The band has thirteen members and was formed in 1998."),
    ("The club won 21 titles.", "Founded in 1902, the club has won twenty-one titles."),
])
def test_a_number_in_digits_is_the_same_number_in_words(answer: str, context: str) -> None:
    """The context's number in words is evidence for the claim's in digits: "number 1" was contradicted by 1956."""
    result = judged("Tell me more.", answer, context)
    assert verdicts(result) == ["supported"], result.groundedness_reason


def test_a_number_in_words_in_the_context_supports_the_claims_in_digits() -> None:
    """"eleven players" is support for "11 players" as "11 players" would be (a third of the claim was unsupported)."""
    result = judged("How many players?", "A team has 11 players.", "The sport is played by two teams of eleven players.")
    assert (verdicts(result), result.hallucination) == (["supported"], False), result.groundedness_reason
    assert result.claims[0].reason.startswith("100% of its terms"), result.claims[0].reason


def test_an_age_range_reads_as_its_ages_however_it_is_hyphenated() -> None:
    """"18-49-year-old" was two durations of 18 and 49 years against the context's "18- to 49-year-old", two ages."""
    assert clause("the most 18-49-year-old viewers").quantities == {("count", 18.0), ("count", 49.0)}
    assert clause("the most 18- to 49-year-old viewers").quantities == {("count", 18.0), ("count", 49.0)}
    assert clause("a 3-5 day delivery").quantities == {("duration", 3 * 1440.0), ("duration", 5 * 1440.0)}


@pytest.mark.parametrize(("answer", "claims"), [
    ("Shipping countries I cannot confirm here.", []),
    ("Sorry for inconvenience, the opening hours of store I am not able to tell.", []),
    ("unopened stuff you've got like sixty days to send back um the in-store exchange part i don't know sorry",
     ["unopened stuff you've got like sixty days to send back    the in-store exchange part"]),  # "um" is no word of it
])
def test_what_the_refusal_takes_as_its_object_put_first_is_no_claim(answer: str, claims: list[str]) -> None:
    """A noun phrase before "I cannot confirm" with nothing after it is what cannot be confirmed (learner English read
    it as a claim); a clause with its own subject before it stays a claim."""
    assert read(answer).claims == claims


def test_a_spoken_chinese_answer_without_stops_keeps_its_claim_before_the_refusal() -> None:
    """A voice transcript with no punctuation: the claim before 然后 (or a particle that ends it) is judged, the point
    the speaker cannot answer after it refuses (it was all one refusal)."""
    result = judged("年费多少？家人能用吗？", "嗯年费的话是一百九十八块然后家里人能不能用这个我这边不太清楚哈", "会员年费为198元，可开通一年。")
    assert [c.claim for c in result.claims] == ["嗯年费的话是一百九十八块"], result.groundedness_reason
    assert not result.refusal


@pytest.mark.parametrize(("answer", "claims"), [
    ("Exactly. The offense attempts to advance down the field.", ["The offense attempts to advance down the field"]),
    ("Definitely.", []),
])
def test_an_interjection_is_no_claim(answer: str, claims: list[str]) -> None:
    """"Exactly" alone was a claim whose capitalised word the context lacked: a missing name (BEGIN's development half)."""
    result = judged("How is it played?", answer, "The offense attempts to advance down the field by running.")
    assert ([c.claim for c in result.claims], result.hallucination) == (claims, False), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claim", "verdict"), [
    ("I had no idea skiing has been around for almost five millennia!",
     "skiing has been around for almost five millennia", "supported"),
    ("I didn't know that skiing was invented in Peru.", "skiing was invented in Peru", "not_in_context"),
])
def test_what_the_speaker_did_not_know_is_said_to_be_so_a_claim(answer: str, claim: str, verdict: str) -> None:
    """"I had no idea X" says X: the claim is X, judged (it was read as a refusal, or as X negated)."""
    result = judged("Do you ski?", answer, "Skiing has a history of almost five millennia.")
    assert [(c.claim, c.verdict) for c in result.claims] == [(claim, verdict)], result.groundedness_reason


@pytest.mark.parametrize(("answer", "refusal"), [
    ("I didn't know that.", False), ("I had no idea where the store is.", True),
    ("I wish I could play, I'm addicted to it.", False), ("I wish I could help with that.", True),
])
def test_ignorance_without_a_claim_and_a_wish_to_help_still_decline(answer: str, refusal: bool) -> None:
    result = judged("Do you ski?", answer, "Skiing has a history of almost five millennia.")
    assert result.refusal is refusal, result.groundedness_reason


def test_numbers_in_words_are_read_to_their_value() -> None:
    assert clause("a number one hit").spelled == {("count", 1.0)}
    assert clause("thirteen members").spelled == {("count", 13.0)}
    assert clause("seventeen years").quantities == {("duration", 17 * 525960.0)}
    assert clause("twenty-one titles").spelled == {("count", 21.0)}
    assert clause("eighty-five percent").quantities == {("percent", 85.0)}


def test_words_left_out_beside_the_name_the_context_gives_are_no_swap() -> None:
    """The context's sentence is cut at its semicolons ("ireland (" and "ulster-scots: ) is an island…"): the claim's
    "ireland" is the context's word right before the aligned clause's "ulster-scots", left out; nothing moved."""
    result = judged("What is Ireland?", "ireland is an island in the north atlantic.",
                    "ireland (; ; ulster-scots: ) is an island in the north atlantic.")
    assert verdicts(result) == ["supported"], result.groundedness_reason


def test_a_swap_from_the_sentence_before_is_still_caught() -> None:
    """The Munich store is said just before the Berlin store's hours, but not beside "Berlin": a swap."""
    stores = ("The Munich store closes at 6 pm on Saturdays. Our Berlin store is open Monday to Saturday from 9 am to "
              "8 pm.")
    result = judged("When is the Munich store open?", "The Munich store is open Monday to Saturday from 9 am to 8 pm.",
                    stores)
    assert result.claims[0].reason.startswith("says munich where the context says berlin"), result.groundedness_reason


# -- negations that say the same, and a negation of something else (found in the partial refusals' true claims) ----

WARRANTY = ("All laptops come with a 1-year limited warranty that covers manufacturing defects. Accidental damage is "
            "not covered by the standard warranty.")
INSTALMENTS = "Orders over $200 can be paid in 4 interest-free installments."


def test_a_term_negated_only_of_another_subject_is_no_contradiction() -> None:
    """"standard" is said only in "Accidental damage is not covered by the standard warranty": that negates nothing
    about a warranty covering manufacturing defects (claims.v8 called it the opposite)."""
    judgment = judged("What does the extended plan cover?", "The extended plan terms aren't available to me, but the "
                      "standard warranty covers manufacturing defects for 1 year.", WARRANTY)
    assert [(c.claim, c.verdict) for c in judgment.claims] == [
        ("but the standard warranty covers manufacturing defects for 1 year", "supported")]


@pytest.mark.parametrize("answer", [
    "Orders above $200 can be spread over four installments with no interest.",
    "Orders above $200 can be spread over four installments without interest.",
])
def test_no_interest_says_what_interest_free_says(answer: str) -> None:
    """"interest-free" and "without interest" read as "no interest" (claims.v8: "with no interest" was the opposite of
    "interest-free installments")."""
    assert verdicts(judged("Can I split a $350 order?", answer, INSTALMENTS)) == ["supported"]


def test_with_interest_is_the_opposite_of_interest_free() -> None:
    judgment = judged("Can I split a $350 order?", "Orders above $200 can be paid in four installments with interest.",
                      INSTALMENTS)
    assert [(c.verdict, c.reason) for c in judgment.claims] == [
        ("contradicted", f'the context says the opposite (context: "{INSTALMENTS[:-1]}")')]


@pytest.mark.parametrize("answer", ["Trade-in credit lands in your account no more than ten days later.",
                                    "Trade-in credit lands in your account no later than ten days after."])
def test_no_more_than_is_no_negation(answer: str) -> None:
    assert verdicts(judged("When is my trade-in credited?", answer,
                           "The trade-in value is credited to your account within 10 days.")) == ["supported"]
