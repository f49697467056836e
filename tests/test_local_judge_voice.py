"""*-q42*'s voice reading: a phone line's own words beside a refusal claim nothing. A menu's prompt (a key or a word to
say and whom it reaches: "press or say three for …", 请按2键, 或者说"…"), a hold or a transfer under way ("Bear with me
while I transfer your call", 请稍候, 请不要挂机), a topic put off the speaker's list and hours not had are no claims; each
refusal below was a claim or a judged hallucination before. A key pressed on a device, a word said at checkout or a
number a menu promises stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, refused
from test_local_judge_ssml import KNOWLEDGE

from ragpulse.scorers.chrome import said_by_the_channel

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("question", "answer", "chunk"), [
    # menu prompts beside a refusal
    ("Can I trade in a phone with a cracked back?", "I can't judge trade-in condition over the phone. Press or say "
     "three for our trade-in team.", "tradein"),
    ("Do loyalty points expire?", "<speak>Points expiry isn't something I can confirm on this line.<break time="
     '"300ms"/> Press or say 4 for the rewards desk.</speak>', "loyalty"),
    ("电脑屏幕换一次要多久？", "<speak>维修时长我这边没法确认。<break time=\"300ms\"/>请按<say-as interpret-as=\"cardinal\">2"
     "</say-as>键，或者说\"维修\"。</speak>", "zh_repair"),
    ("会员可以退款吗？", "会员退款的规则我这里不清楚，或者按0转人工。", "zh_member"),
    # transfers and holds
    ("Can I get a loan phone during a repair?", "Loan phone questions are ones I pass along to the repair desk. Bear "
     "with me while I transfer your call.", "repair"),
    ("Can I extend my warranty?", "Warranty extensions aren't something this phone line can quote. Please stay on the "
     "line.", "warranty"),
    ("积分可以转给家人吗？", "积分转赠我没法回答，请按1键，请不要挂机。", "zh_points"),
    ("积分可以转给家人吗？", "<speak>积分转赠这件事我没法回答。<break time=\"300ms\"/>请说\"积分\"，请不要挂机。</speak>",
     "zh_points"),
    # a topic off the list, hours not had
    ("Can I pay by cheque?", "Cheques aren't on my list of topics for this call.", "payment"),
    ("Is the Munich store open on holidays?", "<speak>The Munich store isn't one I have holiday hours for.</speak>",
     "stores"),
])
def test_a_voice_refusal_claims_nothing(question: str, answer: str, chunk: str) -> None:
    assert refused(judged(question, answer, KNOWLEDGE[chunk]))


@pytest.mark.parametrize("text", [
    "Press or say three for our trade-in team", "Say 'rewards' at any time", 'Say "agent" to speak with someone',
    "press 2 for the returns department", "请按2键", '或者说"维修"', "按3键转维修部门", "或者按0转人工", "请不要挂机",
])
def test_a_menu_prompt_or_a_hold_is_the_channels(text: str) -> None:
    assert said_by_the_channel(text)


@pytest.mark.parametrize("text", [
    "Press the power button for 10 seconds to reset", "Say 'express' at checkout", "Press 1 to get free shipping",
    "按住电源键10秒", "长按3秒即可重启", "按3次电源键重启",
])
def test_a_key_pressed_on_a_device_is_no_menu(text: str) -> None:
    assert not said_by_the_channel(text)


def test_a_claim_beside_a_menu_prompt_is_still_flagged() -> None:
    """Without a refusal the prompt is read as before (unfaulted), the invented fee before it still flagged."""
    result = judged("Is there a fee to return opened headphones?", "Opened headphones carry a $15 restocking fee. "
                    "Press two for our returns team.", KNOWLEDGE["returns"], KNOWLEDGE["fee"])
    assert [(c.claim, c.verdict in FAULTS) for c in result.claims] == [
        ("Opened headphones carry a $15 restocking fee", True), ("Press two for our returns team", False)]
    assert result.hallucination


def test_a_device_key_is_a_claim() -> None:
    """"Press the power button for 10 seconds to reset" beside a refusal: a step of the world, judged."""
    result = judged("How do I reset my password?", "I can't see your account. Press the reset button for 10 seconds "
                    "to restore the phone.", KNOWLEDGE["password"])
    assert [c.claim for c in result.claims] == ["Press the reset button for 10 seconds to restore the phone"]
    assert not result.refusal
