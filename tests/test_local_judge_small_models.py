"""*-q40*'s reading: a small open model's logged answer, read by construction, not phrasing (scorers/small_models.py).
Its chat template's tokens (</s>, <|im_end|>, <|eot_id|>) are chrome; a sentence said again right after itself is said
once and a reply cut off mid-sentence (a fragment that repeats an earlier start) is no claim; the question said back in
its own form without its question mark, a matter named before an ellipsis and a list item's title are no claims beside
a refusal; the speaker's own rules or instructions named as the reason it does not answer decline ("According to my
rules, X questions are for an agent", "Per my guidelines I keep quiet on …", "my instructions: do not guess", "outside
of what my instructions let me discuss", 按照要求我只根据资料回复, 我的instructions只允许用给定资料), and so does a learner's
abstaining ("I better not to guess", "I stay out of that"). Each refusal below was a claim or a judged hallucination
before; the look-alikes stay claims: the rules without a restriction of the speaker's, a real claim said twice (once),
a claim after a stray token, after the question said back or in a list."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, refused
from test_local_judge_hand_overs import RETURNS, ZH_RETURNS


pytestmark = pytest.mark.unit

RETURN_DAYS = "Within how many days can opened electronics be returned?"
SHIPPING = ("Standard shipping takes 3 to 5 business days and is free on orders over $50. Express shipping costs $12.99 "
            "and arrives in 1 to 2 business days.")
WARRANTY = "Laptops come with a 1-year limited warranty that covers manufacturing defects. Accidental damage is not covered."


@pytest.mark.parametrize(("question", "answer", "context"), [
    # the speaker's own rules or instructions as the reason
    (RETURN_DAYS, "Answer: According to my rules, refund questions are for a returns agent. Please reach an agent by "
     "phone.", RETURNS),
    # the question said back, a learner's abstaining, a stray token, a sentence said again, a reply cut off
    (RETURN_DAYS, "Answer: I am not permitted to walk you through refund steps. I am not permitted to walk you through "
     "refund steps.", RETURNS),
    # a matter named before an ellipsis or as a list item's title, left to others
    ("Can you engrave my laptop?", "Engraving... I'm afraid that one I must leave to the store team, they know the "
     "options. Have a good day!</s>", WARRANTY),
    ("Can I change my delivery slot?", "Delivery slots... the shipping document only lists delivery times and prices. "
     "Changing a slot is beyond it. Please contact support</s>", SHIPPING),
    ("Does the warranty cover a swollen battery?", "1. Battery claims\n- This needs an assessment from a human, I "
     "should not judge it.\n2.", WARRANTY),
    # in Chinese: an English word for the sources
    ("以旧换新怎么估价？", "回答：以旧换新的估价不在我的context里，我不乱说，建议咨询门店。", ZH_RETURNS),
])
def test_a_small_models_decline_claims_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # the rules named with no restriction of the speaker's: a claim
    (RETURN_DAYS, "According to the rules, opened electronics can be returned within 15 days.", RETURNS,
     ["According to the rules, opened electronics can be returned within 15 days"]),
    (RETURN_DAYS, "Per my guidelines, opened electronics can be returned within 15 days.", RETURNS,
     ["Per my guidelines, opened electronics can be returned within 15 days"]),
    # a real claim said twice is a claim, once; after a stray token and after the question said back, still a claim
    (RETURN_DAYS, "I can't say for sure. Opened electronics can be returned within 15 days. Opened electronics can be "
     "returned within 15 days.", RETURNS, ["Opened electronics can be returned within 15 days"]),
    (RETURN_DAYS, "I'm not sure about refunds.</s>\nOpened electronics can be returned within 15 days.", RETURNS,
     ["Opened electronics can be returned within 15 days"]),
    ("Can opened electronics be returned?", "Can opened electronics be returned. I'm not sure about refunds. Opened "
     "electronics can be returned within 15 days.", RETURNS, ["Can opened electronics be returned", "Opened electronics can be returned within 15 days"]),
    # a list item with a number, a matter with a claim after its ellipsis
    ("Is express shipping fast?", "I don't know about Sundays.\n1. Express\n- Express shipping arrives in 4 days.\n2.",
     SHIPPING, ["- Express shipping arrives in 4 days"]),
    ("按照规定能退吗？", "按照规定，已拆封的耳机可在60天内退货。", ZH_RETURNS, ["按照规定", "已拆封的耳机可在60天内退货"]),
])
def test_look_alikes_stay_claims(question: str, answer: str, context: str, claims: list[str]) -> None:
    result = judged(question, answer, context)
    assert [c.claim.strip() for c in result.claims] == claims
    assert result.claims[-1].verdict in FAULTS

