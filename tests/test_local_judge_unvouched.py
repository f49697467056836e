"""*-q39*'s reading: a decline by what the speaker will not vouch for, and the advice beside it, read by construction,
not phrasing. "I'd rather not state/cite X" and "I'm not going to list X that I can't stand behind" decline; "I'd
recommend getting X from <team> rather than from me" defers; beside a refusal, where the answer is ("<a page or a team>
will have the figure that applies to you") and the asker's next step ("If …, requesting a new one is the quickest fix")
claim nothing. Each refusal below was a claim or a judged hallucination before; the same sentences without the refusal,
or without "rather than from me", stay claims. In Chinese, a reasoning model's reply: its sources named as the basis
alone in a clause (根据提供的上下文，…) and its "思考过程：" label are no claims beside a refusal; with a claim after them the
claims stay as they were."""

from __future__ import annotations

import pytest
from helpers.local_judging import judged, refused
from test_local_judge_hand_overs import RETURNS, ZH_RETURNS


pytestmark = pytest.mark.unit

RETURN_DAYS = "Within how many days can opened electronics be returned?"
PASSWORDS = "To reset your password, choose Forgot password on the login page and follow the emailed link."


@pytest.mark.parametrize(("question", "answer", "context"), [
    # what the speaker will not state or vouch for, and where the answer is
    (RETURN_DAYS, "I'd rather not state a return window. Your order page or the returns team will have the terms that "
     "apply to you.", RETURNS),
    (RETURN_DAYS, "I'd rather not cite a deadline here. The returns desk will have the details for your order.", RETURNS),
    (RETURN_DAYS, "I'd rather not guess. Your order page or the returns team will have the terms that apply to you.",
     RETURNS),
    (RETURN_DAYS, "I'm not going to list return requirements that I can't stand behind. Our returns desk can help.",
     RETURNS),
    (RETURN_DAYS, "I will not state return requirements which I cannot verify. Our returns desk can help.", RETURNS),
    # the matter got from someone else instead of the speaker
    (RETURN_DAYS, "I'd recommend getting the return conditions from our returns desk rather than from me. They see your "
     "order.", RETURNS),
    (RETURN_DAYS, "I'd recommend getting the return conditions from a store colleague rather than me.", RETURNS),
    # the asker's next step beside a refusal
    ("How long does the reset link last?", "I'd rather not say. If the email never arrives, requesting another link is "
     "the fastest way.", PASSWORDS),
    # a reasoning model's Chinese reply: its sources as the basis, its reasoning's label
    ("耳机拆封后还能退货吗？", "根据提供的上下文，以旧换新不在我能参考的内容范围内，请您咨询门店。", ZH_RETURNS),
    ("耳机拆封后还能退货吗？", "根据上下文，以旧换新不在我能参考的内容范围内。", ZH_RETURNS),
    ("耳机拆封后还能退货吗？", "思考过程：检索到的是退货规则，和以旧换新完全不相关。\n\n最终回答：以旧换新超出了我手头资料的范围，"
     "建议您联系客服。", ZH_RETURNS),
])
def test_a_decline_and_its_advice_claim_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # the advice alone, a recommendation without "rather than from me": claims
    ("How long does the reset link last?", "If your link no longer works, you can request a new one from the login page.",
     PASSWORDS, ["If your link no longer works, you can request a new one from the login page"]),
    ("How long does the reset link last?", "If the email never arrives, requesting another link is the fastest way.",
     PASSWORDS, ["If the email never arrives, requesting another link is the fastest way"]),
    (RETURN_DAYS, "Your order page will have the terms that apply to you.", RETURNS,
     ["Your order page will have the terms that apply to you"]),
    (RETURN_DAYS, "I'd recommend getting the return conditions from our returns desk.", RETURNS,
     ["I'd recommend getting the return conditions from our returns desk"]),
    ("耳机拆封后还能退货吗？", "根据提供的上下文，已拆封的耳机在配件齐全时可在14天内退货。", ZH_RETURNS,
     ["根据提供的上下文", "已拆封的耳机在配件齐全时可在14天内退货"]),
    ("耳机拆封后还能退货吗？", "思考过程：已拆封的耳机可在14天内退货。", ZH_RETURNS, ["思考过程：已拆封的耳机可在14天内退货"]),
])
def test_advice_without_a_decline_stays_a_claim(question: str, answer: str, context: str, claims: list[str]) -> None:
    assert [c.claim.strip() for c in judged(question, answer, context).claims] == claims

