"""*-q34*'s reading: deferrals whose subject is the matter asked about, each a construction, not a phrasing. "Whether
your order qualifies, our returns team will need to confirm": the matter put first and left to someone else; "For your
case, I'd want a colleague to check"; "… is something I'd have to leave to our team"; "… are a gap in what I've got";
"… that one my notes don't say"; helpful lines after a refusal ("They'll sort you out", "Ringing the store would be the
safest bet"); in Chinese a topic named in a clause of its own and left to someone else in the next (关于配送范围，建议您
咨询人工客服), declines in words not known before (不替您下定论, 先不作答复, 无从确认, 唔方便答你, 没涉及到), in Traditional
characters and Cantonese too. Each refusal below was a claim before; the claims that look alike stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, development_row, judged

pytestmark = pytest.mark.unit


RETURNS = ("Opened electronics can be returned within 14 days as long as all accessories are included. Return shipping "
           "is free for defective items.")
STORES = "Our Berlin store is open Monday to Saturday from 9 am to 8 pm."
GIFT_CARDS = "Gift cards are valid for 3 years from purchase and cannot be exchanged for cash."
REPAIRS = "Screen repairs take 5 to 7 business days. A loan phone is available for repairs longer than 3 days."
ZH_SHIPPING = "普通快递3到5天送达，订单满99元包邮。顺丰加急需另付15元，1到2天送达。"
ZH_PAYMENT = "支持支付宝、微信支付和银联卡。订单满500元可申请3期免息分期。"
ZH_REPAIR = "屏幕维修需要5到7个工作日。维修期间可免费借用备用机。"
ZH_RETURNS = "未拆封商品自签收之日起30天内可无理由退货。质量问题退货运费由我们承担。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    # what the speaker leaves or passes to a team, a team the speaker would rather let look into it
    ("How long is the repair?", "Repair times for your model are something I'll have to leave to the service centre.",
     REPAIRS),
    ("Why won't my gift card work?", "If it's still declined, I'd rather let our payments team look at your card.",
     GIFT_CARDS),
    ("Is there a loan phone at my store?", "Whether your store has one today, I'd have to check with the repair desk.",
     REPAIRS),
    # a gap in what the speaker has
    ("Do you open on Sundays?", "Sunday hours are a gap in my notes, sorry.", STORES),
    # helpful lines after a refusal: a passive of explaining by a team, the asker's call as the safest bet
    ("Do gift cards expire?", "Kindly note that expiry terms will be explained by our service advisors.", GIFT_CARDS),
    # in Chinese: a topic left to someone else, in Simplified, Traditional characters and Cantonese
    ("可以分期吗？", "分期付款方面，建议您咨询人工客服，他们会给您详细的说明。", ZH_PAYMENT),
    ("可以寄到澳门吗？", "配送範圍的部分，麻煩您洽詢客服人員，由專人為您說明。", ZH_SHIPPING),
    ("加急幾錢？", "加急運費呢啲，你直接問返客服同事啦，佢哋會同你跟進。", ZH_SHIPPING),
    ("退货运费谁出？", "运费承担的规则，建议您以售后客服的答复为准，我这边不替您下定论。", ZH_RETURNS),
    # declines in words not known before: 不方便答, 没涉及到
    ("註銷帳號後訂單仲喺度嗎？", "帳號註銷涉及你嘅個人資料，我唔方便答你。", ZH_RETURNS),
    ("拆封的耳机能退吗？", "已拆封耳机的退货政策，我掌握的内容里没涉及到。", ZH_RETURNS),
])
def test_a_deferral_whose_subject_is_the_matter_claims_nothing(question: str, answer: str, context: str) -> None:
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # a partial refusal: its claim judged, the deferral beside it none: the matter put first and left to a team or a
    # colleague, passed on, resumed ("about that one", "that one my guides don't say"), a helpful line after a refusal
    ("Can I return these headphones?", "Opened electronics can be returned within 14 days. Whether your headphones "
     "qualify, our returns desk would need to check the order first.", RETURNS,
     ["Opened electronics can be returned within 14 days"]),
    ("Is the return postage refunded?", "Return shipping is free for defective items. For your order, I'd like a "
     "colleague to confirm that before I say anything.", RETURNS, ["Return shipping is free for defective items"]),
    ("Is the return postage refunded?", "Return shipping is free for defective items. I'll need to pass the rest to our "
     "returns team.", RETURNS, ["Return shipping is free for defective items"]),
    ("What is my gift card's balance?", "Gift cards are valid for 3 years. For the balance on your card, please contact "
     "our customer care team.", GIFT_CARDS, ["Gift cards are valid for 3 years"]),
    ("Can I swap the colour?", "Opened electronics can be returned within 14 days. Swapping colours, I'm not certain "
     "about that one.", RETURNS, ["Opened electronics can be returned within 14 days"]),
    ("Does the warranty cover water damage?", "Screen repairs take 5 to 7 business days. Whether water damage is "
     "covered, that one my guides don't say.", REPAIRS, ["Screen repairs take 5 to 7 business days"]),
    ("Is the store open on Easter Monday?", "Our Berlin store is open Monday to Saturday. I don't have Easter opening "
     "times. Calling the store before you go would be the safest bet.", STORES,
     ["Our Berlin store is open Monday to Saturday"]),
    # in Chinese: 先不作答复, 无从确认 (Traditional), a whether-topic left to the service team, 唔太肯定 (Cantonese)
    ("修屏幕多久？能借备用机吗？", "屏幕维修需要5到7个工作日。备用机的安排，我这边先不作答复，请联系维修中心。", ZH_REPAIR,
     ["屏幕维修需要5到7个工作日"]),
    ("能用微信付款嗎？能開統一編號嗎？", "支持支付寶和微信支付。發票的開立方式，我這裡無從確認，請聯絡客服。", ZH_PAYMENT,
     ["支持支付寶和微信支付"]),
    ("Can I return my opened speaker?", "Opened electronics can be returned within 14 days. Whether yours qualifies, "
     "our returns team will need to confirm.", RETURNS, ["Opened electronics can be returned within 14 days"]),
    ("How long is a screen repair?", "Screen repairs take 5 to 7 business days. For your own repair, I'd want a "
     "colleague to check the queue.", REPAIRS, ["Screen repairs take 5 to 7 business days"]),
    ("能寄到澳门吗？多久到？", "普通快递3到5天送达。澳门是否另有安排，建议您再向客服确认。", ZH_SHIPPING,
     ["普通快递3到5天送达"]),
    ("積分點樣用？", "訂單滿99元包郵。喺App邊度睇，我唔太肯定，你可以問下客服。", ZH_SHIPPING, ["訂單滿99元包郵"]),
])
def test_a_partial_refusal_keeps_its_claim_and_drops_the_deferral(question: str, answer: str, context: str,
                                                                  claims: list[str]) -> None:
    result = judged(question, answer, context)
    assert ([c.claim for c in result.claims], result.hallucination) == (claims, False), result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # a condition, a team's service, a team's act after no matter put first, advice with a claim
    ("Can I return my tablet?", "Whether it qualifies depends on the 14-day window.", RETURNS,
     ["Whether it qualifies depends on the 14-day window"]),
    ("Can I return my tablet?", "Our returns team will confirm it within 2 days.", RETURNS,
     ["Our returns team will confirm it within 2 days"]),
    ("Can I return my tablet?", "Opened items can be returned within 14 days. Once it arrives, our returns team will "
     "need to confirm its condition.", RETURNS,
     ["Opened items can be returned within 14 days", "Once it arrives, our returns team will need to confirm its condition"]),
    ("Which delivery is fastest?", "Express would be the quickest option.", STORES,
     ["Express would be the quickest option"]),
    ("Do refunds take long?", "Refunds will be processed by our finance team within 5 days.", RETURNS,
     ["Refunds will be processed by our finance team within 5 days"]),
    ("可以退货吗？", "建议您在30天内申请退货。", ZH_RETURNS, ["建议您在30天内申请退货"]),
    ("退货运费谁出？", "关于退货运费，质量问题由我们承担。", ZH_RETURNS, ["关于退货运费", "质量问题由我们承担"]),
])
def test_a_claim_that_looks_like_a_deferral_stays_a_claim(question: str, answer: str, context: str,
                                                         claims: list[str]) -> None:
    assert [c.claim for c in judged(question, answer, context).claims] == claims


@pytest.mark.parametrize("row", [
    # judged hallucinations frozen: "Return windows are something I'd want a colleague to confirm", "will be explained
    # by our customer care executive", "are a gap in what I've got", "…, I'm not sure on this one", "…, that one my
    # reference doesn't say"
    "en-refusal-q3401", "en-refusal-q3405", "en-refusal-q3418", "en-refusal-q3427", "en-refusal-q3428",
    # not recognised frozen (zh-refusal-q3407 a hallucination): a topic left to someone else (关于配送范围，建议您咨询人工
    # 客服; 免運門檻的部分，麻煩您直接洽詢客服人員確認; 加急運費同埋時效呢啲，我建議你直接問返我哋客服同事), 不替您下定论, 先不作答复,
    # 无从确认, 唔方便答你, 冇相關說明 after 呢項服務, 没涉及到, 不便报价 after 这一块
    "zh-refusal-q3403", "zh-refusal-q3404", "zh-refusal-q3405", "zh-refusal-q3406", "zh-refusal-q3407",
    "zh-refusal-q3410", "zh-refusal-q3411", "zh-refusal-q3412", "zh-refusal-q3413", "zh-refusal-q3414",
    "zh-refusal-q3425", "zh-refusal-q3426", "zh-refusal-q3427", "zh-refusal-q3429",
])
def test_q34s_missed_refusal_over_its_own_chunks(row: str) -> None:
    """*-q34*'s refusals its measurement missed (41 of 60 recognised frozen), once read: refusals, never
    hallucinations."""
    result = development_row(row)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize("row", [
    # flagged frozen, the deferral beside a supported claim their one faulted claim
    "en-partial-q3401", "en-partial-q3402", "en-partial-q3404", "en-partial-q3405", "en-partial-q3407",
    "en-partial-q3408", "en-partial-q3410", "en-partial-q3411", "en-partial-q3412", "en-partial-q3413",
    "en-partial-q3414", "zh-partial-q3404", "zh-partial-q3410",
])
def test_q34s_supported_partial_is_no_hallucination(row: str) -> None:
    """*-q34*'s supported partial refusals flagged frozen (13 of 30), once read: their claims judged, no fault."""
    result = development_row(row)
    assert (result.refusal, result.hallucination, [c.verdict for c in result.claims if c.verdict in FAULTS]) == (
        False, False, []), result.groundedness_reason
