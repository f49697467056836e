"""Clauses of channels, process and courtesy claim nothing new (scorers/nothing_new.py): beside a refusal, a hand-off or
a cue of declining they are no claims, and an answer of them only is a refusal; a clause that answers in the
question's words, or names a fee, a time, a service or a rule of its own, stays a claim."""

from __future__ import annotations

import pytest
from helpers.local_judging import judged

from ragpulse.scorers.nothing_new import says_nothing_new
from ragpulse.scorers.text import clause

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

SHIPPING = "We ship to the United Kingdom, Canada and Australia. Express delivery takes 2 business days."
ZH_SHIPPING = "我们支持寄往香港和澳门，普通快递3到5天送达。"


@pytest.mark.parametrize(("question", "text", "nothing_new"), [
    ("Do you ship to Canada?", "All our agents are currently busy", True),
    ("Can I return an engraved watch?", "Our returns desk can check that for you", True),
    ("What are the opening hours of your Munich store?", "The Store Locator page lists every branch with its current times",
     True),
    ("积分可以转给家人吗？", "积分转赠请咨询会员中心", True),
    ("能寄到香港吗？", "当前坐席繁忙", True),
    # a channel's name and the question's words in another form ("expiry" for "expire")
    ("Do my loyalty points expire if I don't shop for a year?", "Expiry rules for points sit with our Rewards team", True),
    # answers in the question's words, claims of their own
    ("Do you ship to Canada?", "We ship to Canada", False),
    ("Can I return an engraved watch?", "Engraved watches cannot be returned", False),
    ("Can I return an engraved watch?", "Returns are free within 30 days", False),
    ("Is the Berlin store open on Sundays?", "so it isn't open on Sundays", False),
    ("能寄到香港吗？", "可以寄到香港，运费20元", False),
    ("退货运费谁出？", "运费由我们承担", False),
    ("能寄到台湾吗？", "台湾目前还寄不了", False),
    ("Did they trade him?", "I know they used him when he was on the team", False),  # a team named by no channel
])
def test_a_clause_of_channels_and_process_claims_nothing_new(question: str, text: str, nothing_new: bool) -> None:
    assert says_nothing_new(clause(text), clause(question)) is nothing_new


@pytest.mark.parametrize(("question", "answer", "context"), [
    ("Do you ship to Canada?", "Bot: Okay... so, um, shipping to Canada. Right. Let me, uh, transfer you to someone on "
     "our international desk who can go through that with you. Please hold... [transfer initiated] ... All our agents "
     "are currently busy. Your call is important to us.", SHIPPING),
    ("能寄到香港吗？", "机器人：好的，您想寄到香港……嗯……这个问题呢，我帮您转接人工，请稍候……[转接中]……当前坐席繁忙，请您继续等待，或稍后再拨。",
     ZH_SHIPPING),
])
def test_a_transcript_of_holds_and_transfers_is_a_refusal(question: str, answer: str, context: str) -> None:
    """Before, each clause was judged as a claim: both answers hallucinations."""
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


def test_an_invented_service_beside_a_transfer_is_still_judged() -> None:
    """A hand-off beside a claim of its own keeps that claim judged (scorers/handoffs.py); the speaker's transfer
    ("Let me transfer you to …") is a deferral since *-q35*'s reading (scorers/deferrals.py), no claim."""
    result = judged("Do you ship to Canada?", "Let me transfer you to our international desk. We also offer free home "
                    "pickup for every parcel we ship to Canada.", SHIPPING)
    assert (result.refusal, result.hallucination) == (False, True)
    assert [(c.claim, c.verdict) for c in result.claims] == [
        ("We also offer free home pickup for every parcel we ship to Canada", "not_in_context")]
