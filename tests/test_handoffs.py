"""Answers that hand the question on and say nothing else are refusals (scorers/handoffs.py); a hand-off beside a claim
keeps every clause a claim, judged as before."""

from __future__ import annotations

import pytest
from helpers.local_judging import judged

from ragpulse.scorers.handoffs import hands_off
from ragpulse.scorers.text import clause

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

RETURNS = "Return shipping is free for defective items. Unopened items can be returned within 30 days of delivery."
ZH_RETURNS = "质量问题退货由我方承担运费。未拆封商品自签收之日起30天内可无理由退货。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    ("How long is a gift card valid?", "Hello,\n\nThank you for your message regarding gift card validity. Your query has "
     "been forwarded to the relevant department, who will contact you directly.\n\nBest regards,\nCustomer Service", RETURNS),
    ("Do you deliver to the United Kingdom?", "I'd like to be careful with destination-specific questions. Our shipping "
     "team is the right place to confirm delivery to the UK.", RETURNS),
    ("how long do I have to send back an unopened laptop?", "Return windows are one of those things I'd hate to get wrong. "
     "Our Returns team can check your order and tell you exactly how long you've got.", RETURNS),
    ("Is return shipping free if the product is defective?", "Dear Sir/Madam, for return shipping charges kindly get in "
     "touch with our returns desk, they will guide you properly on the same.", RETURNS),
    ("因为质量问题退货，运费谁出？", "亲，运费的问题需要售后同事帮您核实哦，麻烦点一下订单页的「联系售后」呢～", ZH_RETURNS),
    ("可以用微信支付吗？", "支付方式的问题建议您在付款页面确认一下哦，我就不替您下结论啦。", ZH_RETURNS),
])
def test_an_answer_that_only_hands_the_question_on_is_a_refusal(question: str, answer: str, context: str) -> None:
    """Before, with no clause that declines in words, each was judged as claims: the English ones hallucinations."""
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "verdict"), [
    # a claim beside the hand-off: every clause a claim, as before, and the invented one is faulted
    ("Returns are free for 90 days. Our returns team can check your order for you.", "not_in_context"),
    ("退货90天内都免运费，具体需要售后同事帮您核实一下。", "not_in_context"),
])
def test_a_hand_off_beside_a_claim_keeps_the_claim_judged(answer: str, verdict: str) -> None:
    context = ZH_RETURNS if not answer.isascii() else RETURNS
    result = judged("Is return shipping free?" if answer.isascii() else "退货运费谁出？", answer, context)
    assert not result.refusal and verdict in [c.verdict for c in result.claims], result.groundedness_reason


@pytest.mark.parametrize(("text", "hands"), [
    ("Your query has been forwarded to the relevant department", True),
    ("I'll pass you over to the service centre", True),
    ("price adjustment requests are handled by our orders team", True),
    ("您反馈的保修问题已记录", True),
    ("Our support team can go over the payment options for your order", True),
    ("it might also be worth checking with UK customs directly", True),
    ("the shipping options + prices show up at checkout", True),
    ("For student pricing, your best options are:", True),
    ("可以在官网或App里找找联系方式哦", True),
    # what is sent, not who answers: a claim; and a number of its own is never a hand-off
    ("we'll email you a prepaid label", False),
    ("Our team will check your order within 24 hours", False),
    ("Returns are free at any store", False),
])
def test_what_a_hand_off_is(text: str, hands: bool) -> None:
    assert hands_off(text, bool(clause(text).quantities)) is hands


@pytest.mark.parametrize("text", [
    # what happens to an order or points, not the question: claims
    "会员积分将记录在账户中", "订单已提交后可以取消", "The case has been raised with the manufacturer",
])
def test_what_is_no_hand_off(text: str) -> None:
    assert not hands_off(text, False)


def test_a_number_the_question_gave_is_none_of_the_hand_offs_own() -> None:
    """"800 points" says back the question's "about 800": the clause hands off all the same; 900 would be its own."""
    question = "Do loyalty points expire? I've got about 800 sitting in my account."
    for points, refusal in ((800, True), (900, False)):
        answer = (f"Sorry, I can't tell you whether points expire. It'd be worth checking with customer support so you "
                  f"don't risk losing any of your {points} points.")
        assert judged(question, answer, RETURNS).refusal is refusal
