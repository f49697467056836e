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
    """tests/data/refusals_dev.jsonl: sixty-two batches the recogniser was designed on (60 refusals and 60 partial
    refusals each since the eighth), the last fifty-five written blind by writers who saw only the knowledge base
    and the fallback catalogue, each measured once with the recogniser frozen (the held-out set below), then read and
    folded in; refusals_heldout.jsonl: the newest blind set, measured once. None of the answers is a phrasing of the
    fallback catalogue (config/fallback_phrases.yaml); every partial refusal's claim is supported by the chunks
    (grounded) or not (hallucination). docs/judging.md's table has each set's register and its counts frozen and
    after its reading; docs/benchmarks-log.md has every set's rounds, the rows each reading moved and the rows left.
    A fold adds the set's held-out counts to these and moves no earlier row. The hallucination counts are the model's
    verdicts (judging/judge_model.py) and move when it is refitted."""
    assert _measure("refusals_dev.jsonl") == Counter({
        # Refusals, by language: recognised (by the fallback rules or the judge), otherwise with a faulted claim or
        # none; and how many of them the judge calls a hallucination (issue 44's target: none). The English ones so
        # judged are registers no reading covers yet: lines addressing no one, a topic's owner named, the question
        # said back.
        # The learned gate (judging/claims_nothing.py) was fitted on these rows up to *-q43* (in-sample for them).
        ("en", "refusal", "recognised"): 1781, ("en", "refusal", "faulted"): 38, ("en", "refusal", "not faulted"): 23,
        ("en", "refusal", "a hallucination"): 60,
        ("zh", "refusal", "recognised"): 1732, ("zh", "refusal", "faulted"): 70, ("zh", "refusal", "not faulted"): 19,
        ("zh", "refusal", "a hallucination"): 20,
        # Partial refusals whose claim is unsupported: the claim faulted or not, the answer a hallucination (the
        # target: all), a few read as whole refusals (the claim unjudged).
        ("en", "hallucination", "faulted"): 776, ("en", "hallucination", "not faulted"): 154,
        ("en", "hallucination", "refused"): 2, ("en", "hallucination", "answer a hallucination"): 837,
        ("zh", "hallucination", "faulted"): 798, ("zh", "hallucination", "not faulted"): 116,
        ("zh", "hallucination", "refused"): 2, ("zh", "hallucination", "answer a hallucination"): 724,
        # Partial refusals whose claim is supported: a flagged answer is a false alarm.
        ("en", "grounded", "not faulted"): 719, ("en", "grounded", "faulted"): 198, ("en", "grounded", "refused"): 8,
        ("en", "grounded", "answer a hallucination"): 485,
        ("zh", "grounded", "not faulted"): 704, ("zh", "grounded", "faulted"): 209, ("zh", "grounded", "refused"): 1,
        ("zh", "grounded", "answer a hallucination"): 73,
    })
    # held out (*-q45*: a thirtieth writer's store associates' assistant, an internal bot the sales floor, tills and
    # service desk ask on a customer's behalf, answering colleague to colleague in retail staff jargon: POS, RMA, SKU,
    # back office, shift lead, duty mgr, "per SOP", @role mentions, TL;DR lines; 店员, 值班经理, 收银台, 门店群, 运营手册,
    # 【结论】, 小贴士), measured once with the recogniser frozen after *-q44*'s reading and the learned gate: 24 of 60
    # refusals recognised (14 English, 10 Chinese), 19 judged hallucinations (16 English, 3 Chinese); partials: the
    # unsupported ones make the answer a hallucination 27 of 30, the supported ones 12 of 30 (all English); none read
    # as a whole refusal. Without the gate (the same rules): 17 recognised, 24 judged hallucinations, the partials the
    # same (docs/benchmarks-log.md, "*-q45* measured once").
    assert _measure("refusals_heldout.jsonl") == Counter({
        ("en", "refusal", "recognised"): 14, ("en", "refusal", "faulted"): 13, ("en", "refusal", "not faulted"): 3,
        ("en", "refusal", "a hallucination"): 16,
        ("zh", "refusal", "recognised"): 10, ("zh", "refusal", "faulted"): 17, ("zh", "refusal", "not faulted"): 3,
        ("zh", "refusal", "a hallucination"): 3,
        ("en", "hallucination", "faulted"): 14, ("en", "hallucination", "not faulted"): 1,
        ("en", "hallucination", "answer a hallucination"): 14,
        ("en", "grounded", "not faulted"): 5, ("en", "grounded", "faulted"): 10,
        ("en", "grounded", "answer a hallucination"): 12,
        ("zh", "hallucination", "faulted"): 15, ("zh", "hallucination", "answer a hallucination"): 13,
        ("zh", "grounded", "not faulted"): 11, ("zh", "grounded", "faulted"): 4,
    })
