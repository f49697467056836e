"""*-q37*'s reading: a shopping app's bot declining in its own voice, read by construction, not phrasing. The bot of
itself (小助手说了不算, 做不了主, 没有权限, 卡壳了, 一片空白, 不归小助手管, 把小助手难住, 怕答错), what it needs before it can
answer ("I'll need your order number first", "before I can look into that, I'd need …", 麻烦先把订单号发给小助手, 小助手得先
核实, 有了订单号才好帮您看), a system's notice ("Something went wrong on my end", "Try again in a bit", "my … seems to have
wandered off", 系统繁忙, 网络开小差, 没加载出来, 请稍后再试), a person fetched or the matter theirs ("Let me grab a human",
"needs a human touch", "a job for a real person", "I'm just a bot", "Connecting you now", "Hang tight", 小助手这就帮您呼叫
客服), the interface pointed at beside a refusal ("Tap below for …", 可以点【会员中心】查一下), and the refusal's object
put first ("… are one of those things I'd rather not guess on"). Each refusal below was a claim or a judged
hallucination before; the claims that look alike stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import development_row, judged, refused
from test_local_judge_hand_overs import RETURNS, ZH_INVOICE, ZH_RETURNS


pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("question", "answer", "context"), [
    # the bot of itself
    ("耳机可以换货吗？", "换货这块小助手说了不算呢，建议您咨询售后客服。", ZH_RETURNS),
    ("耳机可以换货吗？", "换货的事小助手做不了主哦。", ZH_RETURNS),
    ("耳机可以换货吗？", "小助手这边没有权限处理换货哦。", ZH_RETURNS),
    ("纸质发票能开专票吗？", "哎呀，小助手的脑袋卡壳了，您过会儿再问问吧。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "专票的事儿，小助手这里是一片空白呢。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "专票的问题不归小助手管哦，请联系人工客服。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "这个问题把小助手难住了。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "小助手怕说错了耽误您，建议联系人工客服。", ZH_INVOICE),
    # what it needs first
    ("Can I return my tablet?", "I'll need your order number first. Could you share it?", RETURNS),
    ("Can I return my tablet?", "To look into that, I'd need your receipt number.", RETURNS),
    ("Can I return my tablet?", "Before I can check that, I'd need your order number.", RETURNS),
    ("耳机可以退货吗？", "麻烦您先提供一下订单号哦。", ZH_RETURNS),
    ("耳机可以退货吗？", "退货的事小助手得先核实一下哦。", ZH_RETURNS),
    ("耳机可以退货吗？", "有了订单号才能帮您查哦。", ZH_RETURNS),
    ("耳机可以退货吗？", "麻烦告诉小助手：", ZH_RETURNS),
    # a system's notice
    ("Can I return my tablet?", "Something went wrong while loading that. Please try again later.", RETURNS),
    ("Can I return my tablet?", "Oops, my returns guide seems to have vanished. Try again in a minute.", RETURNS),
    ("纸质发票能开专票吗？", "系统繁忙，请稍后再试。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "网络开小差了，发票信息没加载出来。", ZH_INVOICE),
    # a person fetched, the matter theirs
    ("Can I return my tablet?", "Refund disputes need a human touch. Let me grab an agent for you.", RETURNS),
    ("Can I return my tablet?", "Returns are a job for a real person, I'm just a bot. Connecting you now.", RETURNS),
    ("耳机可以换货吗？", "别着急，小助手这就帮您呼叫客服。", ZH_RETURNS),
    # the interface pointed at beside a refusal; the refusal's object put first
    ("Is there a store in Lyon?", "Lyon is a mystery to me. Tap below for the full list of stores!", RETURNS),
    ("积分多久过期？", "积分的事小助手答不上来哦！可以点【会员中心】查一下～", ZH_RETURNS),
    ("Can I return my tablet?", "Tablet returns are one of those things I'd rather not guess on.", RETURNS),
])
def test_the_bot_declining_in_its_own_voice_claims_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # the asker's or the shop's need is a rule; a system that does something, a bot's service with a number: claims
    ("Can I return my tablet?", "You'll need your order number to start a return.", RETURNS,
     ["You'll need your order number to start a return"]),
    ("Can I return my tablet?", "We need your receipt for returns after 14 days.", RETURNS,
     ["We need your receipt for returns after 14 days"]),
    ("纸质发票能开专票吗？", "系统会在24小时内发送电子发票。", ZH_INVOICE, ["系统会在24小时内发送电子发票"]),
    ("耳机可以退货吗？", "退货需要提供订单号。", ZH_RETURNS, ["退货需要提供订单号"]),
    # a story's blank (OCNLI's "我刚才大脑一片空白"), not the speaker's knowledge here
    ("耳机可以退货吗？", "我刚才大脑一片空白。", ZH_RETURNS, ["我刚才大脑一片空白"]),
    ("Can I return my tablet?", "Tablet returns are one of those things we refund within 14 days.", RETURNS,
     ["Tablet returns are one of those things we refund within 14 days"]),
])
def test_a_claim_that_looks_like_the_bot_declining_stays_a_claim(question: str, answer: str, context: str,
                                                                 claims: list[str]) -> None:
    assert [c.claim for c in judged(question, answer, context).claims] == claims


@pytest.mark.parametrize("row", [
    # *-q37*'s refusals missed before its reading (33 of 60 recognised after scorers/chrome.py; 30 frozen), 17 of them
    # judged hallucinations before the chips' reading
    "en-refusal-q3702", "en-refusal-q3703", "en-refusal-q3708", "en-refusal-q3713", "en-refusal-q3715",
    "en-refusal-q3717", "en-refusal-q3719", "en-refusal-q3720", "en-refusal-q3726",
    "zh-refusal-q3701", "zh-refusal-q3702", "zh-refusal-q3705", "zh-refusal-q3707", "zh-refusal-q3709",
    "zh-refusal-q3711", "zh-refusal-q3714", "zh-refusal-q3721", "zh-refusal-q3723", "zh-refusal-q3724",
    "zh-refusal-q3710", "zh-refusal-q3725", "zh-refusal-q3726", "zh-refusal-q3729",
])
def test_a_missed_refusal_over_its_own_chunks(row: str) -> None:
    """*-q37*'s refusals its reading recognises: refusals, never hallucinations."""
    assert refused(development_row(row))

