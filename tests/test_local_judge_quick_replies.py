"""*-q37*'s reading: a line of quick replies under an answer is interface, not a claim. Chips led by a pointing emoji or
an arrow, or two or more apart by "|" ("👉 Retry", "Yes please | Browse laptops"), buttons in 【…】 led so or two or more
(【重试】【查看订单】): blanked, one character for one (scorers/chrome.py). A line that offers a person ("Talk to an
agent", 【转人工】) stays for the refusal readings, which read it as a hand-over as before; a table's row, a sentence, a
number or a lone 【…】 headline stays as written."""

from __future__ import annotations

import pytest
from helpers.local_judging import judged

from ragpulse.scorers.chrome import blank_marks

pytestmark = pytest.mark.unit

RETURNS = "Opened electronics can be returned within 14 days if all accessories are included."
ZH_RETURNS = "未拆封商品自签收之日起30天内可无理由退货。已拆封的耳机在配件齐全的情况下，可在14天内退货。"


@pytest.mark.parametrize("line", [
    "👉 Retry", "👉 Start a return | Browse laptops", "Yes please | Browse laptops", "➡️ Track order | Maybe later",
    "👉【申请退货】【查看订单】", "【重试】【查看订单】", "  👇 Try again  ",
])
def test_a_line_of_quick_replies_is_blanked(line: str) -> None:
    answer = f"Here you go.\n{line}\nThanks"
    assert blank_marks(answer) == "Here you go.\n" + " " * len(line) + "\nThanks"


@pytest.mark.parametrize("line", [
    "👉 Start a return | Talk to an agent", "👉【申请售后】【转人工】", "【转人工】", "| Plan | Price |", "Plan | Price is 5",
    "👉 Returns take 14 days.", "【退货政策】", "Returns are free within 14 days",
])
def test_a_hand_over_a_table_a_sentence_or_a_headline_stays(line: str) -> None:
    answer = f"Here you go.\n{line}"
    assert blank_marks(answer) == answer


def test_chips_under_a_refusal_claim_nothing() -> None:
    result = judged("Is the console in stock?", "Stock checks are something I can't do from here, sorry.\n"
                    "👉 Yes please | Browse consoles", RETURNS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


def test_chips_under_an_answer_leave_its_claim_alone() -> None:
    result = judged("Can I return opened headphones?", "Opened electronics can be returned within 14 days 🎧\n"
                    "👉 Start a return | Browse headphones", RETURNS)
    assert [(c.claim, c.verdict) for c in result.claims] == [
        ("Opened electronics can be returned within 14 days", "supported")]


def test_buttons_under_a_chinese_refusal_claim_nothing() -> None:
    result = judged("耳机可以换货吗？", "换货的事小助手不清楚呢～\n【重试】【查看订单】", ZH_RETURNS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


def test_hand_over_chips_under_a_refusal_are_said_around_it() -> None:
    # the line stays (it offers a person), and beside a refusal its chips claim nothing
    result = judged("Do gift cards expire?", "Gift card expiry is something I can't tell you, sorry.\n"
                    "👉 Gift card FAQ | Live chat", RETURNS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason

