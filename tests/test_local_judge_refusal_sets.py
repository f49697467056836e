"""The local judge's refusal sets, issue 44: the refusals and partial refusals written for the recogniser
(tests/data/refusals_dev.jsonl, refusals_heldout.jsonl) tallied by `_measure` (exact counts), and each blind set's
missed refusals pinned over their own chunks once read."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.local_judging import FAULTS, judged
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.config import Config
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.scorers.fallback import FallbackDetector

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

DATA = Path(__file__).parent / "data"
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
    """tests/data/refusals_dev.jsonl: sixty batches the recogniser was designed on, each after the first written when
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
    recognised), then read. The fifty-first, ids *-q33*: written blind after the fiftieth froze it (a month of an online
    electronics shop's ordinary traffic from its deployed assistant; 51 of 60 recognised), then read. The fifty-second,
    ids *-q34*: written blind after the fifty-first froze it (a month of a regional electronics shop's ordinary traffic,
    Chinese in Simplified and Traditional characters and Cantonese; 41 of 60 recognised), then read. The fifty-third,
    ids *-q35*: written blind after the fifty-second froze it (a quarter of one electronics retailer's five assistants:
    terse, verbose, strict about its documents, mixing English into Chinese, formal; 31 of 60 recognised), then read.
    The fifty-fourth, ids *-q36*: written blind after the fifty-third froze it (a fortnight of an electronics shop's
    RAG assistant naming the help-centre articles it was given; 44 of 60 recognised), then read. The fifty-fifth, ids
    *-q37*: written blind after the fifty-fourth froze it (a shopping app's chatbot in a playful brand voice, quick-reply
    chips under the answer, in Chinese a marketplace bot's 亲 and 小助手; 30 of 60 recognised), then read.
    The fifty-sixth, ids *-q38*: written blind after the fifty-fifth froze it (an enterprise RAG assistant held to a
    markdown answer template; 21 of 60 recognised), then read (scorers/templates.py).
    The fifty-seventh, ids *-q39*: written blind after the fifty-sixth froze it (a RAG service on an open-weight
    reasoning model served without a reasoning parser, its answers keeping their <think> blocks; 54 of 60
    recognised), then read. The fifty-eighth, ids *-q40*: written blind after the fifty-seventh froze it (a small
    quantized model's answers: the question echoed, instructions leaked, sentences repeated or cut off; 35 of 60
    recognised), then read (scorers/small_models.py).
    The fifty-ninth, ids *-q41*: written blind after the fifty-eighth froze it (a gaming retailer's chatbot in its
    teenage audience's slang, Chinese net-speak; 36 of 60 recognised), then read (scorers/casual.py).
    The sixtieth, ids *-q42*: written blind after the fifty-ninth froze it (an electronics retailer's voice channel,
    its model's SSML; 30 of 60 recognised), then read (scorers/speech_markup.py, scorers/chrome.py).
    refusals_heldout.jsonl, ids *-q43*: written blind after the sixtieth's reading froze it, measured once. None of
    the answers is a phrasing of the fallback catalogue (config/fallback_phrases.yaml). Every partial refusal's claim is supported by the chunks (grounded) or not
    (hallucination). The hallucination counts are the model's verdicts (judging/judge_model.py) and move when it is
    refitted."""
    assert _measure("refusals_dev.jsonl") == Counter({
        # *-q40*'s reading (a small model's answer, scorers/small_models.py; *-q40* held out still): English refusals
        # recognised 1626 → 1627, not faulted 22 → 21, judged hallucinations 65 → 64 (en-refusal-q809: "They cover
        # delivery speeds and costs, but not …" after the sources named, read as what they cover); Chinese recognised
        # 1592 → 1593, not faulted 13 → 12 (zh-refusal-q3703: 包邮门槛这个嘛…… a matter named before an ellipsis);
        # supported Chinese partials faulted 196 → 195, not faulted 642 → 643 (zh-partial-q1712's 运费那块呃…… the same).
        # zh-partial-q1722 keeps its unsupported 每个订单能退三次 faulted, its 然后用了券的那种…… no longer; no partial's
        # flag moved.
        # *-q42* folded after its reading (its 120 rows appended, ids kept): each count is the one before plus *-q42*'s
        # after its readings (the held-out pins it had): English refusals recognised 1686 → 1711, faulted 44 → 46, not
        # faulted 22 → 25, judged hallucinations 65 → 70 (a refusal whose lines address no one, the question said back,
        # a topic said to belong to someone else: "belong with our gift card support line"); Chinese recognised 1647 →
        # 1668, faulted 69 → 76, not faulted 15 → 17; partials as *-q42*'s. No earlier row moved.
        # *-q41* folded after its reading (its 120 rows appended, ids kept): each count is the one before plus *-q41*'s
        # after its reading (the held-out pins it had): English refusals recognised 1656 → 1686, Chinese 1617 → 1647;
        # partials as *-q41*'s. No earlier row moved.
        # *-q40* folded after its reading (its 120 rows appended, ids kept): each count is the one before plus *-q40*'s
        # after its reading (the held-out pins it had): English refusals recognised 1627 → 1656, not faulted 21 → 22,
        # judged hallucinations 64 → 65 (en-refusal-q4026: "Battery replacement time: not covered"); Chinese recognised
        # 1593 → 1617, faulted 66 → 69, not faulted 12 → 15; partials as *-q40*'s. No earlier row moved.
        # *-q39* folded after its reading (its 120 rows appended, ids kept): each count is the one before plus *-q39*'s
        # after its reading (the held-out pins it had): English refusals recognised 1596 → 1626; Chinese recognised
        # 1563 → 1592, faulted 65 → 66 (zh-refusal-q3903: the reasoning's account of the context read as a claim, not
        # a hallucination); partials as *-q39*'s. No earlier row moved.
        # *-q38* folded after its reading (its 120 rows appended, ids kept): each count is the one before plus *-q38*'s
        # after its reading (the held-out pins it had): English refusals recognised 1568 → 1596, faulted 43 → 44, not
        # faulted 21 → 22, judged hallucinations 63 → 65 (en-refusal-q3805 "Coverage determinations are reserved for the
        # warranty team", en-refusal-q3813 "Please book an in-store evaluation …"); Chinese recognised 1535 → 1563, not
        # faulted 11 → 13; partials as *-q38*'s. No earlier row moved.
        # "what I've got doesn't cover them", "They cover delivery speeds and costs, but not …" (what the sources hold),
        # "Price matching with other retailers: I can't answer …" (a topic without a verb, in the context); *-q16*'s
        # run-on transcripts that refuse at their end; *-q20*'s "Ooh, in-store pickup — that's outside what I've got …"
        # *-q28*'s reading recognises 2 more of the earlier batches' (1272 and 45 before it) and 28 of its own 30;
        # *-q29*'s reading all 30 of its own (1302 before); *-q30*'s reading all 30 of its own (1332 before); *-q31*'s
        # reading all 30 of its own (1362 before; "I don't have delivery timeframes for …": the figures the speaker lacks);
        # *-q32*'s reading all 30 of its own (1392 before; 16 frozen: tests/test_local_judge_registers.py); *-q33*'s
        # reading all 30 of its own (1422 before; 27 frozen: "<topic> is something I'd need to double-check", a team
        # that "can take care of it", "… sounds convenient, but": tests/test_local_judge_topics.py); *-q34*'s reading
        # recognises en-refusal-q2717 ("I'll pass the postage question to a colleague …": the speaker's deferral,
        # scorers/deferrals.py); *-q34*'s 30 all recognised after its reading (25 frozen: tests/test_local_judge_deferrals.py)
        # *-q35*'s reading: 18 of its 30 recognised (15 frozen: tests/test_local_judge_own_sources.py; 1483 before)
        # *-q36*'s reading: 7 more of *-q35*'s (en-refusal-q3501, q3506, q3512, q3513, q3514, q3515, q3520: "Our returns
        # team handles that", "I'm going to hold off on this one", "Trade-in eligibility, hm", "… are best addressed by
        # our logistics desk", "Please verify the delivery cost at checkout", "we recommend contacting your dedicated
        # account manager", "The service centre can quote you a cost"; 1501 and 23 before) and all 30 of its own (23
        # frozen: tests/test_local_judge_hand_overs.py); the quick-reply reading recognises en-refusal-q2530 (a table's
        # header row beside "_Live rates failed to load …_" is said around it, as chips apart by "|" are; 1538 before)
        # *-q37*'s 30 after its reading (1539 and 20 before): 29 recognised (17 frozen, 20 after the quick-reply reading:
        # tests/test_local_judge_bot_voice.py), 1 not faulted
        ("en", "refusal", "recognised"): 1711, ("en", "refusal", "not faulted"): 25,
        # Scots ("I'm no' allowed tae …"), *-q18*'s "only have info on one location and it's not in Ireland", *-q20*'s "The
        # warranty info I have access to is only for laptops" (43 and 59 before *-q34*'s reading: en-refusal-q2717)
        # *-q35*'s 30 (42, 17, 58 before): 7 faulted, 5 not, 12 hallucinations after its reading (9, 6, 15 frozen); *-q26*'s
        # en-refusal-q2617's "Let me put you through to someone on the shipping team" no longer a faulted claim (a
        # hand-over, scorers/deferrals.py), its answer still flagged by the model
        # *-q36*'s reading: 44 and 63 (48 and 70 before: the 7 of *-q35*'s above); its own 30 none (1 and 6 frozen);
        # the quick-reply reading: 43 and 62 (en-refusal-q2530 above)
        # *-q37*'s 30 after its reading: none faulted, 1 a hallucination (en-refusal-q3723: "For missing parcels I need a
        # couple of things first:" and a list of them, its "- Delivery postcode" supported; 8 and 10 before its reading)
        ("en", "refusal", "faulted"): 46, ("en", "refusal", "a hallucination"): 70, ("zh", "refusal", "recognised"): 1668,
        # 不敢 confirm, 不敢 promise, "answer: 无" (an English word in a Chinese clause is read as a name the question
        # lacks), Shanghainese (勿晓得, 讲勿清爽), an offer (如果是家电或者数码产品的问题), a noun alone in speech (投影仪吊装); a
        # referral with its topic and no cue of declining (运费承担方面的问题建议您直接联系人工客服处理); *-q20*'s advice beside the
        # refusal (建议送修前先备份, 注销是比较重要的操作)
        # (*-q28*'s reading: 66, 8 and 28 before it, 1237 recognised; its own 30 all recognised. *-q29*'s reading: its
        # own 30 recognised (1270 before); *-q27*'s JSON reply "已为您创建工单#CN-77312，支付组会联系您" no longer faulted, no
        # longer a hallucination (64, 7 and 27 before): a ticket opened and a reference's digits are no claim. *-q30*'s
        # reading: its own 30 recognised (1300 before). *-q31*'s own 30 recognised frozen (1330 before). *-q32*'s
        # reading: its own 30 recognised (1360 before; 18 frozen). *-q33*'s reading: its own 30 recognised (1390 before;
        # 24 frozen: the topic named in a clause of its own before the refusal, 货到付款这个问题, 维修期间的备用机安排, and a
        # letter's 如方便); zh-refusal-q2708's 已记录您的需求 no longer judged, its answer faulted and a hallucination as before.
        # *-q34*'s reading: a topic left to someone else in the next clause recognises *-q26*'s zh-refusal-q2606, q2608,
        # q2616 and q2619 (关于发票抬头重开一事，已转交财务组处理; 跨境配送相关的政策，按规定要由人工客服来答复): 1420 and 63 before);
        # *-q34*'s 30 all recognised after its reading (1424 before; 16 frozen)
        # *-q35*'s 30 after its reading (1454, 59, 8, 26 before): 18 recognised (16 frozen: 现有资料只说明了配送范围，没提到…,
        # 提供给我的资料里…未作说明), 11 faulted, 1 not, 2 hallucinations (13, 1, 3 frozen)
        # *-q36*'s reading (1472, 70, 9, 28 before): *-q35*'s zh-refusal-q3509, q3513, q3515, q3519, q3529 (差价的事情 please
        # contact our support team, 请与贵司的客户经理联系，由其…, 积分转赠这个 not sure, 建议与我司企业销售部门直接沟通), *-q8*'s
        # zh-refusal-q817 (运费承担方面的问题建议您直接联系人工客服处理) and *-q25*'s zh-refusal-q2517 (…，他们会根据您的订单情况给您
        # 详细说明的) recognised; its own 30: 29 recognised (21 frozen: 发票相关事宜由财务同事负责, 我手上的退货说明只提到了耳机, 不在
        # 我参考的说明里), 1 not faulted (包邮门槛可能会随活动调整，我这边就不给您确切数字了), none a hallucination (7, 2, 0 frozen)
        # *-q37*'s 30 after its reading (1508, 64, 9 before): 27 recognised (13 frozen: 小助手说了不算, 系统繁忙, 麻烦先把订单号
        # 发给小助手), 1 faulted (zh-refusal-q3722: 麻烦告诉小助手： and a list), 2 not faulted (包邮门槛这个嘛……小助手也拿不准呢,
        # 改地址要先核对订单哦), none a hallucination (2 frozen)
        ("zh", "refusal", "faulted"): 76, ("zh", "refusal", "not faulted"): 17, ("zh", "refusal", "a hallucination"): 26,
        # *-q28*'s 15 added (550, 125, 612 before); *-q29*'s 15 (564, 126, 627 before); *-q30*'s 15 (578, 127, 641
        # before; its 15 as measured: a sign-off's or a queue's reading moves none); *-q31*'s 15 (592, 128, 655 before;
        # 12, 3, 13 after its reading, 13, 2, 14 measured: "I don't have UK-specific transit times" is a refusal since, no
        # faulted claim, and that answer's own claim, "arrives the next business day" against "1 to 2 business days", is
        # read as supported); *-q32*'s 15 (604, 131, 668 before; 9, 6, 10 after its reading, 10, 5, 11 measured: a
        # seller's bot's "Hi, this is the assistant for Kestrel Tech Goods" had flagged an answer whose own claim, "opened
        # electronics can be returned within 30 days as long as the original receipt is included", is read as supported:
        # the analysis's cut); *-q33*'s 15 (613, 137, 678 before; 14, 1, 14 after its reading as measured: no partial
        # refusal of it moves); *-q34*'s reading: en-partial-q2621's "online checkout stuff I'd leave to the web team" a
        # deferral, and "whatever's left after that turns into store credit automatically", which shares no term with
        # the question or the chunk, then read as said around it: its answer no longer flagged (627, 138, 692 before);
        # *-q34*'s 15 (626, 139, 691 before; 14, 1, 15 as measured, its reading moves none)
        # *-q35*'s 15 (640, 140, 706 before; 15, 0, 14 as measured, its reading moves none)
        # *-q36*'s 15 (655, 140, 720 before; 14, 1, 14 as measured, its reading moves none; en-partial-q2716's and
        # q3417's deferrals, "I'll let the returns team decide …", "… I'll leave to our technicians", no longer faulted
        # claims, their answers faulted by their other claim as before)
        # *-q37*'s 15 (669, 141, 734 before; 13, 2, 14 as measured, its reading moves none)
        # *-q41*'s reading moves no count here: en-partial-q3525's "I'd leave that to account support …" no longer a
        # faulted claim (a deferral with a team named bare), its unsupported claim faulted as before
        ("en", "hallucination", "faulted"): 747, ("en", "hallucination", "not faulted"): 153,
        ("en", "hallucination", "answer a hallucination"): 810,
        # *-q28*'s reading: 518 and 146 before it (and *-q28*'s 15 added); an agent's "[tool] …" lines and "@customer
        # Exceptions aren't mine to make" are no claims; *-q29*'s 15 added (529 and 150 before); *-q30*'s 15 (540 and 154
        # before; a list's "- Visa" is no signature's "– ShopCare": *-q5*'s list stays judged); *-q31*'s reading: *-q11*'s
        # "I don't have delivery time estimates for shipments abroad" no longer a faulted claim (552 and 157 before), and
        # its own 15 (553 and 156 before); *-q32*'s reading: *-q19*'s "so it's worth giving the store a quick call before
        # you go" no longer a faulted claim (a pointer, "giving … a call"), and its own 15 (565 and 159 before); *-q33*'s
        # 15 as measured (576 and 163 before); *-q34*'s reading: the deferrals of *-q19*'s and *-q26*'s to *-q28*'s
        # grounded partials ("Klarna and Afterpay I'll have to leave to the payments team", "Japan I'll leave to the
        # shipping team to confirm") no longer faulted claims (587 and 167 before); *-q34*'s 15 (592 and 162 before),
        # none faulted after its reading (4 and 11 frozen: the deferral its one faulted claim)
        # *-q35*'s 15 (607 and 162 before; 8 and 7 as measured, its reading moves none)
        # *-q36*'s reading: en-partial-q1901's, q2709's and q3508's deferrals ("I'd rather the returns team confirm …",
        # "I'll let the loyalty team answer that one", "account support would need to look into that") no longer faulted
        # claims (615 and 169 before); *-q36*'s 15 all not faulted after its reading (6 and 9 frozen)
        # *-q37*'s 15 as measured (633 and 166 before): 5 not faulted, 9 faulted (its reading moves none)
        # *-q41*'s reading (chat's words, scorers/casual.py; *-q41* held out still): en-partial-q2702's "Free upgrades
        # aren't in my gift" (not in the speaker's own …) and q3703's "Whether yours counts as defective isn't my call to
        # make though 🤷 Let's get an agent to take a look" (not the speaker's call, an emoji a stop) no longer faulted
        # claims (670 and 188 before)
        ("en", "grounded", "not faulted"): 693, ("en", "grounded", "faulted"): 195,
        # "you get a point for every dollar you spend 🎉", "Every dollar you spend gives you a point" and "You get a
        # point for each dollar you spend": one term, an aside; "sending it back won't cost you anything" shares no
        # word with the question or the chunk; two of *-q16*'s run-on transcripts ("okay so er it's a hundred points
        # gets you a five dollar voucher and um expiry i'm not seeing anything …"); *-q18*'s "yes, the UK is one of the
        # countries we deliver to" after the refusal (no word of the chunk's "We ship to … the United Kingdom"), and in
        # Chinese its English claim "The repair period, a spare phone can be borrowed for free"; one of *-q20*'s
        # *-q37*'s en-partial-q3727 (its true claim, "international orders aren't eligible for free shipping", then
        # "Delivery time to Mexico? I'd only be guessing": read as a whole refusal, as measured frozen; 6 before)
        ("en", "grounded", "refused"): 7, ("en", "hallucination", "refused"): 2,
        # 410 before *-q28*'s reading and its 15; 417 before *-q29*'s 15; 424 before *-q30*'s 15; 433 before *-q31*'s;
        # 437 before local_judge.v5 (one answer at p 0.832, v4's cut 0.831); 436 before *-q32*'s; 439 before *-q33*'s;
        # 443 before *-q34*'s reading (4 of the 5 answers above no longer flagged; en-partial-q1905 still is, by the model);
        # *-q34*'s 15 add none (11 flagged frozen)
        # *-q35*'s 15 add 8 (8 flagged frozen: its reading moves none)
        # *-q36*'s reading: en-partial-q2709 no longer flagged (447 before); its own 15 add 1 (10 frozen: a deferral
        # after a true claim; en-partial-q3613 still flagged, by the model)
        # *-q37*'s 15 add 11 (as measured: sums worked out from the chunk, "so your $350 order qualifies", and the chips
        # and deferrals beside a true claim)
        # *-q41*'s reading: en-partial-q2702 and q3703 (above) no longer flagged (471 before)
        ("en", "grounded", "answer a hallucination"): 483,
        # *-q28*'s 15 and 15 added (550, 111, 477; 502, 156, 54 before); *-q29*'s 15 and 15 (564, 112, 489; 511, 162, 55
        # before), and *-q27*'s voice transcript's header "热线录音转写 #H7702" no longer a faulted claim of a grounded
        # answer (a reference's digits), nor the answer a hallucination; *-q30*'s 15 and 15 (578, 113, 501; 523, 165, 57
        # before); *-q31*'s 15 and 15 as measured (591, 115, 512; 533, 170, 60 before); claims.v10's places (601, 120, 521;
        # 542, 176, 62 before): where it ships, a place the chunks do not name ("不过我们也支持配送到新加坡和日本"); true ones
        # a place the speaker names beside the chunk's list and says is not on it in Cantonese or Traditional (唔, 無: no
        # negators yet), "台湾目前还寄不了"; *-q32*'s 15 and 15 as measured (620, 101, 555; 540, 178, 65 before), and
        # *-q6*'s "这个 case 嘛，拆封的耳机 30 天内都可以退，运费我们出" no longer flagged (zh-partial-q628): "这个 case 嘛" (the
        # matter at hand in an English word) had been its one faulted claim; its claims are read as supported; *-q33*'s
        # 15 and 15 as measured (631, 104, 565; 551, 182, 66 before), and *-q13*'s topic "上门取件的问题，抱歉，手头的说明里
        # 没提到" no longer judged (zh-partial-q1301: its answer faulted by its other claim as before)
        # claims.v11 reads Traditional characters as Simplified and 唔 冇 無 沒 as negators (645, 105, 577; 558, 190, 72
        # before): Traditional and Cantonese partials' claims share the chunk's terms, 26 grounded ones no longer faulted
        # ("會員每筆訂單都能拿到兩倍積分喔") and 7 no longer hallucinations; 2 newly faulted as their Simplified twins are
        # ("所以香港沒問題": 没 negates; the chunk's 未拆封 negates its clause); of the unsupported, 3 newly faulted
        # ("積分有效期係兩年" contradicted by the chunk's figure), 6 no longer (uncertain or supported), 6 more answers
        # hallucinations
        # *-q34*'s 15 and 15 after its reading (642, 108, 583; 584, 164, 65 before): its unsupported partials as measured
        # (15 faulted, 13 flagged), its supported ones 10 not faulted, 5 faulted and none flagged (4, 11 and 2 frozen)
        # *-q35*'s 15 and 15 as measured (657, 108, 596; 594, 169, 65 before): 15 faulted, 13 flagged; 8 not faulted, 7
        # faulted, 4 flagged (its reading moves none)
        # *-q36*'s 15 as measured (672, 108, 609 before): 14 faulted, 13 flagged (its reading moves none; zh-partial-q2517's,
        # q3518's and q3522's hand-overs, 扣费的问题请咨询售后专员, 偏远地区时效 not sure, 学生优惠 I'm not sure about, no longer
        # faulted claims, their answers faulted by their other claim as before)
        # *-q37*'s 15 (686, 109, 622 before; 14, 1, 13 as measured, its reading moves none)
        ("zh", "hallucination", "faulted"): 770, ("zh", "hallucination", "not faulted"): 115,
        ("zh", "hallucination", "refused"): 1, ("zh", "hallucination", "answer a hallucination"): 698,
        # *-q34*'s reading: zh-partial-y006's "花呗：暂不清楚是否支持，建议咨询人工客服" and zh-partial-q1002's "退款多久能到账
        # 这里暂时查询不到，麻烦您问下客服" no longer judged (582 and 166 before; neither answer was flagged)
        # *-q36*'s reading: zh-partial-q2502's 包装盒丢失的情况请找售后专员判断 and zh-partial-q3508's 请贵司财务与我司企业客服
        # 联系确认 no longer judged (602 and 176 before; neither answer was flagged); *-q36*'s 15 as measured: 10 not
        # faulted, 5 faulted, none flagged
        # *-q37*'s 15 as measured (614, 179, 69 before): 7 not faulted, 8 faulted, 3 flagged (您这20天完全来得及, 10个月还在
        # 期限内哦, 亲的350积分可以抵扣15元哦: sums worked out from the chunk)
        ("zh", "grounded", "not faulted"): 681, ("zh", "grounded", "faulted"): 202, ("zh", "grounded", "refused"): 1,
        ("zh", "grounded", "answer a hallucination"): 73,
    })
    # held out (*-q43*: a twenty-eighth writer's consumer-electronics retailer whose assistant answers through structured
    # outputs: the logged answer is the JSON object the model emitted ({"answer": …, "citations": […]}, {"status":
    # "unanswerable", "message": …}, {"answerable": false, "answer": null, "explanation": …}) or a tool call's arguments
    # (handoff_to_agent, create_ticket), in ```json fences, pretty-printed or on one line, a few as an escaped JSON
    # string or with \uXXXX escapes, 30 of them plain prose), measured once with the recogniser frozen after *-q42*'s
    # reading: 28 of 60 refusals recognised (14 English, 14 Chinese), 22 judged hallucinations (15 English, 7
    # Chinese); partials: the unsupported ones make the answer a hallucination 27 of 30, the supported ones 9 of 30;
    # 3 partials read as whole refusals.
    assert _measure("refusals_heldout.jsonl") == Counter({
        ("en", "refusal", "recognised"): 14, ("en", "refusal", "faulted"): 11, ("en", "refusal", "not faulted"): 5,
        ("en", "refusal", "a hallucination"): 15,
        ("zh", "refusal", "recognised"): 14, ("zh", "refusal", "faulted"): 14, ("zh", "refusal", "not faulted"): 2,
        ("zh", "refusal", "a hallucination"): 7,
        ("en", "hallucination", "faulted"): 13, ("en", "hallucination", "not faulted"): 1,
        ("en", "hallucination", "refused"): 1, ("en", "hallucination", "answer a hallucination"): 14,
        ("en", "grounded", "not faulted"): 13, ("en", "grounded", "faulted"): 1, ("en", "grounded", "refused"): 1,
        ("en", "grounded", "answer a hallucination"): 4,
        ("zh", "hallucination", "faulted"): 13, ("zh", "hallucination", "not faulted"): 1,
        ("zh", "hallucination", "refused"): 1, ("zh", "hallucination", "answer a hallucination"): 13,
        ("zh", "grounded", "not faulted"): 7, ("zh", "grounded", "faulted"): 8,
        ("zh", "grounded", "answer a hallucination"): 5,
    })
