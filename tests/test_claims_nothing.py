"""The learned reading of clauses that claim nothing and the local judge's gate on it (judging/claims_nothing.py, issue
44): its shipped model, its features' stability, a clause without its negations, refusals in words no hand reading
lists that it reads as refusals, and claims that look like declines, negated claims among them, that stay claims.
No sentence here is taken from a refusal set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.local_judging import judged, refused, verdicts

from ragpulse.judging.claims_nothing import BITS, SHAPES, affirmed, indices, shipped

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

KNOWLEDGE = json.loads((Path(__file__).parent / "data" / "refusals_kb.json").read_text(encoding="utf-8"))


def test_the_shipped_model() -> None:
    model = shipped()
    assert (model.version, model.threshold, model.bits, len(model.weights)) == (
        "claims_nothing.v1", 0.9, 16, (1 << 16) + SHAPES) and BITS == 16


def test_a_clauses_features_are_the_same_in_every_process() -> None:
    """Hashed with CRC-32 (str's hash is salted per process): the shipped weights' indices."""
    assert indices("No.") == [65491, 37700, 41938, 53972, 65491, 6272, 19101, 2778, 22937, 6987, 64454, 49842, 31736,
                              28034, 15161, 65536, 65539]


@pytest.mark.parametrize(("clause", "plain"), [
    ("I can't find that in my notes.", "I can find that in my notes."),
    ("There is no student discount", "There is a student discount"),
    ("Gift cards cannot be exchanged for cash.", "Gift cards can be exchanged for cash."),
    ("I wish I could help with that.", "I could help with that."),
    ("Express shipping is not available on weekends", "Express shipping is available on weekends"),
    ("礼品卡不能兑换现金", "礼品卡能兑换现金"), ("这个问题我没办法回答", "这个问题我能回答"), ("暂时没有这方面的信息", "暂时有这方面的信息"),
    ("Returns are free within 30 days.", "Returns are free within 30 days."),
])
def test_a_clause_without_its_negations(clause: str, plain: str) -> None:
    assert affirmed(clause) == plain


@pytest.mark.parametrize(("answer", "claims", "said", "refuses"), [
    # beside a refusal a hand reading found: a clause that declines, and one that says what the service does
    ("I can't check that. Sorry, that's beyond what I was given.", ["Sorry, that's beyond what I was given"],
     ["uncertain"], True),
    ("I can't check your inbox, but our team can reset it over live chat.", ["but our team can reset it over live chat"],
     ["not_in_context"], False),
    ("Sorry, that's beyond what I was given.", ["Sorry, that's beyond what I was given"], ["uncertain"], True),
    # every claim supported: the context holds what it says
    ("Sorry, that's beyond what I was given.", ["Sorry, that's beyond what I was given"], ["supported"], False),
    # one contradicted: the context answers it
    ("Sorry, that's beyond what I was given.", ["Sorry, that's beyond what I was given"], ["contradicted"], False),
    # five claims: more than a refusal says
    ("Sorry, that's beyond what I was given.", ["Sorry, that's beyond what I was given"] * 5, ["uncertain"] * 5, False),
    # a negated fact: it names no one's knowing (a clause of the benchmarks' read so by the model alone)
    ("There is no student discount.", ["There is no student discount"], ["uncertain"], False),
    ("没有关于汞的规定。", ["没有关于汞的规定"], ["not_in_context"], False),
    # no cue of declining in the answer (scorers/refusal_gate.answer_may_refuse)
    ("Our returns team will confirm it within 2 days.", ["Our returns team will confirm it within 2 days"],
     ["not_in_context"], False),
])
def test_the_gates_conditions(answer: str, claims: list[str], said: list[str], refuses: bool) -> None:
    assert shipped().refuses(answer, claims, said, beside_a_refusal=answer.startswith("I can't check")) is refuses


@pytest.mark.parametrize(("question", "answer", "chunk"), [
    ("How long is the warranty on tablets?", "Tablet warranties aren't in what I was given to work with.", "warranty"),
    ("Is there a student discount?", "Student discounts aren't in what I've been set up with.", "price"),
    ("Can I trade in a smartwatch?", "No word on smartwatches in what I've got, I'm afraid.", "tradein"),
])
def test_a_refusal_no_hand_reading_lists(question: str, answer: str, chunk: str) -> None:
    """Each a claim, and a hallucination, to the hand readings alone; the gate reads it whole."""
    assert refused(judged(question, answer, KNOWLEDGE[chunk]))


@pytest.mark.parametrize(("question", "answer", "chunk", "said"), [
    # a fact negated, over a chunk that does not hold it: a claim judged, never a refusal
    ("Is there a student discount?", "There is no student discount.", "returns", ["uncertain"]),
    ("Do you deliver on weekends?", "Express shipping is not available on weekends.", "returns", ["not_in_context"]),
    ("Is weekend delivery offered?", "Weekend delivery isn't offered.", "returns", ["uncertain"]),
    ("Are sale items free to return?", "Returns aren't free for sale items.", "shipping", ["uncertain"]),
    ("Are there restocking fees?", "There are no restocking fees.", "shipping", ["uncertain"]),
    ("Can I pay with checks?", "Cheques aren't accepted.", "returns", ["not_in_context"]),
    ("Can I cash out a gift card?", "礼品卡不能兑换现金。", "zh_shipping", ["not_in_context"]),
    ("会员费能退吗？", "会员费不能退。", "zh_shipping", ["not_in_context"]),
    ("周末发货吗？", "周末不发货。", "zh_returns", ["uncertain"]),
    # what the speaker likes or did, and the service's own terms
    ("Do gift cards expire?", "I'm not a fan of gift cards either.", "returns", ["not_in_context"]),
    ("Do gift cards expire?", "I haven't ordered from the outlet store lately.", "returns", ["not_in_context"]),
    ("纸质发票能开专票吗？", "本助手不收取开票费用。", "zh_returns", ["not_in_context"]),
    # what the asker needs, who will answer, where the terms are: claims with no cue of declining
    ("Can I return my tablet?", "You'll need your order number to start a return.", "stores", ["not_in_context"]),
    ("耳机可以退货吗？", "退货需要提供订单号。", "zh_shipping", ["uncertain"]),
    ("Can I return my tablet?", "Our returns team will confirm it within 2 days.", "stores", ["not_in_context"]),
    ("Which delivery is fastest?", "Express would be the quickest option.", "stores", ["not_in_context"]),
    ("How do I ship to Canada?", "You'd need to check the box at checkout to ship to Canada.", "stores",
     ["not_in_context"]),
    ("How long do I have to return it?", "Your order page will have the terms that apply to you.", "stores",
     ["not_in_context"]),
    ("How long do I have to return it?", "I'd recommend getting the return conditions from our returns desk.", "stores",
     ["not_in_context"]),
])
def test_a_claim_that_looks_like_a_decline_stays_a_claim(question: str, answer: str, chunk: str,
                                                         said: list[str]) -> None:
    result = judged(question, answer, KNOWLEDGE[chunk])
    assert (result.refusal, verdicts(result)) == (False, said), result.groundedness_reason
