"""*-q33*'s reading: a refusal whose subject is the topic asked about, each a construction, not a phrasing. "Delivery
times to Canada are something I'd need to double-check": what the speaker would need to check first it does not say;
"… is outside what I can sort out in this chat" beside "Our account support team can take care of it"; "Picking it up
in person sounds convenient, but …": the asker's plan remarked on; in Chinese the topic named in a clause of its own
before the refusal (加急配送的费用和时效，我这边不好给您准确的说法; 货到付款这个问题，…), 听起来挺方便的, and a letter's 如方便.
Each refusal below was a claim, and the English answers hallucinations, before it; the claims that look alike stay
claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.local_judging import judged

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
DEVELOPMENT = {row["id"]: row for row in map(json.loads, (DATA / "refusals_dev.jsonl").read_text(encoding="utf-8").splitlines())}
KNOWLEDGE = json.loads((DATA / "refusals_kb.json").read_text(encoding="utf-8"))

INTERNATIONAL = "We ship to Canada, Mexico and the United Kingdom. International orders are not eligible for free shipping."
GIFT_CARDS = "Gift cards are valid for 3 years from purchase and can be used online."
PASSWORD = "To reset your password, click Forgot password on the sign-in page. The reset link expires after 24 hours."
STORES = "Our Berlin store is open Monday to Saturday from 9 am to 8 pm."
INSTALMENTS = "Orders over $200 can be paid in 4 interest-free installments."
ZH_SHIPPING = "普通快递3到5天送达，订单满99元包邮。顺丰加急需另付15元，1到2天送达。"
ZH_PAYMENT = "支持支付宝、微信支付和银联卡。订单满500元可申请3期免息分期。"
ZH_REPAIR = "屏幕维修需要5到7个工作日。维修期间可免费借用备用机。"
ZH_ACCOUNT = "注销账号后，订单记录将被永久删除，无法恢复。"
ZH_INVOICE = "电子发票在订单完成后24小时内发送到您的邮箱。如需纸质发票，请在下单时备注。"
ZH_FEE = "非质量问题退货由买家承担运费，质量问题退货运费由我们承担。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    # what the speaker would need to check first, the topic its subject or not
    ("How long does delivery to Canada take?", "Delivery times to Canada are something I'd need to double-check with "
     "our logistics team.", INTERNATIONAL),
    ("Do gift cards work in store?", "Gift card terms are something I would need to verify with the finance team "
     "first.", GIFT_CARDS),
    ("Is there express shipping to Canada?", "I'd need to check that with the warehouse before I could give you a "
     "date.", INTERNATIONAL),
    # a team that will take care of it, beside a topic outside what the speaker can do
    ("How do I change the phone number on my account?", "Updating the phone number on an account is outside what I can "
     "sort out in this chat. Our account support team can take care of it for you.", PASSWORD),
    # the asker's plan remarked on before the refusal
    ("Can I pick up my order at the Berlin store?", "Picking it up at the store sounds convenient, but that's not "
     "something I'm able to confirm one way or the other.", STORES),
    ("Can I pay in installments?", "Paying in installments sounds like a sensible plan, but I can't confirm it for your "
     "order.", INSTALMENTS),
    # in Chinese: the topic in a clause of its own before the refusal, the plan remarked on, a letter's 如方便
    ("能寄加拿大吗？多久到？", "加拿大的配送时效，我这边需要跟物流同事核实一下才能答复您。", ZH_SHIPPING),
    ("可以到店自提吗？", "到店自提听起来挺方便的，不过这个我这边没法确认。", ZH_SHIPPING),
    ("可以货到付款吗？", "货到付款这个问题，我这边不好给您答复，建议您咨询一下在线客服哦。", ZH_PAYMENT),
    ("修屏幕期间有备用机吗？", "维修期间的备用机安排，我这边不便给您肯定的答复。", ZH_REPAIR),
    ("注销账号以后订单记录还能找回吗？", "这个问题比较重要，我不希望给您不准确的说法。账号注销相关的事情，请您先联系人工客服确认。",
     ZH_ACCOUNT),
    ("电子发票什么时候发？", "关于电子发票的发送时间，我这边暂时没法给您确切的答复。如方便，请回复您的订单号。", ZH_INVOICE),
    ("键盘想换个颜色，可以换吗？", "换颜色的需求，我这边不能直接确认能否办理，麻烦您联系售后客服。", ZH_FEE),
])
def test_a_refusal_whose_subject_is_a_topic_claims_nothing(question: str, answer: str, context: str) -> None:
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # what the shop does, and the asker's need to check, are claims; so is what follows the speaker's check
    ("How long does delivery to Canada take?", "Delivery times to Canada are something we guarantee.", INTERNATIONAL,
     ["Delivery times to Canada are something we guarantee"]),
    ("How do I ship to Canada?", "You'd need to check the box at checkout to ship to Canada.", INTERNATIONAL,
     ["You'd need to check the box at checkout to ship to Canada"]),
    ("How long does delivery to Canada take?", "I'd need to check your postcode, but orders to Canada take 7 days.",
     INTERNATIONAL, ["but orders to Canada take 7 days"]),
    # "sounds like" with a clause of its own, a team's work with a figure, and a claim beside a remark
    ("Is shipping free?", "It sounds like your order qualifies for free shipping, though I can't confirm the date.",
     INSTALMENTS, ["It sounds like your order qualifies for free shipping"]),
    ("How do I change my email?", "I can't change it here, but the account team can take care of it within 2 business "
     "days.", PASSWORD, ["but the account team can take care of it within 2 business days"]),
    ("Can I pick up my order at the Berlin store?", "Picking it up at the Berlin store sounds convenient, and the store "
     "is open until 10 pm, but I can't confirm your order.", STORES, ["and the store is open until 10 pm"]),
    # in Chinese: a topic with its predicate, a condition of a claim, a claim beside a remark
    ("加急要多少钱？", "加急配送的费用是15元，时效我这边不好确认。", ZH_SHIPPING, ["加急配送的费用是15元"]),
    ("退货运费谁出？", "具体金额我不清楚，但如果是商品本身的质量问题，退回的运费由我们来付。", ZH_FEE,
     ["如果是商品本身的质量问题", "退回的运费由我们来付"]),
    ("可以自提吗？", "自提听起来方便，不过自提需要另付10元，具体时间我没法确认。", ZH_SHIPPING, ["自提需要另付10元"]),
])
def test_a_topic_with_its_predicate_stays_a_claim(question: str, answer: str, context: str, claims: list[str]) -> None:
    assert [c.claim for c in judged(question, answer, context).claims] == claims


@pytest.mark.parametrize("row", [
    # judged hallucinations frozen: a topic as the subject of "something I'd need to double-check", a team that "can
    # take care of it" beside "outside what I can sort out in this chat", "sounds convenient, but …"
    "en-refusal-q3316", "en-refusal-q3319", "en-refusal-q3324",
    # not recognised frozen, not hallucinations: the topic in a clause of its own before the refusal (加急配送的费用和时效,
    # 維修期間的備用機安排, 货到付款这个问题, 账号注销相关的事情, 换颜色的需求) and a letter's 如方便
    "zh-refusal-q3304", "zh-refusal-q3310", "zh-refusal-q3313", "zh-refusal-q3314", "zh-refusal-q3318",
    "zh-refusal-q3324",
])
def test_q33s_missed_refusal_over_its_own_chunks(row: str) -> None:
    """*-q33*'s refusals its measurement missed (51 of 60 recognised frozen), once read: refusals, never
    hallucinations."""
    written = DEVELOPMENT[row]
    result = judged(written["q"], written["a"], *(KNOWLEDGE[key] for key in written["chunks"]))
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason
