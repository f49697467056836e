"""*-q42*'s reading: an answer written for a speech engine (SSML) read as what is spoken (scorers/speech_markup.py).
Its tags are no words: a refusal wrapped in <speak>, <break/>, <p>/<s>, <emphasis> or <prosody> claims nothing, a
supported claim with <say-as> or <sub> around its number or name is supported, an invented one is still flagged, and
a "<" of ordinary text or HTML stays as written. Each refusal below was a claim or a judged hallucination before."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, refused
from test_local_judge_refusal_sets import KNOWLEDGE

from ragpulse.scorers.speech_markup import spoken

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("question", "answer", "chunk"), [
    ("Can I pay with a bank transfer?", '<speak>Hmm, <emphasis level="moderate">bank transfers</emphasis>. <break '
     'time="200ms"/> I\'d rather not guess on payment options. Stay on the line for a colleague.</speak>', "payment"),
    ("Can I pay with a bank transfer?", '<speak>Sure, <sub alias="bank transfer">bank transfers</sub>.<break '
     'time="200ms"/> I\'m not able to confirm that on this call.</speak>', "payment"),
    ("笔记本电脑进水了能保修吗？", '<speak>您好，<break time="300ms"/>进水能不能保修需要售后同事来判断。<break time="300ms"/>'
     '请说"人工"。</speak>', "zh_warranty"),
    ("发票能开到公司抬头吗？", "<speak><s>您好。</s><s>公司抬头的问题我这边无法回答，请咨询人工客服。</s>", "zh_invoice"),
])
def test_an_ssml_refusal_claims_nothing(question: str, answer: str, chunk: str) -> None:
    assert refused(judged(question, answer, KNOWLEDGE[chunk]))


@pytest.mark.parametrize(("question", "answer", "chunk", "claim"), [
    ("How long is a gift card valid?", '<speak>Gift cards are valid for <say-as interpret-as="cardinal">3</say-as> '
     "years.</speak>", "gift", "Gift cards are valid for 3 years"),
    ("How much is express shipping?", '<speak><prosody rate="slow">Express shipping costs <say-as interpret-as='
     '"currency">$12.99</say-as>.</prosody></speak>', "shipping", "Express shipping costs $12.99"),
    ("加急快递多少钱？", '<speak>顺丰加急需另付<say-as interpret-as="cardinal">15</say-as>元。</speak>', "zh_shipping",
     "顺丰加急需另付15元"),
])
def test_an_ssml_supported_claim_is_supported(question: str, answer: str, chunk: str, claim: str) -> None:
    result = judged(question, answer, KNOWLEDGE[chunk])
    assert ([(c.claim, c.verdict) for c in result.claims], result.hallucination) == ([(claim, "supported")], False)


def test_sub_keeps_the_written_form() -> None:
    """<sub alias="X">Y</sub>: Y is what was written (and what the chunk holds), X only how to say it."""
    assert spoken('<speak>Our <sub alias="Berlin store">Berlin</sub> store opens at 9 am.</speak>') == (
        "Our Berlin store opens at 9 am.")
    result = judged("When does the Berlin store open?", '<speak>Our <sub alias="Berlin store">Berlin</sub> store is '
                    "open Monday to Saturday.</speak>", KNOWLEDGE["stores"])
    assert [c.verdict for c in result.claims] == ["supported"]


def test_an_ssml_unsupported_claim_is_still_flagged() -> None:
    result = judged("How long is a gift card valid?", '<speak>Gift cards are valid for <say-as interpret-as="cardinal">'
                    '10</say-as> years.<break time="300ms"/> Say "agent" for more.</speak>', KNOWLEDGE["gift"])
    assert [(c.claim, c.verdict in FAULTS) for c in result.claims][:1] == [("Gift cards are valid for 10 years", True)]
    assert result.hallucination


@pytest.mark.parametrize("answer", [
    "Orders < $50 pay shipping; orders > $50 ship free.",
    "Use <b>free</b> shipping on <p>orders over $50</p> and <s>old</s> prices.",
    "Chat tokens end a turn</s>",
    "The <language> tag and a <marker> are not speech markup.",
])
def test_ordinary_text_and_html_stay_as_written(answer: str) -> None:
    assert spoken(answer) is answer


def test_tags_read_as_spoken() -> None:
    assert spoken('<speak><p>Hi.<break time="300ms"/> Say <emphasis level="strong">two</emphasis>.</p>'
                  '<audio src="https://example.com/tone.mp3"/><mark name="m1"/><amazon:effect name="whispered">'
                  "Bye</amazon:effect></speak>") == "\nHi.  Say two.\nBye"
