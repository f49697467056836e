"""*-q36*'s reading: hand-overs read by construction, not phrasing. The matter put to someone ("Anything beyond that is
best asked of our support team", "Questions about your refund amount itself should go to billing", "Our returns team
handles that", "I'll let the delivery team answer …"), in Chinese a topic and the team that owns it (发票相关事宜由财务同事
负责, 积分规则的解释权在会员运营团队) or left to someone in its own clause (退货时限这块建议您…), the formal register
(请与贵司的客户经理联系), a Chinese topic declined or handed on in English (积分转赠这个 not sure); what is said of the
hand-over beside a refusal ("They'll be able to give you a time frame", 稍后会有专人联系您); the speaker's own sources
("The repair article in front of me only talks about screens", "… but nothing about …", 我手上的退货说明只提到了耳机, 不在我
参考的说明里); holding back ("I'm not comfortable interpreting it", "it wouldn't be right for me to comment"); the
question said back ("It sounds like you want to …", 您关心的是…). Each refusal below was a claim before; the claims
that look alike stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, development_row, judged, refused


pytestmark = pytest.mark.unit

RETURNS = "Opened electronics can be returned within 14 days if all accessories are included."
REPAIRS = "Screen repairs take 5 to 7 business days at our service centre."
ZH_RETURNS = "未拆封商品自签收之日起30天内可无理由退货。已拆封的耳机在配件齐全的情况下，可在14天内退货。"
ZH_INVOICE = "电子发票在订单完成后24小时内发送到您的邮箱。如需纸质发票，请在下单时备注。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    ("Can I return a smart watch?", "Smart watch returns are best asked of our support team.", RETURNS),
    ("Can I return a smart watch?", "Questions about wearables should go to our returns desk.", RETURNS),
    ("Can I return a smart watch?", "Our returns team handles that. Want me to transfer you?", RETURNS),
    ("Is a loan laptop available?", "I'll let the repair team answer that. They'll be able to tell you more.", REPAIRS),
    ("Is a loan laptop available?", "The repair article in front of me only talks about phones, so I'll leave laptops to "
     "our engineers.", REPAIRS),
    ("Is a loan laptop available?", "The articles I was given cover screen repairs, but nothing about loan laptops.",
     REPAIRS),
    ("Is a loan laptop available?", "I'm not comfortable guessing at that. A support agent can look it up properly.",
     REPAIRS),
    ("Is a loan laptop available?", "Loan laptops, hmm. Let me pass you to a specialist for that.", REPAIRS),
    ("纸质发票能开专票吗？", "专票相关事宜由财务同事负责，稍后会有专人联系您。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "专票这块建议您直接咨询财务同事，他们会根据您的订单给出答复。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "专票的开具条件不在我参考的说明里，您可以在订单详情页联系客服查询。", ZH_INVOICE),
    ("耳机可以换货吗？", "换货这个 not sure，建议您问一下售后客服。", ZH_RETURNS),
    ("耳机可以换货吗？", "我手上的退货说明只提到了退货，换货的情况这里没有涉及。", ZH_RETURNS),
    # the question said back by a verbose assistant
    ("Can I return a smart watch?", "It sounds like you want to return a smart watch. I'm not sure about that, sorry.",
     RETURNS),
    ("耳机可以换货吗？", "您关心的是耳机能否换货。这个我这边查不到，建议您咨询客服。", ZH_RETURNS),
])
def test_a_hand_over_read_by_construction_claims_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # a team's service with a number, a verb after a hesitation, a claim beside the hand-over's words; the owner a
    # hand-over, what it does in a number beside it judged
    ("Can I return my tablet?", "Our returns team handles returns within 14 days.", RETURNS,
     ["Our returns team handles returns within 14 days"]),
    ("Do gift cards expire?", "Gift cards never expire, hmm.", RETURNS, ["Gift cards never expire, hmm"]),
    ("Can I return my tablet?", "I'm not sure about tablets. They ship free within 3 days.", RETURNS,
     ["They ship free within 3 days"]),
    ("退货谁处理？", "退货由售后同事负责，3天内处理。", ZH_RETURNS, ["3天内处理"]),
])
def test_a_claim_that_looks_like_a_hand_over_stays_a_claim(question: str, answer: str, context: str,
                                                          claims: list[str]) -> None:
    assert [c.claim for c in judged(question, answer, context).claims] == claims


@pytest.mark.parametrize("row", [
    # not recognised frozen, 6 judged hallucinations among them (en-refusal-q3601, q3605, q3607, q3613, q3616, q3626)
    "en-refusal-q3601", "en-refusal-q3605", "en-refusal-q3607", "en-refusal-q3613", "en-refusal-q3616",
    "en-refusal-q3625", "en-refusal-q3626",
    "zh-refusal-q3601", "zh-refusal-q3608", "zh-refusal-q3610", "zh-refusal-q3616", "zh-refusal-q3619",
    "zh-refusal-q3621", "zh-refusal-q3625", "zh-refusal-q3630",
    # *-q35*'s left after its reading: the terse, formal and mixed registers
    "en-refusal-q3501", "en-refusal-q3506", "en-refusal-q3512", "en-refusal-q3513", "en-refusal-q3514",
    "en-refusal-q3515", "en-refusal-q3520",
    "zh-refusal-q3509", "zh-refusal-q3513", "zh-refusal-q3515", "zh-refusal-q3519", "zh-refusal-q3529",
    # earlier batches': a referral with its topic, a hand-over's "they" (运费承担方面的问题建议您直接联系人工客服处理)
    "zh-refusal-q817", "zh-refusal-q2517",
])
def test_a_missed_refusal_over_its_own_chunks(row: str) -> None:
    """*-q36*'s refusals its measurement missed (44 of 60 recognised frozen), and *-q35*'s and earlier ones its reading
    recognises: refusals, never hallucinations."""
    assert refused(development_row(row))


@pytest.mark.parametrize("row", [
    # flagged frozen, a deferral after a true claim their one faulted claim (en-partial-q3607's none)
    "en-partial-q3601", "en-partial-q3602", "en-partial-q3604", "en-partial-q3606", "en-partial-q3607",
    "en-partial-q3608", "en-partial-q3610", "en-partial-q3612", "en-partial-q3614",
])
def test_q36s_supported_partial_is_no_hallucination(row: str) -> None:
    """*-q36*'s supported partial refusals flagged frozen (10 of 30), once read: their claims judged, no fault."""
    result = development_row(row)
    assert (result.refusal, result.hallucination, [c.verdict for c in result.claims if c.verdict in FAULTS]) == (
        False, False, []), result.groundedness_reason

