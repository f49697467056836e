"""*-q35*'s reading: what the speaker's own sources cover or leave out, said by a strict-prompt RAG assistant ("The
warranty text in my sources is about laptops specifically; tablets aren't addressed there", "My context only describes
resetting a password. Updating the email address isn't covered in it", 现有资料只说明了配送范围，没提到…, 提供给我的资料里，
…未作说明), and a hand-over in a few words ("Best to ring the Berlin store directly for that"). Each refusal below was a
claim before; the claims that look alike (a shop's own rule, a text that is not the speaker's) stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import development_row, judged

pytestmark = pytest.mark.unit


WARRANTY = "All laptops come with a 1-year limited warranty that covers manufacturing defects."
STORES = "Our Berlin store is open Monday to Saturday from 9 am to 8 pm."
REPAIRS = "Screen repairs take 5 to 7 business days. A loan phone is available for repairs longer than 3 days."
ZH_SHIPPING = "普通快递3到5天送达，订单满99元包邮。顺丰加急需另付15元，1到2天送达。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    ("Are tablets under warranty?", "The documents I was given cover laptops only; tablets aren't mentioned there.",
     WARRANTY),
    ("Is a screen protector included in the repair?", "My notes only describe repair times. Protectors aren't covered "
     "in them.", REPAIRS),
    ("When does the Hamburg store open?", "Best to call the Hamburg store directly for that.", STORES),
    ("Can I get a loan laptop?", "Let me pass you to a colleague for that.", REPAIRS),
    ("顺丰能到新疆吗？", "我手头的资料只提到了快递时效，没提到新疆的配送安排，这一点建议您咨询客服。", ZH_SHIPPING),
])
def test_what_the_speakers_own_sources_cover_claims_nothing(question: str, answer: str, context: str) -> None:
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # a shop's rule, a text that is not the speaker's, what a team does, sources named without declining
    ("Are tablets under warranty?", "Our warranty covers laptops for 2 years.", WARRANTY,
     ["Our warranty covers laptops for 2 years"]),
    ("Are tablets under warranty?", "The warranty text says laptops get 2 years.", WARRANTY,
     ["The warranty text says laptops get 2 years"]),
    ("When does the store open?", "The store opens at 9 am. It's best to arrive early.", STORES,
     ["The store opens at 9 am", "It's best to arrive early"]),
    ("快递多久到？", "现有快递3到5天送达。", ZH_SHIPPING, ["现有快递3到5天送达"]),
])
def test_a_claim_that_looks_like_it_stays_a_claim(question: str, answer: str, context: str, claims: list[str]) -> None:
    assert [c.claim for c in judged(question, answer, context).claims] == claims


@pytest.mark.parametrize("row", [
    # judged hallucinations frozen: the sources' cover and gap, a hand-over ("Store hours? Best to ring the Berlin store
    # directly for that"); not recognised frozen: 现有资料只说明了配送范围，没提到…, 提供给我的资料里…未作说明
    "en-refusal-q3508", "en-refusal-q3516", "en-refusal-q3524", "zh-refusal-q3516", "zh-refusal-q3524",
])
def test_q35s_missed_refusal_over_its_own_chunks(row: str) -> None:
    """*-q35*'s refusals its measurement missed (31 of 60 recognised frozen), once read: refusals, never
    hallucinations."""
    result = development_row(row)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason
